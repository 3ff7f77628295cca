"""Rendering a frozen report: Markdown (canonical), JSON, and the HTML page.

A renderer reads only the frozen run, so the same frozen report always renders to
the same bytes.  Letter text is data: in Markdown every markup character is escaped
and control characters are written as `\\xNN`; newlines never start a line.

The words and counts the formats share are phrases.py's (each name is also asked of
this module); the page is html.py's.
"""

from __future__ import annotations

from typing import Iterator

from m1nd import jsonout
from m1nd.reports import store
from m1nd.reports.phrases import (  # noqa: F401  (the shared words, asked of this module)
    boxes_in_order, CHANGES, CLASSIFICATION_WORD, coverage_line, entry_fields, failed_line, label_of, md,
    new_split, next_action, outcome_counts, outcome_of, outcomes_line, outcomes_sentence, period_line, plain,
    STATE_ORDER, STATE_WORD, Tally, totals, trigger_counts, trigger_line, TRIGGER_WORDS)
from m1nd.words import plural


class Lines:
    """Lines joined by newlines, handed out as bytes a batch at a time."""

    def __init__(self) -> None:
        self.buf: list[str] = []
        self.started = False

    def add(self, *lines: str) -> None:
        self.buf.extend(lines)

    def take(self, force: bool = False) -> bytes:
        if not self.buf or not force and len(self.buf) < 2000:
            return b""
        text = ("\n" if self.started else "") + "\n".join(self.buf)
        self.started, self.buf = True, []
        return text.encode("utf-8")


def markdown(frozen: store.Frozen, tally: Tally | None = None) -> bytes:
    return b"".join(markdown_chunks(frozen, tally))


def markdown_chunks(frozen: store.Frozen, tally: Tally | None = None) -> Iterator[bytes]:
    """The Markdown, a batch of lines at a time (the entries are read page by page)."""
    tally = tally or Tally(frozen)
    head = frozen.head
    out = Lines()
    out.add(f"# m1nd report: {head['profile']}, {head['local']['end']}", "")
    out.add(period_line(head), "", coverage_line(head), "", CHANGES, "")
    if head["not_itemized"]:
        out.add(f"Not itemized: {plural(head['not_itemized'], 'letter')} observed before "
                f"{head['period']['start']} (the first report covers at most 7 days).", "")
    out.add("| Box | New | Open | In flight | Answered | External |", "|---|---:|---:|---:|---:|---:|")
    for row in head["summary"]:
        out.add(f"| {md(label_of(row))} | {row['new']} | {row['open']} | {row['in_flight']} | "
                f"{row['answered']} | {row['external']} |")
    t = totals(head["summary"])
    out.add(f"| Total | {t['new']} | {t['open']} | {t['in_flight']} | {t['answered']} | {t['external']} |", "")
    out.add("Open counts open work: replies (pickups and receipts) are listed below as replies to their "
            "letters and never counted open.", "")
    if frozen.trigger_count:
        out.add("## Update", "", f"Triggered by: {trigger_counts(frozen)} since the last report or update.", "")
        if head["kind"] != "update":  # an update's ledger is its triggers; a cadence report lists them here
            for t in frozen.iter_triggers():
                out.add("- " + " · ".join(f"`{v}`" if k in ("state", "id") else md(v) for k, v in trigger_line(t)))
                chunk = out.take()
                if chunk:
                    yield chunk
            out.add("")
    out.add("## Ledger", "")
    if not head["entries"]:
        out.add("No new letters in this period.", "")
    for row, count, items in tally.boxes():
        out.add(f"### {md(label_of(row))} ({plural(count, 'letter')})", "")
        for e in items:
            parts = [f"`{v}`" if k in ("state", "id") else md(v) for k, v in entry_fields(e)]
            out.add("- " + " · ".join(parts))
            chunk = out.take()
            if chunk:
                yield chunk
        out.add("")
    pages = head["pages"]
    out.add("## Status", "",
            coverage_line(head) + ".",
            "Cursor: unchanged (an update moves no cursor; its letters are in the next report too)."
            if head["kind"] == "update" else
            "Cursor: unchanged (a manual report moves no cursor)."
            if head["kind"] == "manual" else
            f"Cursor: {head['period']['end']} once committed"
            + (f" (was {head['cursor_before']})." if head["cursor_before"] else " (first report of this profile)."),
            f"Entries: {head['entries']} on {plural(pages, 'page')} of at most 100. Report digest: `{frozen.digest}`.",
            outcomes_sentence(tally.outcomes))
    if failed_line(head):
        out.add(failed_line(head))
    out.add(next_action(head), "")
    yield out.take(force=True)


def json_doc(frozen: store.Frozen, tally: Tally | None = None) -> bytes:
    return b"".join(json_chunks(frozen, tally))


_ENTRIES_SLOT = b'\n  "entries": [],\n'  # the top-level key, the only one indented by two


def json_chunks(frozen: store.Frozen, tally: Tally | None = None) -> Iterator[bytes]:
    """`jsonout.dumps` of the report's document, its entries and its update's triggers
    written one at a time into the document dumped without them (each at the
    indentation the whole would give it)."""
    tally = tally or Tally(frozen)
    head = frozen.head
    update = head.get("update")
    doc = {
        "schema": "m1nd-report-v1",
        "run_id": frozen.run_id,
        "profile": head["profile"],
        "kind": head["kind"],
        "classification": head["classification"],
        "period": head["period"],
        "coverage": head["coverage"],
        "changes_made": [],
        "not_itemized": head["not_itemized"],
        "summary": head["summary"],
        "total": totals(head["summary"]),
        "outcomes": tally.outcomes,
        "entries": [],
        "pages": head["pages"],
        "page_digests": list(frozen.manifest["pages"]),
        "digest": frozen.digest,
        "cursor_before": head["cursor_before"],
        "next_action": next_action(head),
        "update": None if update is None else {
            "after": update["after"], "before": update["before"],
            "triggers": [_TRIGGERS_MARK] if frozen.trigger_count else []},
        "failed_deliveries": head.get("failed_deliveries") or [],
    }
    whole = jsonout.dumps(doc)
    at = whole.index(_ENTRIES_SLOT) + len(_ENTRIES_SLOT)
    rest = whole[at:]
    if not head["entries"]:
        yield whole[:at]
    else:
        yield whole[:at - len(_ENTRIES_SLOT)] + b'\n  "entries": ['
        yield from _items(frozen.iter_entries(), b"\n    ", b"\n  ],\n")
    if not frozen.trigger_count:
        yield rest
        return
    # the update is a top-level key (indented by two): its triggers' slot is the one after it
    mark = rest.index(_TRIGGERS_SLOT, rest.index(b'\n  "update": {'))
    yield rest[:mark] + b"["
    yield from _items(frozen.iter_triggers(), b"\n      ", b"\n    ]" + rest[mark + len(_TRIGGERS_SLOT):])


_TRIGGERS_MARK = "\x00triggers\x00"  # never a trigger's text: JSON writes a NUL escaped
_TRIGGERS_SLOT = b'[\n      "\\u0000triggers\\u0000"\n    ]'


def _items(docs, indent: bytes, end: bytes) -> Iterator[bytes]:
    """The documents as the items of a JSON list whose items start with `indent`, a
    batch at a time, then `end`."""
    batch, first = [], True
    for d in docs:
        text = jsonout.dumps(d)[:-1].replace(b"\n", indent)  # a newline in JSON is never inside a string
        batch.append((indent if first else b"," + indent) + text)
        first = False
        if len(batch) >= 500:
            yield b"".join(batch)
            batch = []
    batch.append(end)
    yield b"".join(batch)
