"""`m1nd sentinels run|allow`: the absence sentinels that guard a fixed case."""

from __future__ import annotations

from typing import Annotated

import typer

from m1nd.cli import output
from m1nd.cli.cases import print_line
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import Home, Json, Roots, Spool

app = typer.Typer(help="Absence sentinels: probes that guard a fix, run only when allowed.", no_args_is_help=True)


@app.command("run")
def sentinels_run(
    json_out: Json = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds before a probe is killed (red).",
                                           min=0.1)] = 60.0,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Run every allowed probe; a red one files one regression letter per fingerprint per day."""
    from m1nd.cases.sentinels import run_all

    with reporting(json_out):
        report = run_all(open_run(home, spool, roots), timeout=timeout)
    for problem in report.problems:
        output.warn(problem)
    doc = report.as_json()
    if json_out:
        output.emit_json(doc)
    else:
        con = output.LineWriter()
        for r in report.results:
            style = {"green": "green", "red": "bold red"}.get(r.status, "yellow")
            print_line(con, (f"{r.status:<11}", style), f" {r.guard.fingerprint}  receipt {r.guard.receipt.id}  "
                                                     f"probe: {r.guard.probe}")
            print_line(con, f"            runs in: {r.label or r.where or 'nowhere (medulla box: never run)'}"
                        " (a grant covers the command, not the files it runs)")
            if r.note:
                print_line(con, f"            {r.note}")
            if r.filed:
                print_line(con, f"            filed regression letter {r.filed}")
        print_line(con, f"{doc['guarded']} guarded · {doc['green']} green · {doc['red']} red"
                    + (f" · {doc['not_allowed']} not allowed" if doc["not_allowed"] else ""))
    if doc["red"]:
        raise typer.Exit(1)


@app.command("allow")
def sentinels_allow(
    receipt: Annotated[str, typer.Argument(help="The receipt id (or a unique prefix) whose probe to allow.",
                                           metavar="ID")],
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Allow this receipt's exact probe command to run here (recorded under the home)."""
    from m1nd.cases.sentinels import allow

    with reporting(json_out):
        guard = allow(open_run(home, spool, roots), receipt)
    if json_out:
        output.emit_json({"receipt": guard.receipt.id, "probe": guard.probe, "fingerprint": guard.fingerprint})
        return
    print_line(output.LineWriter(), f"allowed for receipt {guard.receipt.id} ({guard.fingerprint}): {guard.probe}")
