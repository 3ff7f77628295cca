"""`m1nd doctor`: health checks and the mailbox block (contract section 8).

The facts doctor gathers and its own checks of them are doctorchecks.py's; this
module gathers them (from the read model, or from the files alone) and reports.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import date, datetime

from m1nd.boxes import Refused, read_box
from m1nd.checks import ERROR, OK, WARN, Check  # noqa: F401 (doctor's callers import them from here)
from m1nd.distribute import distribute
from m1nd.doctorchecks import (
    BoxFacts, SpoolFacts, _boxes_check, _held_check, _pending_check, _roster_check, _spool_check)
from m1nd.errors import M1ndError
from m1nd.letters import FileRead, read_file
from m1nd.routing import MEDULLA
from m1nd.run import Run
from m1nd.secrets import held_in_batch
from m1nd.sweep import MISDELIVERY

SCHEMA = "m1nd-doctor-v0"
CONFLICT_MARKERS = (b"<<<<<<< ", b"=======", b">>>>>>> ")
_DAY = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})")
_EPOCH = date(1970, 1, 1)


@dataclass(frozen=True)
class Report:
    mailbox: dict | None
    checks: list[Check]

    @property
    def failed(self) -> bool:
        return any(c.status == ERROR for c in self.checks)

    def as_json(self) -> dict:
        return {"schema": SCHEMA, "mailbox": self.mailbox, "checks": [c.as_json() for c in self.checks]}


def day_number(ts: str) -> int | None:
    """Days since 1970-01-01 of a `YYYY-MM-DD…` timestamp, or None when unparseable."""
    m = _DAY.match(ts)
    if not m:
        return None
    try:
        return (date(int(m[1]), int(m[2]), int(m[3])) - _EPOCH).days
    except ValueError:
        return None


def mailbox_block(spool: SpoolFacts, pending: tuple[str, ...], spool_path: str, now: datetime) -> dict:
    now_day = (now.date() - _EPOCH).days
    recent = 0
    for prefix, n in spool.misdelivered_days.items():
        day = day_number(prefix)
        if day is not None and now_day - day <= 7 and day <= now_day + 1:
            recent += n
    return {
        "memory_misdelivery": sum(spool.misdelivered_days.values()),
        "confusion_rate_7d": recent,
        "spool_letters": spool.letters,
        "pending_distribution": list(pending),
        "spool_path": spool_path,
    }


def _conflict_lines(path: str) -> list[int]:
    found = []
    try:
        with open(path, "rb") as fh:
            for number, line in enumerate(fh, 1):
                if line.startswith(CONFLICT_MARKERS):
                    found.append(number)
    except OSError:
        pass
    return found


def box_facts_from_files(run: Run) -> list[BoxFacts]:
    out = []
    for box in run.boxes():
        try:
            found = read_box(box)
        except Refused as exc:
            out.append(BoxFacts(box.label, box.path, f"{box.label} refused: {exc}", [], [], None))
            continue
        except OSError as exc:
            out.append(BoxFacts(box.label, box.path, f"{box.label}: cannot read {box.path}: {exc.strerror}", [], [],
                                None))
            continue
        conflicts = _conflict_lines(box.path)
        held = () if box.is_medulla else _held_lines(found.letters)
        out.append(BoxFacts(box.label, box.path, None, [n for n in found.malformed if n not in conflicts], conflicts,
                            found.unfinished_tail, held))
    return out


def _held_lines(numbered) -> tuple:
    """(line, id, kind) of the box lines carrying a likely secret (missions too)."""
    kinds = held_in_batch([letter.raw for _, letter in numbered])
    return tuple((numbered[i][0], numbered[i][1].id, kind) for i, kind in sorted(kinds.items()))


def held_letters(run: Run, spool: FileRead) -> list[tuple[int, str, str, str, str]]:
    """(line number, letter id, kind of secret, repo, class) of every spool letter held back from
    a project box.  Letters for the medulla box are never held."""
    bound = [(number, letter) for number, letter in spool.letters
             if run.roots.resolve(letter.brain, letter.repo).kind != MEDULLA]
    held = held_in_batch([letter.raw for _, letter in bound])
    return [(bound[i][0], bound[i][1].id, kind, bound[i][1].repo, bound[i][1].klass)
            for i, kind in sorted(held.items())]


def spool_facts_from_files(run: Run, spool: FileRead) -> SpoolFacts:
    misdelivered = {hashlib.sha256(l.raw).digest(): l.ts for _, l in spool.letters
                    if l.klass == MISDELIVERY and not l.is_mission}
    days: dict[str, int] = {}
    for ts in misdelivered.values():
        days[ts[:10]] = days.get(ts[:10], 0) + 1
    answered = {a for _, l in spool.letters for a in l.answers}
    return SpoolFacts(len(spool.letters), list(spool.malformed), spool.unfinished_tail, days,
                      held_letters(run, spool), answered)


def diagnose_files(run: Run, now: datetime) -> Report:
    """The report from the files alone (the reference the read model is held to)."""
    spool_error = None
    spool = None
    try:
        if os.path.isdir(run.paths.spool):
            raise IsADirectoryError(21, "Is a directory")
        spool = read_file(run.paths.spool)
    except OSError as exc:
        spool_error = f"cannot read spool {run.paths.spool}: {exc.strerror}"
    pending: tuple[str, ...] = ()
    pending_count = 0
    if spool is not None:
        try:
            plan = distribute(run, write=False)
            pending, pending_count = plan.pending, plan.pending_letters
        except M1ndError as exc:
            spool_error = exc.message
    facts = spool_facts_from_files(run, spool) if spool is not None else None
    from m1nd.gitops.health import unfiled_from_files

    unfiled = unfiled_from_files(run, spool) if spool is not None and not spool_error else None
    return _report(run, now, facts, spool_error, pending, pending_count, box_facts_from_files(run), unfiled)


def _report(run, now, facts, spool_error, pending, pending_count, boxes, unfiled=None, shared=None) -> Report:
    """`shared`: the ids two different letters share (from the read model), else read
    from the files."""
    from m1nd.cases.health import cases_check
    from m1nd.gitops.health import consent_check, git_check
    from m1nd.idcheck import ids_check, ids_check_of

    # The mailbox block needs the real roster: without it, it says nothing (the roster
    # check says why) rather than pending names an empty roster would give.
    readable = facts is not None and not spool_error and not run.setup_problems
    mailbox = mailbox_block(facts, pending, run.paths.spool, now) if readable else None
    seen: dict = {}  # each box's git state, asked once for both checks
    checks = [
        _spool_check(run, facts, spool_error),
        _boxes_check(boxes),
        _roster_check(run),
        _pending_check(pending, pending_count, run.roots.ambiguous),
        _held_check(facts if not spool_error else None, boxes),
        consent_check(run, seen),
        git_check(run, unfiled, seen),
        ids_check(run) if shared is None else ids_check_of(shared),
        cases_check(run),
    ]
    return Report(mailbox, checks)


def diagnose(run: Run, now: datetime, model=None) -> Report:
    """The report, from the read model (opened here unless given)."""
    from m1nd.readmodel import open_model

    try:
        own = model is None
        if own:
            model = open_model(run)
    except M1ndError as exc:
        return _report(run, now, None, exc.message, (), 0, box_facts_from_files(run))
    try:
        spool = model.spool
        facts = SpoolFacts(model.line_count(spool), model.malformed(spool), model.tail(spool),
                           model.spool_misdelivered_days(), model.held(), model.spool_answered)
        plan = model.plan()
        boxes = []
        for source in model.boxes:
            if source.problem:
                message = (f"{source.label}: {source.problem}" if source.problem.startswith("cannot read")
                           else f"{source.label} refused: {source.problem}")
                boxes.append(BoxFacts(source.label, source.path, message, [], [], None))
                continue
            conflicts = model.conflict_lines(source)
            boxes.append(BoxFacts(source.label, source.path, None,
                                  [n for n in model.malformed(source) if n not in conflicts], conflicts,
                                  model.tail(source), () if source.root is None else tuple(model.held_in(source))))
        return _report(run, now, facts, None, plan.pending, plan.pending_letters, boxes, model.unfiled,
                       model.shared_ids())
    finally:
        if own:
            model.close()
