"""`m1nd completion bash|zsh|fish`: a static script for the shell's start-up file.

The script only calls m1nd when you press Tab (with `_M1ND_COMPLETE` set, which
`main` hands to typer's completion); sourcing it runs nothing, so a shell's start-up
costs nothing more."""

from __future__ import annotations

import typer


SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_M1ND_COMPLETE"


def completion(shell: str = typer.Argument(..., metavar="SHELL", help="bash, zsh or fish.")) -> None:
    """Print a shell completion script for m1nd."""
    if shell not in SHELLS:
        raise typer.BadParameter(f"no completion for {shell!r}: choose bash, zsh or fish", param_hint="SHELL")
    from typer._completion_shared import get_completion_script

    typer.echo(get_completion_script(prog_name="m1nd", complete_var=COMPLETE_VAR, shell=shell))

