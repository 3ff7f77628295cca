"""Escalation at the second witness (cases.md 2), the step filing commands run
right after distribution (`m1nd distribute`, `m1nd sweep` without
`--no-distribute`, the pre-commit hook installed with `--stage`).

For each fingerprint with two witnesses or more and no escalation in the union yet,
one escalation letter goes into the box that holds the second witness.  A second
witness that is not in a box yet (it waits in the spool) holds its escalation back
until a later filing puts it in one: the escalation waits like any letter.
"""

from __future__ import annotations

from dataclasses import dataclass

from m1nd.cases import fingerprints as fps
from m1nd.cases.overlay import compute
from m1nd.cases.source import Cases, open_cases
from m1nd.fsutil import lock_for
from m1nd.letters import letter_id
from m1nd.run import Run


@dataclass(frozen=True)
class Escalated:
    filed: tuple[tuple[str, str, str], ...]  # (fingerprint, escalation id, box label) newly filed
    waiting: tuple[str, ...]  # fingerprints whose second witness is not in a box yet
    problems: tuple[str, ...]


def overlay_of(cases: Cases, allowed: dict | None = None, runs: dict | None = None):
    return compute(cases.fold, cases.kindless, cases.run.markers, allowed, runs)


@dataclass(frozen=True)
class Before:
    """What `before_distribution` saw of the spool."""

    witness: bool  # a line not looked at yet may be a witness
    looked: dict  # the look record, with the spool's entry moved past what was seen


def before_distribution(run: Run) -> Before | None:
    """The call sites' line before distributing: look at the spool's new bytes now, so
    that the pass after the distribution has (almost) nothing left to read.  Never fails."""
    from m1nd.cases import prescan

    try:
        witness, looked = prescan.look_at_spool(run, prescan.load(run))
    except (OSError, ValueError):
        return None
    return Before(witness, looked)


def escalate(run: Run, receipt=None, before: Before | None = None, gate=None) -> Escalated:
    """`receipt`: the distribution just run, whose own appends need no second look;
    `before`: what `before_distribution` saw of the spool; `gate`: which boxes this
    filing may write (gitops/safety.py: a consented box waits while git is busy, and
    for a hook that may not write it), by default a command the user runs."""
    from m1nd import boxes
    from m1nd.cases import engine, prescan

    with lock_for(run.paths.locks, "distribute", run.paths.state):
        looked = before.looked if before is not None else prescan.load(run)
        current = prescan.now(run)
        appended = dict(receipt.appended_by_box) if receipt is not None else {}
        if not (before is not None and before.witness) and not prescan.anything_new(run, looked, current, appended):
            if current != looked:
                prescan.save(run, current)
            return Escalated((), (), ())
        if gate is None:
            from m1nd.gitops.safety import Gate

            gate = Gate()
        escalated = _escalate(run, boxes, engine, gate)
        # What was looked at is remembered only when nothing waits or failed: a waiting
        # escalation must be tried again at every filing, until its witness is in a box.
        if not escalated.problems and not escalated.waiting:
            prescan.save(run, prescan.now(run))  # after our own appends (never witnesses)
        return escalated


def _escalate(run: Run, boxes, engine, gate) -> Escalated:
    with open_cases(run) as cases:
        overlay = overlay_of(cases)
        filed, waiting, problems = [], [], []
        for entry in overlay.entries:
            if len(entry.witnesses) < 2 or entry.escalations:
                continue
            first, second = entry.witnesses[0], entry.witnesses[1]
            box = cases.box_of(second.digest)
            verdict = gate.verdict(box) if box is not None else None
            # Not in a box yet, or not now: git is busy, or a hook has no time left to
            # write a consented box (a late write would leave the tracked box changed).
            if verdict is None or not verdict.ok or (verdict.consented and not gate.in_time()):
                waiting.append(entry.fingerprint)
                continue
            _, kind = fps.split(entry.fingerprint)
            raw = engine.escalation(entry.fingerprint, kind, first, second)
            try:
                if engine.file_into(run, box, [raw], gate if verdict.consented else None):
                    filed.append((entry.fingerprint, letter_id(raw), box.label))
            except boxes.Refused as exc:
                problems.append(f"escalation of {entry.fingerprint} not filed: box {box.label} refused: {exc}")
            except OSError as exc:
                problems.append(f"escalation of {entry.fingerprint} not filed: cannot write {box.path}: "
                                f"{exc.strerror or exc}")
    return Escalated(tuple(filed), tuple(waiting), tuple(problems))


def after_distribution(run: Run, receipt, before: Before | None = None, gate=None):
    """The call site's one line, right after a distribution that wrote: escalate, and
    return the receipt with any escalation problem added to its notes (a failure here
    never fails the distribution: the letters are filed, escalation catches up at the
    next filing)."""
    import dataclasses

    from m1nd.errors import M1ndError

    if receipt is None:
        return None
    try:
        problems = escalate(run, receipt, before, gate).problems
    except M1ndError as exc:
        problems = (f"escalation skipped: {exc.message}",)
    except OSError as exc:
        problems = (f"escalation skipped: {exc.filename or ''} {exc.strerror or exc}".strip(),)
    return dataclasses.replace(receipt, notes=receipt.notes + problems) if problems else receipt
