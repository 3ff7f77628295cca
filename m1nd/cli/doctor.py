"""`m1nd doctor`."""

from __future__ import annotations

import typer

from m1nd.cli import output
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import Home, Json, Now, Roots, Spool


def doctor(
    json_out: Json = False,
    now: Now = None,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Check the spool, boxes, roster and repositories; print the mailbox health."""
    from m1nd.clock import parse_now
    from m1nd.doctor import diagnose

    from m1nd.errors import M1ndError
    from m1nd.readmodel import open_model

    with reporting(json_out):
        moment = parse_now(now)
        run = open_run(home, spool, roots, tolerant=True)
        try:
            model = open_model(run)
        except M1ndError:
            model = None  # the spool cannot be read: diagnose says so
        if model is None:
            report = diagnose(run, moment)
        else:
            for note in model.notes:
                output.warn(note)
            from m1nd.readmodel import damage_reported

            try:
                with damage_reported(run):
                    report = diagnose(run, moment, model)
            finally:
                model.close()
    if json_out:
        output.emit_json(report.as_json())
    else:
        from m1nd.cli import render

        render.doctor_view(report)
    if report.failed:
        raise typer.Exit(1)
