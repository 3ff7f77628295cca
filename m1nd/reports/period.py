"""What a report covers and what its run is called (reports contract section 3).

The kinds of report, the profile's boxes in order, the period a profile is due for
and how it is classified against the calendar, and the run id that derives from the
policy, the period and the kind.  Nothing here reads a letter.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from m1nd.clock import stamp
from m1nd.reports import calendar, store
from m1nd.reports.profiles import Profile
from m1nd.run import Run

BOOTSTRAP = timedelta(days=7)
SCHEDULED, UPDATE, MANUAL = "scheduled", "update", "manual"
PARTIAL, CATCH_UP = "partial-since-activation", "catch-up"


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
