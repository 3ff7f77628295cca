"""`m1nd show ID`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from m1nd.cli import output
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import Home, Json, NoPager, Roots, Spool


def show(
    letter_id: Annotated[str, typer.Argument(help="A letter id, or a unique prefix of at least 4 hex digits.", metavar="ID")],
    json_out: Json = False,
    no_pager: NoPager = False,
    reveal: Annotated[bool, typer.Option("--reveal", help="Print a held letter whole (on a terminal only: "
                                         "it may carry a secret).")] = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Show one letter whole: every field, its box, its fate, what it answers, its replies.

    Examples:

      m1nd show 4a8965e74b53        by full id

      m1nd show 4a89 --json         by a unique prefix, as one JSON object

      m1nd show 4a89 --reveal       a held letter whole, on this terminal
    """
    from m1nd.readmodel import open_model
    from m1nd.show import show as find, show_json

    with reporting(json_out):
        if reveal and (json_out or not output.is_tty(sys.stdout)):
            from m1nd.errors import UsageError

            raise UsageError("--reveal prints a held letter on a terminal only (never with --json, never "
                             "into a pipe or a file)")
        run = open_run(home, spool, roots)
        model = open_model(run)
        for note in model.notes:
            output.warn(note)
        from m1nd.readmodel import damage_reported

        try:
            with damage_reported(run):
                if json_out:
                    doc = show_json(model, letter_id)
                else:
                    found = find(model, letter_id, reveal=reveal)
        finally:
            model.close()
    if json_out:
        output.emit_json(doc)
        return
    from m1nd.cli import render

    with output.paged(not no_pager) as stream:
        render.show_view(found, stream)
