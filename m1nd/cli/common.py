"""Glue every command shares: open the run, turn M1ndError into exit codes."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import typer

from m1nd.cli import output
from m1nd.errors import M1ndError


@contextmanager
def reporting(as_json: bool) -> Iterator[None]:
    """Print an M1ndError as one line (or the JSON envelope) and exit with its code."""
    try:
        yield
    except M1ndError as exc:
        output.error(exc, as_json)
        raise typer.Exit(exc.exit_code) from None


def open_run(home, spool, roots, tolerant: bool = False):
    from m1nd.run import open_run as _open

    return _open(home=home, spool=spool, extra_roots=roots or [], tolerant=tolerant)
