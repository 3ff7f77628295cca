"""Human views (rich).  Only the CLI prints; this module decides how things look."""

from __future__ import annotations

from m1nd.cli import output
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, OPEN_STATES, count_states
from m1nd.words import plural

STATE_LABEL = {"wet_ink": "open", IN_FLIGHT: "in flight", FIRED_CLAY: "answered", EXTERNAL: "external"}


def shorten(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(title: str | None = None):
    from rich import box as rich_box
    from rich.table import Table

    return Table(title=title, box=rich_box.SIMPLE_HEAD, title_justify="left", pad_edge=False)


def receipt_line(receipt) -> None:
    pending = (f"; {plural(receipt.pending_letters, 'letter')} pending for {', '.join(receipt.pending)}"
               if receipt.pending else "")
    held = f"; {receipt.held} held back (likely secrets: m1nd doctor)" if receipt.held else ""
    output.emit_text(
        f"{plural(receipt.spool_total, 'letter')} in the spool: {receipt.appended} newly filed; "
        f"{receipt.to_project} to project boxes, {receipt.to_medulla} to medulla{pending}{held}"
    )


def _counts_row(table, label: str, counts: dict) -> None:
    table.add_row(label, str(counts["open"]), str(counts[IN_FLIGHT]), str(counts[FIRED_CLAY]),
                  str(counts[EXTERNAL]), str(sum(counts[s] for s in STATE_LABEL)))


def sweep_view(result, receipt, run) -> None:
    con = output.console()
    graph, letters = result.graph, result.letters
    table = _table("Boxes")
    for col in ("Box", "Open", "In flight", "Answered", "External", "Total"):
        table.add_column(col, justify="left" if col == "Box" else "right")
    where: dict[str, str] = {}
    in_boxes: set[str] = set()
    for read in result.boxes:
        counts = count_states(graph.state(letters[i]) for i in read.ids)
        _counts_row(table, read.box.label, counts)
        for i in read.ids:
            where.setdefault(i, read.box.label)
        in_boxes |= read.ids
    waiting = [i for i in letters if i not in in_boxes]
    if waiting:
        _counts_row(table, "spool (not filed)", count_states(graph.state(letters[i]) for i in waiting))
    con.print(table)

    open_letters = [(d, l) for d, l in letters.items() if graph.state(l) in OPEN_STATES]
    open_letters.sort(key=lambda dl: (dl[1].ts, dl[1].id), reverse=True)
    doc = result.doc
    con.print(f"{plural(doc['total'], 'letter')}, {doc['open']} open, {doc['misdelivery']} misdelivered")
    if open_letters:
        table = _table("Open letters, newest first")
        for col in ("ts", "box", "state", "agent", "class", "what", "id"):
            table.add_column(col, overflow="fold" if col == "what" else "ellipsis", no_wrap=col != "what")
        for d, l in open_letters:
            table.add_row(l.ts, where.get(d, "spool"), STATE_LABEL[graph.state(l)], l.agent, l.klass,
                          shorten(l.what), l.id)
        con.print(table)

    if result.spool_malformed:
        output.warn(f"spool has {plural(len(result.spool_malformed), 'malformed line')} "
                    f"(first: {', '.join(map(str, result.spool_malformed[:5]))}); m1nd doctor names them")
    for read in result.boxes:
        if read.malformed:
            output.warn(f"box {read.box.label} has {plural(len(read.malformed), 'malformed line')} "
                        f"(first: {', '.join(map(str, read.malformed[:5]))})")
    for label in doc["unreachable"]:
        output.warn(f"box {label} is unreachable (its root is not a directory here)")
    if receipt.pending:
        output.warn(f"{plural(receipt.pending_letters, 'letter')} wait in the spool for unknown repositories: "
                    f"{', '.join(receipt.pending)} (m1nd roster add PATH)")


def box_view(view) -> None:
    con = output.console()
    root = view.box.root.path if view.box.root else "medulla (private to this home)"
    c = view.counts
    con.print(f"box {view.box.label} — {root}")
    con.print(f"{c['open']} open ({c[IN_FLIGHT]} in flight), {c[FIRED_CLAY]} answered, {c[EXTERNAL]} external")
    if view.views:
        table = _table()
        for col in ("ts", "state", "agent", "class", "what", "id"):
            table.add_column(col, overflow="fold" if col == "what" else "ellipsis", no_wrap=col != "what")
        for v in view.views:
            table.add_row(v["ts"], STATE_LABEL[v["state"]], v["agent"], v["class"], shorten(v["what"]), v["id"])
        con.print(table)
    if view.malformed:
        output.warn(f"box {view.box.label} has {plural(len(view.malformed), 'malformed line')} "
                    f"(first: {', '.join(map(str, view.malformed[:5]))})")


def doctor_view(report) -> None:
    con = output.console()
    mark = {"ok": "ok", "warn": "WARN", "error": "ERROR"}
    table = _table("Checks")
    for col in ("check", "status", "message", "fix"):
        table.add_column(col, overflow="fold")
    for check in report.checks:
        table.add_row(check.name, mark[check.status], check.message, check.fix)
    con.print(table)
    m = report.mailbox
    if m is None:
        con.print("mailbox: unavailable (the spool cannot be read)")
    else:
        pending = ", ".join(m["pending_distribution"]) or "none"
        con.print(f"mailbox: {plural(m['spool_letters'], 'spool letter')}; {m['memory_misdelivery']} misdelivered "
                  f"({m['confusion_rate_7d']} in the last 7 days); pending: {pending}")
