"""The head a frozen report carries (reports contract section 3): its period, policy,
ledger offsets, coverage and why it is incomplete, and the per-box summary."""

from __future__ import annotations

from datetime import datetime

from m1nd.clock import stamp
from m1nd.fates import STATES
from m1nd.reports import calendar, store
from m1nd.reports.mailbox import WAITING, Union
from m1nd.reports.period import SCHEDULED
from m1nd.reports.profiles import Profile
from m1nd.run import Run

HEAD_SCHEMA = "m1nd-report-v1"
MARKERS = ("🟦", "🟪", "🟩", "🟧")


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


def head(run: Run, profile: Profile, union: Union, state: store.State, run_id: str, kind: str,
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
