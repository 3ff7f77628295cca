"""`m1nd sweep`, `m1nd --inbox-sweep`, `m1nd distribute`, `m1nd box`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from m1nd.cli import output
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import (Agent, All, BoxLabel, Home, Json, Klass, Limit, NoDistribute, NoPager, Now, Roots,
                              Since, Spool, State, Tool, Until)


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
        from m1nd.cases.escalation import after_distribution  # cases.md 2: escalation at the second witness

        bar = output.Progress("distributing")
        try:
            receipt = run_distribute(run, progress=bar)
        finally:
            bar.close()
        receipt = after_distribution(run, receipt)
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

    from m1nd.readmodel import damage_reported

    with reporting(True):
        run, receipt, model = open_read(home, spool, roots, no_distribute)
    try:
        out = sys.stdout.buffer
        with reporting(False), damage_reported(run):  # mid-document: one line on stderr, exit 1
            write_document(run, model, receipt, out)
        out.flush()
    finally:
        model.close()
    problems = read_problems(model, receipt)
    _report_problems(problems, receipt)
    if problems:
        raise typer.Exit(1)


def _read_warnings(model, receipt) -> list[str]:
    """Malformed lines, unreachable roots and waiting letters, said on stderr after the
    view (read with the view, where a damaged read model is reported)."""
    from m1nd.words import plural

    said: list[str] = []
    spool_bad = model.malformed(model.spool)
    if spool_bad:
        said.append(f"spool has {plural(len(spool_bad), 'malformed line')} "
                    f"(first: {', '.join(map(str, spool_bad[:5]))}); m1nd doctor names them")
    for source in model.readable_boxes():
        bad = model.malformed(source)
        if bad:
            said.append(f"box {source.label} has {plural(len(bad), 'malformed line')} "
                        f"(first: {', '.join(map(str, bad[:5]))})")
    for label in sorted({r.label for r in model.run.roots.unreachable}):
        said.append(f"box {label} is unreachable (its root is not a directory here)")
    if receipt.pending:
        waits = "waits" if receipt.pending_letters == 1 else "wait"
        ambiguous = model.run.roots.ambiguous
        unknown = [name for name in receipt.pending if name.lower() not in ambiguous]
        shared = [name for name in receipt.pending if name.lower() in ambiguous]
        if unknown:  # the count covers every waiting letter: said only when all are for unknown names
            count = "letters wait" if shared else f"{plural(receipt.pending_letters, 'letter')} {waits}"
            said.append(f"{count} in the spool for unknown repositories: "
                        f"{', '.join(unknown)} (m1nd roster add PATH)")
        for name in shared:  # two roots share the label: adding roots cannot help
            paths = " and ".join(r.path for r in ambiguous[name.lower()])
            said.append(f"letters for {name!r} wait: it is the label of {paths} "
                        f"(m1nd roster remove one of them, or rename one directory)")
    return said


def sweep(
    json_out: Json = False,
    no_distribute: NoDistribute = False,
    limit: Limit = 20,
    all_: All = False,
    state: State = None,
    agent: Agent = None,
    klass: Klass = None,
    tool: Tool = None,
    since: Since = None,
    until: Until = None,
    box_label: BoxLabel = None,
    no_pager: NoPager = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Distribute, then show every box's counts and the open letters, newest first."""
    from m1nd.errors import UsageError

    if json_out:
        given = [name for name, value in (("--state", state), ("--agent", agent), ("--class", klass),
                                          ("--tool", tool), ("--since", since), ("--until", until),
                                          ("--box", box_label)) if value is not None]
        if all_:
            given.append("--all")
        if limit != 20:
            given.append("--limit")
        if given:
            with reporting(True):
                raise UsageError(f"m1nd sweep --json prints the whole m1nd-inbox-sweep-v0 document, so it takes no "
                                 f"{'/'.join(given)}; for the matching letters of one box use m1nd box --json "
                                 f"with the same options")
        print_sweep_json(home, spool, roots, no_distribute)
        return
    from m1nd.cli import render
    from m1nd.readmodel import damage_reported
    from m1nd.views import make_filters, model_listing

    with reporting(False):
        filters = make_filters(state, agent, klass, tool, since, until, box_label)
        run, receipt, model = open_read(home, spool, roots, no_distribute)
        try:
            with damage_reported(run):
                listing = model_listing(model, filters, None if all_ else limit)
                warnings = _read_warnings(model, receipt or model.plan())
                problems = read_problems(model, receipt)
        except BaseException:
            model.close()
            raise
    try:
        with output.paged(not no_pager) as stream:
            render.sweep_view(listing, listing.totals, stream)
        for warning in warnings:
            output.warn(warning)
    finally:
        model.close()
    _report_problems(problems, receipt)
    if problems:
        raise typer.Exit(1)




def distribute(
    json_out: Json = False,
    now: Now = None,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """File every spool letter into the one box that owns it; print the receipt."""
    from m1nd.cases.escalation import after_distribution  # cases.md 2: escalation at the second witness
    from m1nd.distribute import distribute as run_distribute

    with reporting(json_out):
        if now is not None:  # the run's clock (the ledger's observed_at) for everything it calls
            import os

            from m1nd.clock import parse_now, stamp

            os.environ["M1ND_NOW"] = stamp(parse_now(now))
        bar = output.Progress("distributing")
        try:
            run = open_run(home, spool, roots)
            receipt = run_distribute(run, progress=bar)
        finally:
            bar.close()
        receipt = after_distribution(run, receipt)
    if json_out:
        output.emit_json(receipt.as_json())
    else:
        from m1nd.cli import render

        render.receipt_line(receipt)
    if receipt.malformed:
        from m1nd.words import plural

        bad = receipt.malformed
        output.warn(f"{plural(len(bad), 'malformed spool line')} skipped, never filed "
                    f"(line{'s' if len(bad) > 1 else ''} {', '.join(map(str, bad[:5]))}"
                    f"{' and more' if len(bad) > 5 else ''}); m1nd doctor names them")
    _report_problems(receipt.problems, receipt)
    if receipt.problems:
        raise typer.Exit(1)


def box(
    selector: Annotated[Optional[str], typer.Argument(help="medulla, a root path, or a box label (default: this repository).")] = None,
    json_out: Json = False,
    limit: Limit = 20,
    all_: All = False,
    state: State = None,
    agent: Agent = None,
    klass: Klass = None,
    tool: Tool = None,
    since: Since = None,
    until: Until = None,
    no_pager: NoPager = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Show one box, scoped to its own letters (fates from this box alone)."""
    from m1nd.boxview import box_json, box_source, select_box
    from m1nd.readmodel import open_model
    from m1nd.views import make_filters, model_listing

    with reporting(json_out):
        run = open_run(home, spool, roots)
        if json_out:
            from m1nd.cli.streamed import streamed_document

            streamed_document(lambda out, notes: box_json(run, selector, out, state, agent, klass, tool, since,
                                                          until, notes=notes), run)
            return
        filters = make_filters(state, agent, klass, tool, since, until)
        chosen = select_box(run, selector)
        model = open_model(run, only=chosen)  # the spool and this box: fates from this box alone
        for note in model.notes:
            output.warn(note)
        from m1nd.readmodel import damage_reported

        try:
            source = box_source(model, chosen)
            with damage_reported(run):
                listing = model_listing(model, filters, None if all_ else limit, scope=source)
                malformed = model.malformed(source)
        except BaseException:
            model.close()
            raise
    from m1nd.cli import render

    try:
        with output.paged(not no_pager) as stream:
            render.box_view(listing, chosen, stream)
        render.box_warnings(chosen.label, malformed)
    finally:
        model.close()
