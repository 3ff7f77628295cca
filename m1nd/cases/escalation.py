"""Escalation at the second witness (cases.md 2), the step filing commands run
right after distribution (`m1nd distribute`, `m1nd sweep` without
`--no-distribute`, the pre-commit hook installed with `--stage`).

For each fingerprint with two witnesses or more and no escalation in the union yet,
one escalation letter goes into the box that holds the second witness.  When the
second witness is in no box on this machine (it waits for a repository this machine
lacks, or it is held), the first later witness that is in a box takes it, so one
waiting witness never silences a recurring symptom.  With no witness after the first
in a box, the escalation waits like any letter.

The step decides from the witness index (witnesses.py), which it keeps current with
the new lines of the spool and the boxes; it never builds the read model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from m1nd.fsutil import lock_for
from m1nd.run import Run

if TYPE_CHECKING:
    from m1nd.cases.source import Cases

# The folds, fingerprints and overlays are imported where they are used: every filing
# command runs this step, and with nothing new it only asks the witness index.


@dataclass(frozen=True)
class Escalated:
    filed: tuple[tuple[str, str, str], ...]  # (fingerprint, escalation id, box label) newly filed
    waiting: tuple[str, ...]  # fingerprints whose second witness is not in a box yet
    problems: tuple[str, ...]
    notes: tuple[str, ...] = ()  # said once on stderr (the witness index's database was rebuilt)


def overlay_of(cases: Cases, allowed: dict | None = None, runs: dict | None = None):
    from m1nd.cases.overlay import compute

    return compute(cases.fold, cases.kindless, cases.run.markers, allowed, runs)


def escalate(run: Run, receipt=None, gate=None) -> Escalated:
    """Escalate every fingerprint that needs it, deciding from the witness index
    (witnesses.py), brought current with what is new in the spool and the boxes:
    a filing never builds the read model.  `receipt`: the distribution just run (its
    `handover` says what it knows of the lines it filed: the spool's new lines are
    looked at here too, once the filing has loaded the compiled secret rules); `gate`:
    which boxes this filing may write (gitops/safety.py: a consented box waits while
    git is busy, and for a hook that may not write it), by default a command the user runs."""
    from m1nd.cases.witnesses import Index, Looked

    handover = getattr(receipt, "handover", None)  # what the filing knows of the lines it filed
    looked = Looked(handover.observed, handover.appended, handover.read) if handover is not None else Looked()
    with lock_for(run.paths.locks, "distribute", run.paths.state), Index(run, looked) as index:
        index.update()
        if index.arrived:
            from m1nd.cases import engine

            # Box lines that came by git are observed by this filing, as its spool lines
            # are (reports contract section 2): a report never waits for a read to see them.
            engine.observe_digests(run, index.arrived)
        notes = tuple(index.notes)
        # Nothing new looked at and nothing left waiting: nothing can need an escalation.
        if not index.changed and not index.undecided():
            return Escalated((), (), (), notes)
        if gate is None:
            from m1nd.gitops.safety import Gate

            gate = Gate()
        escalated = _escalate(run, index, gate)
        # A waiting (or failed) escalation is tried again at every filing, until its
        # witness is in a box that may be written.
        index.set_undecided(bool(escalated.problems or escalated.waiting))
        return dataclasses.replace(escalated, notes=notes)


def _escalate(run: Run, index, gate) -> Escalated:
    from m1nd import boxes
    from m1nd.cases import engine
    from m1nd.cases import fingerprints as fps
    from m1nd.letters import letter_id

    filed, waiting, problems = [], [], []
    for entry in index.unescalated():
        first, second = entry.witnesses[0], entry.witnesses[1]
        holder, box = filing_witness(index, entry.witnesses)
        verdict = gate.verdict(box) if box is not None else None
        # No witness in a box yet, or not now: git is busy, or a hook has no time left to
        # write a consented box (a late write would leave the tracked box changed).
        if verdict is None or not verdict.ok or (verdict.consented and not gate.in_time()):
            waiting.append(entry.fingerprint)
            continue
        _, kind = fps.split(entry.fingerprint)
        raw = engine.escalation(entry.fingerprint, kind, first, second, holder)
        try:
            if engine.file_into(run, box, [raw], gate if verdict.consented else None):
                filed.append((entry.fingerprint, letter_id(raw), box.label))
        except boxes.Refused as exc:
            problems.append(f"escalation of {entry.fingerprint} not filed: box {box.label} refused: {exc}")
        except OSError as exc:
            problems.append(f"escalation of {entry.fingerprint} not filed: cannot write {box.path}: "
                            f"{exc.strerror or exc}")
    return Escalated(tuple(filed), tuple(waiting), tuple(problems))


def filing_witness(cases, witnesses):
    """The witness whose box takes the escalation (cases.md 2): the second witness, or
    when it is in no box on this machine, the first later witness that is in one.
    Returns (witness, box), or (None, None) while no witness after the first is in a box."""
    for witness in witnesses[1:]:  # `cases`: anything with box_of (the witness index)
        box = cases.box_of(witness.digest)
        if box is not None:
            return witness, box
    return None, None


def after_distribution(run: Run, receipt, gate=None):
    """The call site's one line, right after a distribution that wrote: escalate, and
    return the receipt with any escalation problem added to its notes (a failure here
    never fails the distribution: the letters are filed, escalation catches up at the
    next filing)."""
    import sqlite3

    from m1nd.errors import M1ndError

    if receipt is None:
        return None
    try:
        escalated = escalate(run, receipt, gate)
        problems = escalated.notes + escalated.problems
    except M1ndError as exc:
        problems = (f"escalation skipped: {exc.message}",)
    except OSError as exc:
        problems = (f"escalation skipped: {exc.filename or ''} {exc.strerror or exc}".strip(),)
    except sqlite3.Error as exc:  # the index's database (witnesses.py): derived, rebuilt later
        problems = (f"escalation skipped: {exc}",)
    # The receipt no longer carries what the filing observed: the step was its one reader.
    return dataclasses.replace(receipt, notes=receipt.notes + problems, handover=None)
