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
    from m1nd.documents.doctor import doctor_report

    with reporting(json_out):
        moment = parse_now(now)
        report = doctor_report(open_run(home, spool, roots, tolerant=True), moment, output.warn)
    if json_out:
        output.emit_json(report.as_json())
    else:
        from m1nd.cli import render

        render.doctor_view(report)
    if report.failed:
        raise typer.Exit(1)
