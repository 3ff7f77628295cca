"""`m1nd show ID`."""

from __future__ import annotations

from typing import Annotated

import typer

from m1nd.cli import output
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import Home, Json, Roots, Spool


def show(
    letter_id: Annotated[str, typer.Argument(help="A letter id, or a unique prefix of at least 4 hex digits.", metavar="ID")],
    json_out: Json = False,
    no_pager: Annotated[bool, typer.Option("--no-pager", help="Never page the output.")] = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Show one letter whole: every field, its box, its fate, what it answers, its replies."""
    from m1nd.readmodel import open_model
    from m1nd.show import show as find, show_json

    with reporting(json_out):
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
                    found = find(model, letter_id)
        finally:
            model.close()
    if json_out:
        output.emit_json(doc)
        return
    from m1nd.cli import render

    with output.paged(not no_pager) as stream:
        render.show_view(found, stream)
