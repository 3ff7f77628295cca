"""`m1nd help [COMMAND...]`: the same text as `m1nd [COMMAND...] --help`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from m1nd.cli.common import reporting


def help_command(
    ctx: typer.Context,
    command: Annotated[Optional[list[str]], typer.Argument(help="A command (and subcommand), e.g. `sweep` or `roster add`.", metavar="[COMMAND]...")] = None,
) -> None:
    """Show the help of m1nd, or of one command."""
    from m1nd.errors import UsageError

    root_ctx = ctx.find_root()
    current = root_ctx.command
    names = ["m1nd"]
    parent = root_ctx
    with reporting(False):
        for name in command or []:
            sub = current.get_command(parent, name) if hasattr(current, "get_command") else None
            if sub is None:
                raise UsageError(f"no command {' '.join(names[1:] + [name])!r} (m1nd help lists them)")
            current = sub
            names.append(name)
            parent = type(parent)(current, info_name=name, parent=parent)
    if current is root_ctx.command:
        typer.echo(root_ctx.get_help())
        return
    typer.echo(current.get_help(parent))
