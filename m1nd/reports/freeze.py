"""Prepare (freeze) and commit (reports contract sections 3 and 4).

prepare: the due period `[start, end)`, its ledger entries not yet reported, each
joined with its letter and fate, grouped by box in profile order, cut into pages of
100, written as a frozen run whose id derives from the policy, the period and the
kind.  commit: recompute every digest, check the run is not stale, then in one atomic
write advance the cursor and put the run in the outbox.
"""

from __future__ import annotations

import gc
import os
from itertools import islice
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import orjson

from m1nd import ledger
from m1nd.clock import stamp
from m1nd.errors import M1ndError, NotFound, UsageError
from m1nd.fates import is_receipt, EXTERNAL, FIRED_CLAY, IN_FLIGHT, STATES, WET_INK
from m1nd.held import held_off_machine, held_text, held_ts
from m1nd.paths import Paths
from m1nd.reports import calendar, store, updates
from m1nd.reports.faults import crash
from m1nd.reports.mailbox import WAITING, Union, observe
from m1nd.reports.profiles import Profile, policy_digest
from m1nd.reports.spill import LedgerLines, Spill
from m1nd.run import Run

PAGE_SIZE = 100
BOOTSTRAP = timedelta(days=7)
HEAD_SCHEMA = "m1nd-report-v1"
MARKERS = ("🟦", "🟪", "🟩", "🟧")
SCHEDULED, UPDATE, MANUAL = "scheduled", "update", "manual"
PARTIAL, CATCH_UP = "partial-since-activation", "catch-up"
WHAT_LEN = 80


def parse_stamp(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def profile_boxes(run: Run, profile: Profile) -> list[str]:
    # The roster (and --root) in order, then medulla; the repository the command runs
    # in is not part of a profile unless registered, so the policy never depends on
    # the directory a report is run from.
    from m1nd import roster

    registered = {os.path.realpath(p) for p in roster.load(run.paths)}
    default = [r.label for r in run.roots.roots if r.path != run.bound or r.real in registered] + ["medulla"]
    seen, out = set(), []
    for label in profile.box_labels(default):
        if label.lower() not in seen:
            seen.add(label.lower())
            out.append(label)
    return out


def run_id_for(policy: str, start: str, end: str, kind: str) -> str:
    key = store.sha256(f"{policy}\n{start}\n{end}\n{kind}".encode())[:12]
    return f"{end[:10].replace('-', '')}T{end[11:16].replace(':', '')}Z-{kind[0]}-{key}"


@dataclass(frozen=True)
class Due:
    """What `m1nd report` would do now for a profile, found without reading letters."""

    end: datetime | None
    cursor: str | None
    next_boundary: datetime | None

    @property
    def due(self) -> bool:
        return self.end is not None and (self.cursor is None or stamp(self.end) > self.cursor)


def due(profile: Profile, state: store.State, now: datetime) -> Due:
    zone = profile.zone
    end = calendar.latest_at_or_before(now, profile.rules, zone)
    return Due(end, state.cursor, calendar.next_after(now, profile.rules, zone))


def classify(start: datetime, end: datetime, profile: Profile) -> str:
    before = calendar.latest_before(end, profile.rules, profile.zone)
    if before is None or start == before:
        return SCHEDULED
    return PARTIAL if start > before else CATCH_UP


_WANTED: dict[tuple, dict[str, str]] = {}


def _wanted(order: list[str]) -> dict[str, str]:
    """{lowercased label: label} of the profile's boxes (asked once per letter: kept)."""
    key = tuple(order)
    found = _WANTED.get(key)
    if found is None:
        found = _WANTED[key] = {label.lower(): label for label in order}
    return found


def _resolves_to(run: Run, union: Union, digest: str, order: list[str]) -> str:
    """The profile box a letter not filed yet will go to, else WAITING (its
    repository is not on this machine, or the box is not this profile's)."""
    letter = union.letter(digest)
    route = run.roots.resolve(letter.brain, letter.repo)
    label = route.root.label if getattr(route, "root", None) is not None else (
        "medulla" if route.kind == "medulla" else None)
    return _wanted(order).get(label.lower(), WAITING) if label else WAITING


def _holder(union: Union, digest: str, order: list[str]) -> str | None:
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


def _entry(union: Union, e: ledger.Entry, box: str, in_box: bool = True) -> dict:
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


def _sort(entries: list[dict], order: dict[str, int]) -> None:
    """By box in profile order, then state, then newest first (stable sorts compose)."""
    rank = {s: i for i, s in enumerate(STATES)}
    entries.sort(key=lambda e: (e["id"], e["digest"]))
    entries.sort(key=lambda e: e["ts"], reverse=True)
    entries.sort(key=lambda e: (order[e["box"]], rank[e["state"]]))


def _counts(entries) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
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


def _summary(union: Union, boxes: list[str], new: dict[str, int], split: dict[str, dict[str, int]],
             missing: set[str]) -> list[dict]:
    current = union.box_summary()
    zero = {"open": 0, "in_flight": 0, "answered": 0, "external": 0}
    rows = []
    for i, label in enumerate(boxes + ([WAITING] if new.get(WAITING) else [])):
        counts = current.get(label, zero) if label != WAITING else union.not_filed_summary()
        rows.append({
            "box": label,
            "marker": MARKERS[i % len(MARKERS)] if label != WAITING else "",
            "reachable": label == WAITING or label not in missing,
            "new": new.get(label, 0),
            **counts,
            "new_split": split.get(label, {**{s: 0 for s in STATES}, "reply": 0}),
        })
    return rows


@dataclass(frozen=True)
class Prepared:
    frozen: store.Frozen
    reused: bool  # the same period was already frozen

    def as_json(self) -> dict:
        head = self.frozen.head
        return {
            "run_id": self.frozen.run_id,
            "profile": head["profile"],
            "kind": head["kind"],
            "classification": head["classification"],
            "period": head["period"],
            "entries": head["entries"],
            "pages": head["pages"],
            "digest": self.frozen.digest,
            "page_digests": list(self.frozen.manifest["pages"]),
            "dir": self.frozen.dir,
        }


def observe_spool(run: Run, profile: Profile, state, now: datetime):
    """`observe`, then remember the spool's size as read: every letter it held is in the
    ledger now, so the cron path need not look again until the spool or ledger grows."""
    size = updates.spool_size(run.paths)  # before reading: what is appended meanwhile is seen next time
    found = observe(run, stamp(now))
    if state.spool_seen != size:
        state.spool_seen = size
        store.save_state(run.paths, profile.name, state)
    return found


def prepare(run: Run, profile: Profile, now: datetime, since: datetime | None = None,
            until: datetime | None = None) -> Prepared | None:
    """Freeze the due period (or, with `since`, a manual window); None when nothing is due.

    The caller holds the profile's lock.
    """
    paths = run.paths
    state = store.load_state(paths, profile.name)
    boxes = profile_boxes(run, profile)
    policy = profile.policy(boxes)
    pdigest = policy_digest(policy)
    kind = MANUAL if since is not None else SCHEDULED
    if kind == MANUAL:
        end = until or now
        if end <= since:
            raise UsageError(f"--until {stamp(end)} must be later than --since {stamp(since)}")
        start, bootstrap = since, False
    else:
        d = due(profile, state, now)
        if not d.due:
            return None
        end = d.end
    # The run id of a scheduled period depends on its start, which with no cursor
    # depends on the ledger: read the letters (recording them) first.
    union, _ = observe_spool(run, profile, state, now)
    gc_was = gc.isenabled()
    gc.disable()  # thousands of small dicts and tuples, no cycles: the collector only costs time
    try:
        crash("prepare-after-observe")
        if kind == SCHEDULED:
            bootstrap = state.cursor is None
            if bootstrap:
                first = ledger.first_entry(paths)
                start = end - BOOTSTRAP
                if first is not None and parse_stamp(first.observed_at) > start:
                    start = parse_stamp(first.observed_at)
                if start >= end:
                    # every letter came after the latest boundary: the first report is
                    # the next boundary's, never an empty one of no length
                    return None
            else:
                start = parse_stamp(state.cursor)
        start_s, end_s = stamp(start), stamp(end)
        run_id = run_id_for(pdigest, start_s, end_s, kind)
        try:
            existing = store.load_frozen(paths, run_id)
        except store.Tampered:
            if run_id in state.committed:
                raise
            existing = None  # never committed: freeze it again from the ledger
        if existing is not None:
            return Prepared(existing, True)

        order = boxes + [WAITING]
        missing = {b for b in boxes if b.lower() not in {label.lower() for label in union.labels}}
        box_rank = {label: i for i, label in enumerate(order)}
        state_rank = {s: i for i, s in enumerate(STATES)}
        spill = Spill(PAGE_SIZE)  # the period's entries in report order, on disk: never all in memory
        new: dict[str, int] = {}
        split: dict[str, dict[str, int]] = {}
        not_itemized = deferred = 0
        offset_before = state.ledger_offset if kind == SCHEDULED else 0
        done = set(state.accounted_after) if kind == SCHEDULED else set()
        lines = LedgerLines(paths, offset_before)
        # The ledger offset after this report: up to the first entry left for later.
        offset_after, accounted_after, left = None, [], False
        previous_end = offset_before
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
                not_itemized += 1
                accounted = True
            else:
                box = _holder(union, e.digest, boxes)
                if box is None:
                    deferred += 1  # no readable file holds it now: it waits for a later report
                elif box == "":
                    accounted = True  # held only by boxes this profile does not report on
                else:
                    in_box = box != WAITING
                    if not in_box:
                        box = _resolves_to(run, union, e.digest, boxes)
                    entry = _entry(union, e, box, in_box)
                    spill.add(box_rank[entry["box"]], state_rank[entry["state"]], entry)
                    _count(new, split, entry)
                    accounted = True
            if accounted and e.digest not in done:
                spill.account(e.digest)
            if not accounted and not left:
                offset_after, left = line_start, True
            elif accounted and left:
                accounted_after.append(e.digest)
        if offset_after is None:
            offset_after = lines.end

        classification = MANUAL if kind == MANUAL else classify(start, end, profile)
        update = None
        if kind == SCHEDULED:  # a cadence report carries the updates due at the same run
            found = updates.scan(paths, union.model, state, profile)
            update = {"before": found.before, "after": found.after,
                      # a first report looks back as far as its period (at most 7 days)
                      "triggers": _trigger_entries(run, union, found, boxes, order, start_s if bootstrap else None)}
        head = _head(run, profile, union, state, run_id, kind, classification, start, end, now,
                     (spill.count, spill.pages, new, split), boxes,
                     missing, policy, pdigest, not_itemized=not_itemized, deferred=deferred, bootstrap=bootstrap,
                     ledger_before=offset_before, ledger_after=offset_after, accounted_after=accounted_after,
                     update=update)
        try:
            store.write_frozen(paths, run_id, head, spill.page_lines(run_id), spill.digests(), crash=crash)
        finally:
            spill.close()
        crash("prepare-after-freeze")
        frozen = store.load_frozen(paths, run_id)
        return Prepared(frozen, False)
    finally:
        if gc_was:
            gc.enable()
        union.model.close()


def _reasons(union: Union, missing: set[str], not_itemized: int, deferred: int, start_s: str) -> list[str]:
    reasons = [f"box {label} unreachable" for label in sorted(missing)]
    reasons += union.problems
    waiting = union.waiting()
    if waiting:
        reasons.append(f"{waiting} letter{'s' if waiting != 1 else ''} pending in the spool")
    if union.malformed:
        reasons.append(f"{union.malformed} malformed line{'s' if union.malformed != 1 else ''}")
    if not_itemized:
        reasons.append(f"{not_itemized} letter{'s' if not_itemized != 1 else ''} observed before "
                       f"{start_s} not itemized")
    if deferred:
        reasons.append(f"{deferred} observed letter{'s' if deferred != 1 else ''} unreadable now, "
                       "left for a later report")
    return reasons


def _head(run: Run, profile: Profile, union: Union, state: store.State, run_id: str, kind: str,
          classification: str, start: datetime, end: datetime, now: datetime, tally: tuple,
          boxes: list[str], missing: set[str], policy: dict, pdigest: str, *, not_itemized: int = 0,
          deferred: int = 0, bootstrap: bool = False, ledger_before: int, ledger_after: int,
          accounted_after: list[str], update: dict | None) -> dict:
    """The frozen head; `tally` is (entries, pages, new per box, the split of New per box)."""
    start_s, end_s = stamp(start), stamp(end)
    reasons = _reasons(union, missing, not_itemized, deferred, start_s)
    n_entries, n_pages, new, split = tally
    zone = profile.zone
    return {
        "schema": HEAD_SCHEMA,
        "run_id": run_id,
        "profile": profile.name,
        "kind": kind,
        "classification": classification,
        "period": {"start": start_s, "end": end_s, "timezone": profile.timezone},
        "local": {"start": start.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z"),
                  "end": end.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")},
        "policy": policy,
        "policy_digest": pdigest,
        "cursor_before": state.cursor if kind == SCHEDULED else None,
        "ledger_before": ledger_before,
        "ledger_after": ledger_after,
        "accounted_after": accounted_after,
        "frozen_at": stamp(now),
        "bootstrap": bootstrap,
        "not_itemized": not_itemized,
        "deferred": deferred,
        "coverage": {"status": "incomplete" if reasons else "complete", "reasons": reasons},
        "summary": _summary(union, boxes, new, split, missing),
        "entries": n_entries,
        "pages": n_pages,
        "next_boundary": (lambda b: stamp(b) if b else None)(calendar.next_after(end, profile.rules, zone)),
        "update": update,
        # deliveries past max_attempts, waiting for `m1nd report deliver --retry`
        "failed_deliveries": state.failed(profile.max_attempts),
    }


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


def _pages_of(entries: list[dict], run_id: str) -> list[dict]:
    return [{"run_id": run_id, "number": i // PAGE_SIZE + 1, "entries": entries[i:i + PAGE_SIZE]}
            for i in range(0, len(entries), PAGE_SIZE)]


def _trigger_entries(run: Run, union: Union, found: updates.Found, boxes: list[str], order: list[str],
                     since: str | None = None) -> list[dict]:
    """The triggering letters of this profile's boxes, as ledger entries with their
    reason (and their case, for an escalation or a regression)."""
    out = []
    for e, reason in found.hits:
        if since is not None and e.observed_at < since:
            continue
        box = _holder(union, e.digest, boxes)
        if not box:
            continue  # unreadable now, or only in boxes this profile does not report on
        in_box = box != WAITING
        entry = _entry(union, e, box if in_box else _resolves_to(run, union, e.digest, boxes), in_box)
        letter = union.letter(e.digest)
        entry["trigger"] = reason
        entry["case"] = letter.fingerprint if reason != updates.ALERT and not entry["held"] else None
        out.append(entry)
    _sort(out, {label: i for i, label in enumerate(order)})
    return out


def prepare_update(run: Run, profile: Profile, now: datetime) -> Prepared | None:
    """Freeze an exception update over the triggers observed since the last report or
    update; None when there are none (the scan is remembered, so the cron path is quick
    again).  The caller holds the profile's lock."""
    paths = run.paths
    state = store.load_state(paths, profile.name)
    boxes = profile_boxes(run, profile)
    policy = profile.policy(boxes)
    pdigest = policy_digest(policy)
    union, _ = observe_spool(run, profile, state, now)
    try:
        order = boxes + [WAITING]
        found = updates.scan(paths, union.model, state, profile)
        entries = _trigger_entries(run, union, found, boxes, order)
        if not entries:
            if found.after != state.update_offset:
                state.update_offset = found.after
                store.save_state(paths, profile.name, state)
            return None
        first = min(e["observed_at"] for e in entries)
        start = parse_stamp(min(state.last_report, first) if state.last_report else first)
        start = min(start, now)
        run_id = run_id_for(pdigest, stamp(start), stamp(now), UPDATE)
        existing = store.load_frozen(paths, run_id)
        if existing is not None:
            return Prepared(existing, True)
        missing = {b for b in boxes if b.lower() not in {label.lower() for label in union.labels}}
        update = {"before": found.before, "after": found.after, "triggers": entries}
        pages = _pages_of(entries, run_id)  # an update's entries are its triggers: few
        head = _head(run, profile, union, state, run_id, UPDATE, UPDATE, start, now, now,
                     (len(entries), len(pages), *_counts(entries)), boxes, missing,
                     policy, pdigest, ledger_before=state.ledger_offset, ledger_after=state.ledger_offset,
                     accounted_after=state.accounted_after, update=update)
        store.write_frozen(paths, run_id, head, pages, [e["digest"] for e in entries], crash=crash)
        return Prepared(store.load_frozen(paths, run_id), False)
    finally:
        union.model.close()


@dataclass(frozen=True)
class Committed:
    run_id: str
    status: str  # committed | already-committed
    cursor: str | None
    digest: str

    def as_json(self) -> dict:
        return {"run_id": self.run_id, "status": self.status, "cursor": self.cursor, "digest": self.digest}


def commit(run: Run, profile: Profile, run_id: str, digest: str) -> Committed:
    """Recompute, check, then advance the cursor and queue delivery in one write.

    The caller holds the profile's lock.
    """
    paths = run.paths
    state = store.load_state(paths, profile.name)
    frozen = store.load_frozen(paths, run_id)
    if frozen is None:
        raise NotFound(f"no frozen report {run_id}")
    head = frozen.head
    if head["profile"] != profile.name:
        raise UsageError(f"report {run_id} belongs to profile {head['profile']!r}, not {profile.name!r}")
    if digest != frozen.digest:
        raise M1ndError(f"report {run_id}: digest {digest!r} is not the report's digest: nothing committed")
    if run_id in state.committed:
        return Committed(run_id, "already-committed", state.cursor, frozen.digest)
    boxes = profile_boxes(run, profile)
    if policy_digest(profile.policy(boxes)) != head["policy_digest"]:
        raise M1ndError(f"report {run_id} is stale: profile {profile.name!r} changed since it was prepared "
                        "(policy drift): nothing committed; prepare again")
    update = head.get("update")
    if head["kind"] == UPDATE and update["before"] != state.update_offset:
        raise M1ndError(f"report {run_id} is stale: another report or update went out since it was prepared: "
                        "nothing committed; run `m1nd report` again")
    if head["kind"] == SCHEDULED:
        if head["cursor_before"] != state.cursor or head["ledger_before"] != state.ledger_offset:
            raise M1ndError(f"report {run_id} is stale: the cursor moved to {state.cursor} since it was "
                            "prepared: nothing committed; prepare again")
        state.cursor = head["period"]["end"]
        state.ledger_offset = head["ledger_after"]
        state.accounted_after = head["accounted_after"]
    if update is not None:  # an update, or a cadence report carrying one: never the cadence cursor
        state.update_offset = max(state.update_offset, update["after"])
        if update["triggers"]:
            state.last_update = head["frozen_at"]
    if head["kind"] in (SCHEDULED, UPDATE):
        state.last_report = head["frozen_at"]
    state.committed.append(run_id)
    state.outbox.append(run_id)
    crash("commit-before-write")
    store.save_state(paths, profile.name, state)
    crash("commit-after-write")
    return Committed(run_id, "committed", state.cursor, frozen.digest)


def profile_of_run(paths: Paths, run_id: str) -> str:
    """The profile a frozen run belongs to (from its checked head)."""
    frozen = store.load_frozen(paths, run_id)
    if frozen is None:
        raise NotFound(f"no frozen report {run_id}")
    return frozen.head["profile"]


def is_run_id(text: str) -> bool:
    return bool(text) and os.sep not in text and not text.startswith(".") and len(text) < 80
