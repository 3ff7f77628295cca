"""Urgent alerts (reports contract section 3): letters of alert classes observed
since the last alert.  Printing never moves the report cursor; the letters still
appear in the next report.  Printed first, recorded after: a crash in between
repeats an alert rather than losing one."""

from __future__ import annotations

from datetime import datetime

from m1nd import ledger
from m1nd.clock import stamp
from m1nd.held import held_off_machine, held_text, held_ts
from m1nd.reports import store
from m1nd.reports.itemize import holder
from m1nd.reports.period import profile_boxes
from m1nd.reports.mailbox import WAITING, observe
from m1nd.reports.profiles import Profile
from m1nd.run import Run


def alert(run: Run, profile: Profile, now: datetime, emit) -> list[dict]:
    """`emit(found)` prints the alerts; only then are they recorded."""
    paths = run.paths
    with store.profile_lock(paths, profile.name):
        union, _ = observe(run, stamp(now))
        done = store.load_alerted(paths, profile.name)
        boxes = profile_boxes(run, profile)
        classes = set(profile.alert_classes)
        found = []
        try:
            candidates = {}
            for cls in sorted(classes):
                for row in union.model.letters(where="l.class = ?", args=(cls,)):
                    candidates[row.digest] = row
            entries = ledger.load(paths) if candidates else {}
            holders = {d: holder(union, d, boxes) for d in candidates if d in entries and d not in done}
            # a held letter's text never leaves, to no sink (mailbox contract section 4)
            held_kinds = {d: held_off_machine(union.model, d) for d in holders}
        finally:
            union.model.close()
        for digest, letter in candidates.items():
            e = entries.get(digest)
            if e is None or digest in done:
                continue
            held = held_kinds.get(digest)  # wherever it lives
            found.append({"id": letter.id, "digest": digest, "class": letter.klass,
                          "what": held_text(held) if held else letter.what, "agent": "" if held else letter.agent,
                          "ts": held_ts(letter.ts) if held else letter.ts, "observed_at": e.observed_at,
                          "box": holders.get(digest) or WAITING}
                         | ({"held": held} if held else {}))
        found.sort(key=lambda a: (a["observed_at"], a["ts"], a["id"], a["digest"]))
        emit(found)
        store.add_alerted(paths, profile.name, [a["digest"] for a in found])
    return found
