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


# Up to this many new ledger entries are looked up by digest; more (a first scan, a
# ledger rebuilt) are matched against the few letters of the trigger classes instead.
BY_DIGEST = 20_000
_BATCH = 500  # digests per query (SQLite allows 999 parameters on old builds)


def scan(paths: Paths, model, state, profile) -> Found:
    """The triggers among the ledger entries after `state.update_offset`.  Candidates
    come from the read model in a few indexed queries, not one lookup per entry: by
    the new entries' digests when they are few (a report after K new letters costs K),
    else by the trigger classes."""
    lines, end = ledger.read_from(paths, state.update_offset)
    if not lines:
        return Found([], state.update_offset, end)
    classes = set(profile.alert_classes)
    candidates = {}
    if len(lines) <= BY_DIGEST:
        digests = sorted({bytes.fromhex(e.digest) for _, e in lines})
        for at in range(0, len(digests), _BATCH):
            part = digests[at:at + _BATCH]
            for row in model.letters(where=f"l.digest IN ({','.join('?' * len(part))})", args=tuple(part)):
                candidates[row.digest] = row
    else:
        for cls in sorted(classes):
            for row in model.letters(where="l.class = ?", args=(cls,)):
                candidates[row.digest] = row
        for row in model.letters(where="l.agent = ?", args=(ENGINE_AGENT,)):
            candidates[row.digest] = row
    hits = []
    for _, e in lines:
        row = candidates.get(e.digest)
        reason = trigger_of(row, classes) if row is not None else None
        if reason:
            hits.append((e, reason))
    return Found(hits, state.update_offset, end)


def status(state, profile) -> dict:
    ends = cooldown_ends(state, profile)
    return {"last_update": state.last_update, "cooldown_minutes": profile.cooldown,
            "cooldown_until": stamp(ends) if ends else None}
