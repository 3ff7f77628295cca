"""`m1nd cases [explain|claims|abandonment]` (`m1nd sentinels` is in m1nd.cli.sentinels)."""

from __future__ import annotations

import re
from typing import Annotated, Optional

import typer

from m1nd.cli import output
from m1nd.safetext import safe
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import CaseKind, CaseLimit, CaseState, CaseTool, Home, Json, Roots, Spool

app = typer.Typer(help="Case intelligence: which symptom keeps coming back, and whether its fix holds.",
                  invoke_without_command=True)

STATES = ("open", "answered", "closed·guarded", "none")


def clean(text: str) -> str:
    """Letter text as data: a newline shows as ⏎, control and bidi characters escaped (tab kept)."""
    return safe(text, tab="\t")


def print_line(lines: output.LineWriter, *parts: tuple[str, str] | str) -> None:
    """One line of plain text pieces, each optionally styled; never read as markup."""
    text, spans = "", []
    for part in parts:
        piece, style = (part, "") if isinstance(part, str) else part
        piece = clean(piece)
        if style:
            spans.append((len(text), len(text) + len(piece), style))
        text += piece
    lines.line(text, spans)


def _resolve(model, prefix: str):
    """The letters (two if their ids collide) with this id or unique id prefix, missions included."""
    from m1nd.errors import NotFound, UsageError

    if not re.fullmatch(r"[0-9a-f]{4,12}", prefix):
        raise UsageError(f"not a letter id: {prefix!r} (12 hex characters, or a unique prefix of 4 or more)")
    ids = model.lookup(prefix)
    if not ids:
        raise NotFound(f"no letter has id {prefix}")
    if len(ids) > 1:
        raise UsageError(f"id prefix {prefix} is ambiguous: {', '.join(ids)}")
    return model.by_id(ids[0], missions=True)


@app.callback()
def cases(
    ctx: typer.Context,
    json_out: Json = False,
    limit: CaseLimit = 50,
    tool: CaseTool = None,
    kind: CaseKind = None,
    state: CaseState = None,
    recurring: Annotated[bool, typer.Option("--recurring", help="Only fingerprints with two witnesses or more.")] = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Every fingerprint with its witnesses, escalation and case; the kindless count."""
    if ctx.invoked_subcommand is not None:
        return
    from m1nd.documents import cases as documents
    from m1nd.errors import UsageError

    with reporting(json_out):
        if state is not None:
            state = "closed·guarded" if state == "closed-guarded" else state
            if state not in STATES:
                raise UsageError(f"--state must be one of {', '.join(STATES)}")
        run = open_run(home, spool, roots)
        if json_out:
            doc = documents.cases_document(run, output.warn)
        else:
            with documents.opened(run, output.warn) as (cases, overlay):
                _cases_view(overlay, cases, limit, tool, kind, state, recurring)
            return
    output.emit_json(doc)


def _say(cases) -> None:
    from m1nd.documents.cases import say_notes

    say_notes(cases, output.warn)


def _cases_view(overlay, cases, limit, tool, kind, state, recurring) -> None:
    from m1nd.cases import fingerprints as fps
    from m1nd.cases.display import by_what_matters, display_name, standing
    from m1nd.words import plural

    con = output.LineWriter()
    shown = []
    for e in overlay.entries:
        family, k = fps.split(e.fingerprint)
        if tool is not None and family != tool.lower():
            continue
        if kind is not None and k != kind:
            continue
        if state is not None and (e.case.state if e.case else "none") != state:
            continue
        if recurring and len(e.witnesses) < 2:
            continue
        shown.append(e)
    shown = by_what_matters(shown)
    for e in shown[: limit or None]:
        style = "bold red" if e.case and e.case.sentinel == "red" else "bold"
        head, _, rest = e.line().partition(" — ")
        head = head.replace(e.fingerprint, display_name(e.fingerprint))
        print_line(con, (f"{head} — {rest.split(' · ')[0]}: {standing(e)}", style))
        if e.case:
            c = e.case
            alias = f" (case id {c.case_id})" if c.case_id else ""
            print_line(con, f"  case: receipt {c.receipt.id}{alias} · {c.state} · {plural(len(c.members), 'member')}")
        ws = ", ".join(f"{w.id} {w.ts}" for w in e.witnesses[:5])
        more = f" and {len(e.witnesses) - 5} more" if len(e.witnesses) > 5 else ""
        if e.witnesses:
            print_line(con, f"  witnesses: {ws}{more}")
        if e.escalation:
            box = cases.box_of(e.escalation.digest)
            where = box.label if box else "spool"
            print_line(con, f"  escalation: {e.escalation.id} ({where})")
            if len(e.escalations) > 1:
                others = ", ".join(x.id for x in e.escalations[1:])
                print_line(con, f"  also escalated elsewhere (a different first pair): {others}")
    hidden = len(shown) - len(shown[: limit or None])
    if hidden:
        print_line(con, f"… and {plural(hidden, 'more fingerprint')} (--limit 0 shows all)")
    n_cases = sum(1 for e in overlay.entries if e.case)
    filtered = f", {len(shown)} shown" if len(shown) != len(overlay.entries) else ""
    print_line(con, f"{plural(len(overlay.entries), 'fingerprint')}{filtered}, {plural(n_cases, 'case')}; "
                f"{plural(overlay.kindless, 'kindless letter')} (no kind, never guessed: m1nd cases explain ID)")


@app.command("explain")
def explain(
    letter: Annotated[str, typer.Argument(help="A letter id (or a unique prefix of 4 or more).", metavar="ID")],
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Which rule gave a letter its kind (or why it has none), and whether it is a witness."""
    from m1nd.cases import fingerprints as fps
    from m1nd.cases.source import open_cases

    with reporting(json_out):
        with open_cases(open_run(home, spool, roots)) as cases:
            _say(cases)
            items = _resolve(cases.model, letter)
            # a held letter's fields never leave, in a fingerprint neither
            held = {item.digest for item in items if cases.model.secret_of(item.digest)}
    docs = []
    for item in items:
        refusal = fps.witness_refusal(item)
        if item.digest in held:
            refusal = "held letters (a likely secret) are never witnesses"
        d = fps.derive(item)
        if refusal:
            docs.append(({"id": item.id, "fingerprint": None, "source": fps.SOURCE_NONE}, refusal, item))
        else:
            docs.append(({"id": item.id, "fingerprint": d.fingerprint, "source": d.source}, d.why, item))
    if json_out:
        output.emit_json(docs[0][0] if len(docs) == 1 else [d for d, _, _ in docs])
        return
    con = output.LineWriter()
    for doc, why, item in docs:
        print_line(con, (f"letter {doc['id']}", "bold"))
        print_line(con, f"  fingerprint: {doc['fingerprint'] or 'none'}")
        print_line(con, f"  source: {doc['source']} — {why}")
        named = item.fingerprint
        if fps.witness_refusal(item) and named and item.digest not in held:
            print_line(con, f"  names: {named} (its fingerprint field)")
        print_line(con, f"  witness: {'no' if doc['fingerprint'] is None else 'yes'}")


@app.command("claims")
def claims_cmd(
    json_out: Json = False,
    export: Annotated[Optional[str], typer.Option(
        "--export", help="Append one row per honesty letter not already in FILE (field-labels.jsonl).",
        metavar="FILE")] = None,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Honesty letters per (tool family, symptom kind): claimed wrong, right, unresolved."""
    from m1nd.cases.claims import claims, export as export_rows
    from m1nd.cases.source import open_cases
    from m1nd.words import plural

    with reporting(json_out):
        with open_cases(open_run(home, spool, roots)) as cases:
            _say(cases)
            result = claims(cases.model)
        appended = unreadable = None
        if export is not None:
            appended, unreadable = export_rows(result.rows, export)
    if unreadable:
        output.warn(f"{export}: {plural(unreadable, 'unreadable line')} left as they are")
    if json_out:
        output.emit_json(result.as_json())
        return
    con = output.LineWriter()
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False)
    for col in ("tool family", "symptom kind", "wrong", "right", "unresolved", "total"):
        table.add_column(col, justify="left" if col in ("tool family", "symptom kind") else "right")
    for row in result.table:
        table.add_row(Text(clean(row["tool_family"])), row["symptom_kind"], str(row["wrong"]), str(row["right"]),
                      str(row["unresolved"]), str(row["total"]))
    if result.table:
        output.console().print(table)
    print_line(con, f"{plural(len(result.rows), 'honesty letter')} with a fingerprint; "
                f"{result.kindless} without one (not counted)")
    if appended is not None:
        print_line(con, f"exported {plural(appended, 'new row')} to {export}")


@app.command("abandonment")
def abandonment_cmd(
    trace: Annotated[str, typer.Option("--trace", help="A JSONL trace of tool calls.", metavar="FILE")],
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """File one letter per session that gave up on a failing tool and stopped."""
    from m1nd.cases.abandonment import file_trace, read_trace
    from m1nd.words import plural

    with reporting(json_out):
        parsed = read_trace(trace)
        run = open_run(home, spool, roots)
        filing = file_trace(run, parsed)
    for number, why in parsed.unreadable:
        output.warn(f"{trace}: line {number} unreadable ({why}): skipped")
    for problem in filing.problems:
        output.error_line(problem)
    if json_out:
        output.emit_json({"sessions": parsed.sessions, "filed": list(filing.filed)})
    else:
        con = output.LineWriter()
        for a, lid in zip(parsed.abandoned, filing.filed):
            print_line(con, f"{lid}  session {a.session}: {a.tool} {a.verb} → {a.outcome}, then stop")
        print_line(con, f"{plural(parsed.sessions, 'session')}, {plural(len(parsed.abandoned), 'abandonment')}; "
                    f"{filing.new} newly filed")
    if filing.problems:
        raise typer.Exit(1)
