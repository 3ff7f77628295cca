"""Prepare (freeze) and commit (reports contract sections 3 and 4).

prepare: the due period `[start, end)`, its ledger entries not yet reported, each
joined with its letter and fate, grouped by box in profile order, cut into pages of
100, written as a frozen run whose id derives from the policy, the period and the
kind.  commit: recompute every digest, check the run is not stale, then in one atomic
write advance the cursor and put the run in the outbox.

The period and the run id are period.py's, the entries itemize.py's, the head
head.py's; this module freezes and commits (and names its crash points).
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass
from datetime import datetime

from m1nd import ledger
from m1nd.clock import stamp
from m1nd.errors import M1ndError, NotFound, UsageError
from m1nd.paths import Paths
from m1nd.reports import store, updates
from m1nd.reports.faults import crash
from m1nd.reports.head import head as _head
from m1nd.reports.itemize import counts, itemize_period, trigger_entries, trigger_spill
from m1nd.reports.mailbox import WAITING, Union, observe
from m1nd.reports.period import (  # noqa: F401  (due and profile_boxes are asked of this module)
    BOOTSTRAP, MANUAL, SCHEDULED, UPDATE, classify, due, parse_stamp, profile_boxes, run_id_for)
from m1nd.reports.profiles import Profile, policy_digest
from m1nd.run import Run

PAGE_SIZE = 100


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


def _scheduled_start(paths: Paths, state: store.State, end: datetime) -> datetime | None:
    """Where a scheduled period starts: the cursor, or for a first report up to 7 days
    back but not before the first observed letter; None when that leaves no period."""
    if state.cursor is not None:
        return parse_stamp(state.cursor)
    first = ledger.first_entry(paths)
    start = end - BOOTSTRAP
    if first is not None and parse_stamp(first.observed_at) > start:
        start = parse_stamp(first.observed_at)
    if start >= end:
        # every letter came after the latest boundary: the first report is
        # the next boundary's, never an empty one of no length
        return None
    return start


def _already_frozen(paths: Paths, state: store.State, run_id: str) -> store.Frozen | None:
    try:
        return store.load_frozen(paths, run_id)
    except store.Tampered:
        if run_id in state.committed:
            raise
        return None  # never committed: freeze it again from the ledger


def prepare(run: Run, profile: Profile, now: datetime, since: datetime | None = None,
            until: datetime | None = None) -> Prepared | None:
    """Freeze the due period (or, with `since`, a manual window); None when nothing is due.

    The caller holds the profile's lock.
    """
    state = store.load_state(run.paths, profile.name)
    boxes = profile_boxes(run, profile)
    policy = profile.policy(boxes)
    kind = MANUAL if since is not None else SCHEDULED
    if kind == MANUAL:
        end = until or now
        if end <= since:
            raise UsageError(f"--until {stamp(end)} must be later than --since {stamp(since)}")
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
        return _freeze(run, profile, state, union, boxes, policy, kind, since, end, now)
    finally:
        if gc_was:
            gc.enable()
        union.model.close()


def _freeze(run: Run, profile: Profile, state: store.State, union: Union, boxes: list[str], policy: dict,
            kind: str, since: datetime | None, end: datetime, now: datetime) -> Prepared | None:
    """`prepare` once the letters are read: find the period's start, reuse a frozen run
    of the same id, else itemize the period and write it frozen."""
    paths = run.paths
    pdigest = policy_digest(policy)
    bootstrap = kind == SCHEDULED and state.cursor is None
    start = since if kind == MANUAL else _scheduled_start(paths, state, end)
    if start is None:
        return None
    start_s, end_s = stamp(start), stamp(end)
    run_id = run_id_for(pdigest, start_s, end_s, kind)
    existing = _already_frozen(paths, state, run_id)
    if existing is not None:
        return Prepared(existing, True)

    missing = {b for b in boxes if b.lower() not in {label.lower() for label in union.labels}}
    period = itemize_period(run, paths, union, state, kind, bootstrap, start_s, end_s, boxes, PAGE_SIZE)
    spill = period.spill
    classification = MANUAL if kind == MANUAL else classify(start, end, profile)
    update, triggers = None, None
    if kind == SCHEDULED:  # a cadence report carries the updates due at the same run
        found = updates.scan(paths, union.model, state, profile)
        # a first report looks back as far as its period (at most 7 days)
        triggers = trigger_spill(run, union, found, boxes, boxes + [WAITING], start_s if bootstrap else None)
        update = {"before": found.before, "after": found.after, "triggers": triggers.count}
    head = _head(run, profile, union, state, run_id, kind, classification, start, end, now,
                 (spill.count, spill.pages, period.new, period.split), boxes,
                 missing, policy, pdigest, not_itemized=period.not_itemized, deferred=period.deferred,
                 bootstrap=bootstrap, ledger_before=period.offset_before, ledger_after=period.offset_after,
                 accounted_after=period.accounted_after, update=update)
    try:
        store.write_frozen(paths, run_id, head, spill.page_lines(run_id), spill.digests(), crash=crash,
                           triggers=triggers.docs() if triggers is not None else ())
    finally:
        spill.close()
        if triggers is not None:
            triggers.close()
    crash("prepare-after-freeze")
    frozen = store.load_frozen(paths, run_id)
    return Prepared(frozen, False)


def _pages_of(entries: list[dict], run_id: str) -> list[dict]:
    return [{"run_id": run_id, "number": i // PAGE_SIZE + 1, "entries": entries[i:i + PAGE_SIZE]}
            for i in range(0, len(entries), PAGE_SIZE)]


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
        entries = trigger_entries(run, union, found, boxes, order)
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
        update = {"before": found.before, "after": found.after, "triggers": len(entries)}
        pages = _pages_of(entries, run_id)  # an update's entries are its triggers: few
        head = _head(run, profile, union, state, run_id, UPDATE, UPDATE, start, now, now,
                     (len(entries), len(pages), *counts(entries)), boxes, missing,
                     policy, pdigest, ledger_before=state.ledger_offset, ledger_after=state.ledger_offset,
                     accounted_after=state.accounted_after, update=update)
        store.write_frozen(paths, run_id, head, pages, [e["digest"] for e in entries], crash=crash,
                           triggers=(store.canonical(e) for e in entries))
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
        if frozen.trigger_count:
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
