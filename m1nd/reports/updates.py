"""Exception updates (reports contract section 4b): what makes `m1nd report` send an
update between cadence boundaries, found from the ledger's tail.

A trigger is a letter first observed since the profile's last report or update that
is an escalation (the engine's triage letter for a case's second witness), a
sentinel regression (the engine's letter for a probe gone red), or of an alert
class.  Every trigger is a letter, so the ledger's tail is where to look: the cron
path only compares the ledger's size with the offset the last report or update
scanned up to (`state.update_offset`), and reads letters only when it grew.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from m1nd import ledger
from m1nd.clock import stamp
from m1nd.paths import Paths

ENGINE_AGENT = "m1nd:engine"  # m1nd.cases.fingerprints.ENGINE_AGENT (not imported: the cron path stays light)

ESCALATION, SENTINEL_RED, ALERT = "escalation", "sentinel red", "alert class"


def trigger_of(row, alert_classes) -> str | None:
    """Why this letter triggers an update, or None."""
    from m1nd.fates import is_receipt

    if row.agent == ENGINE_AGENT:
        if is_receipt(row) and row.fingerprint and row.disposition is None and not row.sentinel:
            return ESCALATION
        if row.sentinel and not is_receipt(row):
            return SENTINEL_RED
    if row.klass in alert_classes:
        return ALERT
    return None


def cooldown_ends(state, profile) -> datetime | None:
    if state.last_update is None:
        return None
    at = datetime.strptime(state.last_update, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    return at + timedelta(minutes=profile.cooldown)


def cooling(state, profile, now: datetime) -> bool:
    ends = cooldown_ends(state, profile)
    return ends is not None and now < ends


def ledger_grew(paths: Paths, state) -> bool:
    """The cheap test: has anything been observed since the last scan?"""
    try:
        return os.stat(ledger.ledger_path(paths)).st_size > state.update_offset
    except FileNotFoundError:
        return False


def spool_size(paths: Paths) -> int:
    try:
        return os.stat(paths.spool).st_size
    except OSError:
        return 0


def anything_new(paths: Paths, state) -> bool:
    """Letters to look at for triggers: the ledger grew, or the spool did (a letter
    waiting there unfiled is first observed by the scan)."""
    return ledger_grew(paths, state) or spool_size(paths) != state.spool_seen


def wanted(paths: Paths, state, profile, now: datetime) -> bool:
    """Should this run look for triggers (outside a cadence boundary)?"""
    return profile.enabled and not cooling(state, profile, now) and anything_new(paths, state)


def waiting_note(paths: Paths, state, profile, now: datetime) -> str:
    """What a "nothing due" line adds while the cooldown holds new letters back."""
    if profile.enabled and cooling(state, profile, now) and anything_new(paths, state):
        return f"; new letters wait for the update cooldown to end at {stamp(cooldown_ends(state, profile))}"
    return ""


@dataclass(frozen=True)
class Found:
    hits: list[tuple[ledger.Entry, str]]  # (ledger entry, reason), ledger order
    before: int  # the ledger offset scanned from
    after: int  # and up to


# The ledger's new entries are read this many at a time.  While they are few (one
# block) their letters are looked up by digest, so a report after K new letters costs
# K; past one block (a first scan, a ledger rebuilt) every letter of the trigger
# classes is matched once instead, and only its digest and reason are kept.
BY_DIGEST = 20_000


def _reasons_by_digest(model, entries, classes) -> dict[str, str]:
    reasons = {}
    for row in model.by_digests(sorted({bytes.fromhex(e.digest) for _, e in entries})):
        reason = trigger_of(row, classes)
        if reason:
            reasons[row.digest] = reason
    return reasons


def _reasons_by_class(model, classes) -> dict[str, str]:
    reasons = {}
    wanted = [("l.class = ?", (cls,)) for cls in sorted(classes)] + [("l.agent = ?", (ENGINE_AGENT,))]
    for where, args in wanted:
        for row in model.letters(where=where, args=args):
            reason = trigger_of(row, classes)
            if reason:
                reasons[row.digest] = reason
    return reasons


def scan(paths: Paths, model, state, profile) -> Found:
    """The triggers among the ledger entries after `state.update_offset`, read block by
    block (memory stays flat in the ledger's length); candidates come from the read
    model in a few indexed queries, not one lookup per entry."""
    from itertools import islice

    from m1nd.reports.spill import LedgerLines

    lines = LedgerLines(paths, state.update_offset)
    classes = set(profile.alert_classes)
    every = None  # {digest: reason} of every trigger letter, once the entries are many
    hits = []
    it = iter(lines)
    while block := list(islice(it, BY_DIGEST)):
        if every is None and len(block) == BY_DIGEST:
            every = _reasons_by_class(model, classes)
        reasons = every if every is not None else _reasons_by_digest(model, block, classes)
        hits += [(e, reasons[e.digest]) for _, e in block if e.digest in reasons]
    return Found(hits, state.update_offset, lines.end)


def status(state, profile) -> dict:
    ends = cooldown_ends(state, profile)
    return {"last_update": state.last_update, "cooldown_minutes": profile.cooldown,
            "cooldown_until": stamp(ends) if ends else None}
