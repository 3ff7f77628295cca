"""The words and counts every format of a report shares (Markdown, JSON, the HTML
page): the states' and classifications' words, the period, coverage, outcome,
trigger and delivery lines, each entry's fields, and the one pass over a frozen
run's entries that counts what the renderers print (`Tally`).  Letter text is data:
`plain` escapes control characters, `md` every Markdown markup character too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import groupby
from typing import Iterator

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


def trigger_counts(frozen) -> str:
    """The update's triggers counted by reason, in words (one pass over them)."""
    counts: dict[str, int] = {}
    for t in frozen.iter_triggers():
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
