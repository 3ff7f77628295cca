"""Ledger entries made report entries (reports contract section 3).

Each entry a report itemizes is joined with its letter and fate and placed in the
first profile box that holds it (or WAITING, under the box it will go to); a period
is walked from the ledger in one pass, its entries spilled to disk in report order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice

from m1nd import ledger
from m1nd.fates import is_receipt, FIRED_CLAY, IN_FLIGHT, STATES, WET_INK
from m1nd.held import held_off_machine, held_text, held_ts
from m1nd.paths import Paths
from m1nd.reports import updates
from m1nd.reports.mailbox import WAITING, Union
from m1nd.reports.period import MANUAL, SCHEDULED
from m1nd.reports.spill import LedgerLines, Spill
from m1nd.run import Run

WHAT_LEN = 80

_WANTED: dict[tuple, dict[str, str]] = {}


def _wanted(order: list[str]) -> dict[str, str]:
    """{lowercased label: label} of the profile's boxes (asked once per letter: kept)."""
    key = tuple(order)
    found = _WANTED.get(key)
    if found is None:
        found = _WANTED[key] = {label.lower(): label for label in order}
    return found


def resolves_to(run: Run, union: Union, digest: str, order: list[str]) -> str:
    """The profile box a letter not filed yet will go to, else WAITING (its
    repository is not on this machine, or the box is not this profile's)."""
    letter = union.letter(digest)
    route = run.roots.resolve(letter.brain, letter.repo)
    label = route.root.label if getattr(route, "root", None) is not None else (
        "medulla" if route.kind == "medulla" else None)
    return _wanted(order).get(label.lower(), WAITING) if label else WAITING


def holder(union: Union, digest: str, order: list[str]) -> str | None:
    """The first profile box holding the letter; WAITING when only the spool holds
    it; "" when only boxes outside the profile do; None when nothing readable does."""
    holders = union.holders(digest)
    if holders is None:
        return None
    if not holders:
        return WAITING
    wanted = _wanted(order)
    for label in holders:
        if label.lower() in wanted:
            return wanted[label.lower()]
    return ""


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= WHAT_LEN else one[: WHAT_LEN - 1] + "…"


def _outcome(union: Union, letter, state: str, in_box: bool) -> str:
    """What became of the letter (seed 000): the answering receipt's disposition,
    `picked up`, `open`, `waiting` (not filed yet) or `external`; a reply is a reply."""
    if letter.answers:
        kind = "receipt" if is_receipt(letter) else "pickup"
        done = f" ({letter.disposition})" if kind == "receipt" and letter.disposition else ""
        return f"{kind} of {', '.join(dict.fromkeys(letter.answers))}{done}"
    if not in_box:
        return "waiting"
    if state == FIRED_CLAY:
        for rid in union.graph.answers_to(letter.id):
            for row in union.model.by_id(rid):
                if row.disposition and is_receipt(row):
                    return row.disposition
        return "answered"
    return {IN_FLIGHT: "picked up", WET_INK: "open"}.get(state, state)


def entry_for(union: Union, e: ledger.Entry, box: str, in_box: bool = True) -> dict:
    letter = union.letter(e.digest)
    graph = union.graph
    state = graph.state(letter)
    held = held_off_machine(union.model, e.digest)
    entry = {
        "box": box,
        "pending": union.pending_name(e.digest) if box == WAITING else None,
        "id": letter.id,
        "digest": e.digest,
        "observed_at": e.observed_at,
        "state": state,
        "reply": bool(letter.answers),
        "class": letter.klass,
        "tool": letter.tool,
        "what": _short(letter.what),
        "agent": letter.agent,
        "ts": letter.ts,
        "answered_by": graph.answers_to(letter.id),
        "outcome": _outcome(union, letter, state, in_box),
        "held": held,
    }
    if held:  # reports leave the machine: a held letter is itemized as held, never its text
        entry.update({"class": "", "tool": "", "what": held_text(held), "agent": "", "ts": held_ts(letter.ts),
                      "outcome": "held", "pending": None,
                      "reply": False, "answered_by": []})
    return entry


def counts(entries) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """New per box, and the chart's split of New: letters by state, replies apart (work done, never open)."""
    new: dict[str, int] = {}
    split: dict[str, dict[str, int]] = {}
    for e in entries:
        _count(new, split, e)
    return new, split


def _count(new: dict[str, int], split: dict[str, dict[str, int]], e: dict) -> None:
    new[e["box"]] = new.get(e["box"], 0) + 1
    part = split.setdefault(e["box"], {**{s: 0 for s in STATES}, "reply": 0})
    part["reply" if e["reply"] else e["state"]] += 1


def _prefetched(union: Union, lines, itemized, size: int = 500):
    """The ledger's lines, the letters of each batch that may be itemized read in one
    query before it is handed out."""
    it = iter(lines)
    while True:
        batch = list(islice(it, size))
        if not batch:
            return
        union.prefetch([e.digest for _, e in batch if itemized(e)])
        yield from batch


def trigger_spill(run: Run, union: Union, found: updates.Found, boxes: list[str], order: list[str],
                  since: str | None = None) -> Spill:
    """The triggering letters of this profile's boxes, as ledger entries with their
    reason (and their case, for an escalation or a regression), spilled to disk in
    report order (a first report may have a trigger for every letter of its period)."""
    box_rank = {label: i for i, label in enumerate(order)}
    state_rank = {s: i for i, s in enumerate(STATES)}
    spill = Spill(1)
    for e, reason in found.hits:
        if since is not None and e.observed_at < since:
            continue
        box = holder(union, e.digest, boxes)
        if not box:
            continue  # unreadable now, or only in boxes this profile does not report on
        in_box = box != WAITING
        entry = entry_for(union, e, box if in_box else resolves_to(run, union, e.digest, boxes), in_box)
        letter = union.letter(e.digest)
        entry["trigger"] = reason
        entry["case"] = letter.fingerprint if reason != updates.ALERT and not entry["held"] else None
        spill.add(box_rank[entry["box"]], state_rank[entry["state"]], entry)
    return spill


def trigger_entries(run: Run, union: Union, found: updates.Found, boxes: list[str], order: list[str],
                    since: str | None = None) -> list[dict]:
    """trigger_spill's entries, in memory (an update's: its entries are its triggers)."""
    import orjson

    spill = trigger_spill(run, union, found, boxes, order, since)
    try:
        return [orjson.loads(doc) for doc in spill.docs()]
    finally:
        spill.close()


@dataclass
class Period:
    """A period walked from the ledger: its entries (on disk), what they count, and
    where the ledger stands after it."""

    spill: Spill
    offset_before: int
    offset_after: int | None = None
    accounted_after: list[str] = field(default_factory=list)
    new: dict[str, int] = field(default_factory=dict)
    split: dict[str, dict[str, int]] = field(default_factory=dict)
    not_itemized: int = 0
    deferred: int = 0


def itemize_period(run: Run, paths: Paths, union: Union, state, kind: str, bootstrap: bool,
                   start_s: str, end_s: str, boxes: list[str], page_size: int) -> Period:
    """Walk the ledger from the profile's offset (a manual window: from the start) and
    spill every entry of `[start_s, end_s)` not reported yet, in report order."""
    order = boxes + [WAITING]
    box_rank = {label: i for i, label in enumerate(order)}
    state_rank = {s: i for i, s in enumerate(STATES)}
    spill = Spill(page_size)  # the period's entries in report order, on disk: never all in memory
    out = Period(spill, state.ledger_offset if kind == SCHEDULED else 0)
    done = set(state.accounted_after) if kind == SCHEDULED else set()
    lines = LedgerLines(paths, out.offset_before)
    # The ledger offset after this report: up to the first entry left for later.
    left = False
    previous_end = out.offset_before
    itemized = (lambda e: e.digest not in done and e.observed_at < end_s
                and not ((kind == MANUAL or bootstrap) and e.observed_at < start_s))
    for line_end, e in _prefetched(union, lines, itemized):
        line_start, previous_end = previous_end, line_end
        accounted = False
        if e.digest in done:
            accounted = True
        elif e.observed_at >= end_s or (kind == MANUAL and e.observed_at < start_s):
            pass
        elif bootstrap and e.observed_at < start_s:
            out.not_itemized += 1
            accounted = True
        else:
            box = holder(union, e.digest, boxes)
            if box is None:
                out.deferred += 1  # no readable file holds it now: it waits for a later report
            elif box == "":
                accounted = True  # held only by boxes this profile does not report on
            else:
                in_box = box != WAITING
                if not in_box:
                    box = resolves_to(run, union, e.digest, boxes)
                entry = entry_for(union, e, box, in_box)
                spill.add(box_rank[entry["box"]], state_rank[entry["state"]], entry)
                _count(out.new, out.split, entry)
                accounted = True
        if accounted and e.digest not in done:
            spill.account(e.digest)
        if not accounted and not left:
            out.offset_after, left = line_start, True
        elif accounted and left:
            out.accounted_after.append(e.digest)
    if out.offset_after is None:
        out.offset_after = lines.end
    return out
