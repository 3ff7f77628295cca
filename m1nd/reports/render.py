"""Rendering a frozen report: Markdown (canonical), JSON, and the HTML page.

A renderer reads only the frozen run, so the same frozen report always renders to
the same bytes.  Letter text is data: in Markdown every markup character is escaped
and control characters are written as `\\xNN`; newlines never start a line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import groupby
from typing import Iterator

from m1nd import jsonout
from m1nd.reports import store
from m1nd.safetext import safe
from m1nd.words import plural

STATE_ORDER = ("wet_ink", "in_flight", "fired_clay", "external")
STATE_WORD = {"wet_ink": "open", "in_flight": "in flight", "fired_clay": "answered", "external": "external"}
CLASSIFICATION_WORD = {
    "scheduled": "Scheduled",
    "partial-since-activation": "Partial since activation",
    "catch-up": "Catch-up (missed boundaries coalesced into one report)",
    "manual": "Manual (no cursor moved)",
    "update": "Update (an exception between reports; no cursor moved)",
}
CHANGES = "Changes made: none. This report read the spool and the boxes; it filed nothing and changed no box."
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def plain(text: str) -> str:
    """Letter text for one line of output: control and bidi characters escaped, no newline."""
    return safe(text.replace("\r\n", "\n"), tab="\\x09")


@lru_cache(maxsize=8192)  # a report repeats its states, classes, tools and agents on every line
def md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", plain(text))


def totals(summary: list[dict]) -> dict:
    keys = ("new", "open", "in_flight", "answered", "external")
    return {k: sum(row[k] for row in summary) for k in keys}


def label_of(row: dict) -> str:
    label = row["box"] if row["box"] != "waiting" else "waiting (not filed yet)"
    if not row.get("reachable", True):
        label += " (unreachable)"
    return f"{row['marker']} {label}" if row["marker"] else label


def period_line(head: dict) -> str:
    p, local = head["period"], head["local"]
    return (f"Period: {local['start']} → {local['end']} ({p['timezone']}), "
            f"{p['start']} → {p['end']} · {CLASSIFICATION_WORD[head['classification']]}")


def coverage_line(head: dict) -> str:
    cov = head["coverage"]
    if cov["status"] == "complete":
        return "Coverage: complete"
    return "Coverage: incomplete: " + "; ".join(cov["reasons"])


def next_action(head: dict) -> str:
    t = totals(head["summary"])
    reasons = " ".join(head["coverage"]["reasons"])
    steps = []
    if "unreachable" in reasons or "refused" in reasons or "unreadable" in reasons or "malformed" in reasons:
        steps.append("`m1nd doctor` to see what cannot be read")
    if "pending in the spool" in reasons:
        steps.append("`m1nd distribute` to file pending letters (or `m1nd roster add PATH` for unknown repositories)")
    if t["open"] or t["in_flight"]:
        work = [plural(t["open"], "open letter")] if t["open"] else []
        work += [plural(t["in_flight"], "letter") + " in flight"] if t["in_flight"] else []
        steps.append(f"`m1nd sweep` to read the {' and '.join(work)}")
    return "Next: " + ("; ".join(steps) if steps else "nothing to do") + "."


def outcome_of(e: dict) -> str:
    if e.get("outcome"):
        return e["outcome"]
    return ", ".join(e["answered_by"]) if e["answered_by"] else "open"  # a report frozen before outcomes


def outcome_counts(entries) -> dict[str, int]:
    """The ledger's outcomes counted (a reply counts as a receipt or a pickup)."""
    out: dict[str, int] = {}
    for e in entries:
        _count_outcome(out, e)
    return dict(sorted(out.items()))


def _count_outcome(out: dict[str, int], e: dict) -> None:
    word = outcome_of(e)
    key = "receipts" if word.startswith("receipt of") else "pickups" if word.startswith("pickup of") else word
    out[key] = out.get(key, 0) + 1


def outcomes_line(entries) -> str:
    return outcomes_sentence(outcome_counts(entries))


def outcomes_sentence(counts: dict[str, int]) -> str:
    if not counts:
        return "Outcomes: none."
    nouns = {"receipts": "receipt", "pickups": "pickup"}  # the other outcomes are words that take no plural
    return "Outcomes: " + ", ".join(plural(n, nouns[word], word) if word in nouns else f"{n} {word}"
                                    for word, n in counts.items()) + "."


def new_split(row: dict, entries: list[dict]) -> dict[str, int]:
    """The chart's split of a row's New: by state, replies apart."""
    if "new_split" in row:
        return row["new_split"]
    split = {s: 0 for s in STATE_ORDER} | {"reply": 0}
    for e in entries:
        if e["box"] == row["box"]:
            split["reply" if e["reply"] else e["state"]] += 1
    return split


def boxes_in_order(head: dict, entries: list[dict]) -> list[tuple[dict, list[dict]]]:
    by_box: dict[str, list[dict]] = {}
    for e in entries:
        by_box.setdefault(e["box"], []).append(e)
    return [(row, by_box.get(row["box"], [])) for row in head["summary"]]


def entry_fields(e: dict) -> list[tuple[str, str]]:
    """The ledger line's fields in order (label, value).  A held letter: id, ts,
    state and `held: KIND`, none of its text."""
    if e.get("held"):
        return _why(e) + [("state", e["state"]), ("id", e["id"]), ("ts", e["ts"] or "-"),
                          ("outcome", f"held: {e['held']}")]
    fields = [("state", e["state"]), ("class", e["class"] or "-"),
              ("tool", e["tool"] or "-"), ("what", e["what"] or "-"), ("agent", e["agent"] or "-"),
              ("ts", e["ts"] or "-"), ("id", e["id"]), ("outcome", outcome_of(e))]
    if e.get("pending"):
        fields.append(("waits for", e["pending"]))
    return _why(e) + fields + ([("case", e["case"])] if e.get("case") else [])


def _why(e: dict) -> list[tuple[str, str]]:
    """An update's letter starts with what made it urgent."""
    return [("trigger", e["trigger"])] if e.get("trigger") else []


def triggers_of(head: dict) -> list[dict]:
    update = head.get("update")
    return update["triggers"] if update else []


def trigger_counts(head: dict) -> str:
    counts: dict[str, int] = {}
    for t in triggers_of(head):
        counts[t["trigger"]] = counts.get(t["trigger"], 0) + 1
    return ", ".join(plural(n, *TRIGGER_WORDS.get(word, (word, word))) for word, n in sorted(counts.items()))


# a trigger's reason word (the JSON's `trigger`) counted in a sentence
TRIGGER_WORDS = {"alert class": ("letter of an alert class", "letters of an alert class"),
                 "escalation": ("escalation", "escalations"),
                 "sentinel red": ("sentinel gone red", "sentinels gone red")}


def trigger_line(t: dict) -> list[tuple[str, str]]:
    """An update's line: why, then the letter's line (its case, for an escalation or a regression)."""
    return [("box", t["box"])] + entry_fields(t)


def failed_line(head: dict) -> str | None:
    failed = head.get("failed_deliveries") or []
    if not failed:
        return None
    retry = f"`m1nd report deliver --retry {failed[0]}`" if len(failed) == 1 else \
        "`m1nd report deliver --retry RUN_ID` for each"
    return (f"Delivery failed: {', '.join(failed)} (refused by its sink too many times; "
            f"{'it stays' if len(failed) == 1 else 'they stay'} in the outbox: {retry}).")


class Tally:
    """One pass over a frozen report's entries: what the renderers print before or
    after the ledger (each box's count, its split of New, the outcomes), and whether
    the entries come grouped by box in the summary's order, as freeze.py writes them
    (then a renderer streams them; otherwise it groups them in memory)."""

    def __init__(self, frozen: store.Frozen) -> None:
        self.frozen = frozen
        head = frozen.head
        rank = {}
        for i, row in enumerate(head["summary"]):
            rank.setdefault(row["box"], i)
        self.grouped = len(rank) == len(head["summary"])  # a box named twice: grouped in memory
        self.per_box: dict[str, int] = {}
        self.split: dict[str, dict[str, int]] = {}
        outcomes: dict[str, int] = {}
        last = -1
        for e in frozen.iter_entries():
            _count_outcome(outcomes, e)
            box = e["box"]
            part = self.split.setdefault(box, {s: 0 for s in STATE_ORDER} | {"reply": 0})
            part["reply" if e["reply"] else e["state"]] += 1
            i = rank.get(box)
            if i is None:
                continue  # a box the summary does not list: not shown (as boxes_in_order)
            self.per_box[box] = self.per_box.get(box, 0) + 1
            if i < last:
                self.grouped = False
            last = i
        self.outcomes = dict(sorted(outcomes.items()))

    def new_split(self, row: dict) -> dict[str, int]:
        return row["new_split"] if "new_split" in row else self.split.get(
            row["box"], {s: 0 for s in STATE_ORDER} | {"reply": 0})

    def boxes(self) -> Iterator[tuple[dict, int, Iterator[dict]]]:
        """(summary row, its count, its entries) for each row with entries, in summary order."""
        head = self.frozen.head
        if not self.grouped:
            for row, items in boxes_in_order(head, self.frozen.entries):
                if items:
                    yield row, len(items), iter(items)
            return
        rows = {row["box"]: row for row in head["summary"]}
        shown = (e for e in self.frozen.iter_entries() if e["box"] in rows)
        for box, items in groupby(shown, key=lambda e: e["box"]):
            yield rows[box], self.per_box[box], items


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
    triggers = triggers_of(head)
    if triggers:
        out.add("## Update", "", f"Triggered by: {trigger_counts(head)} since the last report or update.", "")
        if head["kind"] != "update":  # an update's ledger is its triggers; a cadence report lists them here
            for t in triggers:
                out.add("- " + " · ".join(f"`{v}`" if k in ("state", "id") else md(v) for k, v in trigger_line(t)))
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
    """`jsonout.dumps` of the report's document, its entries written one at a time into
    the document dumped without them (each at the indentation the whole would give it)."""
    tally = tally or Tally(frozen)
    head = frozen.head
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
        "update": head.get("update"),
        "failed_deliveries": head.get("failed_deliveries") or [],
    }
    whole = jsonout.dumps(doc)
    at = whole.index(_ENTRIES_SLOT)
    if not head["entries"]:
        yield whole
        return
    yield whole[:at] + b'\n  "entries": ['
    batch, first = [], True
    for e in frozen.iter_entries():
        text = jsonout.dumps(e)[:-1].replace(b"\n", b"\n    ")  # a newline in JSON is never inside a string
        batch.append((b"\n    " if first else b",\n    ") + text)
        first = False
        if len(batch) >= 500:
            yield b"".join(batch)
            batch = []
    batch.append(b"\n  ],\n" + whole[at + len(_ENTRIES_SLOT):])
    yield b"".join(batch)
