"""`m1nd demo`."""

from __future__ import annotations

import sys

import typer


def _echo(text: str, flush: bool = False) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def demo(keep: bool = typer.Option(False, "--keep", help="Keep the workspace afterwards and print where it is.")) -> None:
    """Run write → distribute → sweep → box → doctor in a throwaway workspace."""
    from m1nd.demo import run_demo

    raise typer.Exit(run_demo(keep, _echo))
