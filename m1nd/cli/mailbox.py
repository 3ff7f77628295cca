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


def open_read(home, spool, roots, no_distribute: bool):
    """Open the run, distribute (unless read-only), and bring the read model current.
    Returns (run, receipt or None, model); the model's notes are said on stderr."""
    from m1nd.distribute import distribute as run_distribute
    from m1nd.readmodel import open_model

    run = open_run(home, spool, roots)
    receipt = None
    if not no_distribute:
        bar = output.Progress("distributing")
        try:
            receipt = run_distribute(run, progress=bar)
        finally:
            bar.close()
    model = open_model(run)
    for note in model.notes:
        output.warn(note)
    return run, receipt, model


def read_problems(model, receipt) -> list:
    """Boxes that could not be written (the receipt) or read (the model), each once."""
    from m1nd.distribute import BoxProblem

    problems = list(receipt.problems) if receipt else []
    reported = {p.path for p in problems}
    for source in model.boxes:
        if source.problem and source.path not in reported:
            problems.append(BoxProblem(source.label, source.path, source.problem))
    return problems


def print_sweep_json(home, spool, roots, no_distribute: bool) -> None:
    import sys

    from m1nd.sweep import write_document

    with reporting(True):
        run, receipt, model = open_read(home, spool, roots, no_distribute)
    try:
        out = sys.stdout.buffer
        write_document(run, model, receipt, out)
        out.flush()
    finally:
        model.close()
    problems = read_problems(model, receipt)
    _report_problems(problems, receipt)
    if problems:
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
    from m1nd.distribute import distribute as run_distribute

    with reporting(json_out):
        bar = output.Progress("distributing")
        try:
            receipt = run_distribute(open_run(home, spool, roots), progress=bar)
        finally:
            bar.close()
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
