"""What `m1nd report` does: finish any earlier work, then prepare, commit and deliver
the due period, all under the profile's lock.  Nothing due is found without reading a
letter, so a cron job every few minutes costs almost nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from m1nd.clock import stamp
from m1nd.reports import deliver as delivery
from m1nd.reports import freeze, store, updates
from m1nd.reports.profiles import Profile
from m1nd.run import Run


@dataclass
class Outcome:
    profile: str
    due: bool
    next_boundary: str | None
    prepared: freeze.Prepared | None = None
    committed: freeze.Committed | None = None
    deliveries: list[delivery.Delivery] = field(default_factory=list)
    disabled: bool = False
    note: str = ""  # what a "nothing due" line adds (the cooldown holding new letters back)

    @property
    def failed(self) -> bool:
        return any(d.status == "failed" for d in self.deliveries)

    def as_json(self) -> dict:
        return {
            "profile": self.profile,
            "status": "disabled" if self.disabled else "nothing-due" if not self.due and not self.deliveries else (
                "failed" if self.failed else "done"),
            "next_boundary": self.next_boundary,
            "prepared": self.prepared.as_json() if self.prepared else None,
            "committed": self.committed.as_json() if self.committed else None,
            "deliveries": [d.as_json() for d in self.deliveries],
        }


def nothing_due(run: Run, profile: Profile, now: datetime) -> tuple[bool, str | None]:
    """Nothing due, no outbox, and no update to look for (found without reading a letter)."""
    state = store.load_state(run.paths, profile.name)
    d = freeze.due(profile, state, now)
    nb = stamp(d.next_boundary) if d.next_boundary else None
    return (not d.due and not state.outbox and not updates.wanted(run.paths, state, profile, now)), nb


def run_report(run: Run, profile: Profile, now: datetime, sink_text: str | None,
               since: datetime | None = None, until: datetime | None = None) -> Outcome:
    paths = run.paths
    sink = delivery.parse_sink(sink_text or profile.sink, paths)
    delivery.timeout_seconds()  # a bad M1ND_REPORT_TIMEOUT is refused before anything is frozen
    manual = since is not None
    if not manual:
        idle, nb = nothing_due(run, profile, now)
        if idle or not profile.enabled:  # off: nothing generated or delivered, the cursor kept
            note = updates.waiting_note(paths, store.load_state(paths, profile.name), profile, now)
            return Outcome(profile.name, False, nb, disabled=not profile.enabled, note=note)
    with store.profile_lock(paths, profile.name):
        state = store.load_state(paths, profile.name)
        d = freeze.due(profile, state, now)
        outcome = Outcome(profile.name, manual or d.due, stamp(d.next_boundary) if d.next_boundary else None)
        prepared = None
        if manual or d.due:  # a cadence report carries any update due now: one report
            prepared = freeze.prepare(run, profile, now, since, until)
            outcome.due = prepared is not None  # a first report waits for a boundary after its first letter
        if prepared is None and not manual and updates.wanted(paths, store.load_state(paths, profile.name),
                                                               profile, now):
            prepared = freeze.prepare_update(run, profile, now)
            outcome.due = prepared is not None
        if prepared is not None:
            outcome.prepared = prepared
            outcome.committed = freeze.commit(run, profile, prepared.frozen.run_id, prepared.frozen.digest)
            _queue_for_sink(paths, profile, prepared.frozen.run_id, sink.name)
        # each earlier report waits for the sink it was bound for; one a kill left unbound
        # (committed, not yet queued for a sink) goes to this run's
        outcome.deliveries = delivery.deliver(paths, profile.name, sink, now, max_attempts=profile.max_attempts)
    return outcome


def _queue_for_sink(paths, profile: Profile, run_id: str, sink: str) -> None:
    """The outbox holds (run, sink) pairs: the report just committed waits for this
    run's sink (a one-off `--to` included, which a later plain run never swaps for the
    profile's), and one already delivered elsewhere (the same manual window again, to
    another sink) is queued once more for this sink."""
    state = store.load_state(paths, profile.name)
    done = any(r["run_id"] == run_id and r["sink"] == sink for r in state.receipts)
    entries = [e for e in state.outbox if e != run_id]  # committed, not bound yet: bound now
    if not done and f"{run_id} {sink}" not in entries:
        entries.append(f"{run_id} {sink}")
    if entries != state.outbox:
        state.outbox = entries
        store.save_state(paths, profile.name, state)
