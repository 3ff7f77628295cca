"""`m1nd sweep`, `m1nd --inbox-sweep`, `m1nd distribute`, `m1nd box`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from m1nd.cli import output
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import Home, Json, NoDistribute, Roots, Spool


def _report_problems(problems, receipt=None) -> None:
    for note in receipt.notes if receipt else ():
        output.warn(note)
    for p in problems:
        output.error_line(f"box {p.label} not filed: {p.reason}")


def _sweep_with_progress(home, spool, roots, no_distribute: bool):
    from m1nd.sweep import sweep as run_sweep

    run = open_run(home, spool, roots)
    bar = output.Progress("distributing")
    try:
        return run, run_sweep(run, distribute_first=not no_distribute, progress=bar)
    finally:
        bar.close()


def print_sweep_json(home, spool, roots, no_distribute: bool) -> None:
    with reporting(True):
        _, result = _sweep_with_progress(home, spool, roots, no_distribute)
    output.emit_json(result.doc)
    _report_problems(result.problems, result.receipt)
    if result.failed:
        raise typer.Exit(1)


def sweep(
    json_out: Json = False,
    no_distribute: NoDistribute = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Distribute, then show every letter: the union of the spool and all boxes."""
    if json_out:
        print_sweep_json(home, spool, roots, no_distribute)
        return
    from m1nd.cli import render
    from m1nd.distribute import distribute as plan

    with reporting(False):
        run, result = _sweep_with_progress(home, spool, roots, no_distribute)
        receipt = result.receipt or plan(run, write=False)
    render.sweep_view(result, receipt, run)
    _report_problems(result.problems, result.receipt)
    if result.failed:
        raise typer.Exit(1)


def distribute(
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """File every spool letter into the one box that owns it; print the receipt."""
    from m1nd.cases.escalation import after_distribution
    from m1nd.distribute import distribute as run_distribute

    with reporting(json_out):
        bar = output.Progress("distributing")
        try:
            run = open_run(home, spool, roots)
            receipt = run_distribute(run, progress=bar)
        finally:
            bar.close()
        receipt = after_distribution(run, receipt)  # cases.md 2: escalation at the second witness
    if json_out:
        output.emit_json(receipt.as_json())
    else:
        from m1nd.cli import render

        render.receipt_line(receipt)
    _report_problems(receipt.problems, receipt)
    if receipt.problems:
        raise typer.Exit(1)


def box(
    selector: Annotated[Optional[str], typer.Argument(help="medulla, a root path, or a box label (default: this repository).")] = None,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Show one box, scoped to its own letters."""
    from m1nd.boxview import view_box

    with reporting(json_out):
        view = view_box(open_run(home, spool, roots), selector)
    if json_out:
        output.emit_json(view.as_json())
        return
    from m1nd.cli import render

    render.box_view(view)
