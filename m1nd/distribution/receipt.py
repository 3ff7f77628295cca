"""What a distribution says: the receipt, counted over the whole spool.

A run keeps per (brain, repo) pair counts in its state (cursor.py), so that the
receipt always describes the whole spool ("filed now or earlier") exactly as a
first run would, however little of it this run read.  Also here: the coverage
ledger a filing records (reports).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from m1nd.cursor import State
from m1nd.errors import M1ndError
from m1nd.routing import MEDULLA, PROJECT
from m1nd.run import Run
from m1nd.words import plural


@dataclass(frozen=True)
class BoxProblem:
    """A box that could not be written: refused, or failing at the write call."""

    label: str
    path: str
    reason: str


@dataclass(frozen=True)
class Handover:
    """What a filing knows of the lines it read and appended, for the witness index
    (cases/witnesses.py) to look at the same lines in the boxes without parsing them again."""

    appended: dict  # {box path: [(offset, length, crc32 of the bytes, digest of each line)]}
    read: tuple[int, int, int, int]  # (dev, ino, start, end) of the spool stretch read
    observed: dict | None = None  # digests of the letters recorded in the coverage ledger


@dataclass(frozen=True)
class Receipt:
    spool_total: int
    appended: int
    to_project: int
    to_medulla: int
    pending: tuple[str, ...]
    problems: tuple[BoxProblem, ...] = ()
    pending_letters: int = 0
    appended_by_box: tuple[tuple[str, int], ...] = ()  # (box path, letters newly appended)
    held: int = 0
    notes: tuple[str, ...] = ()  # state that did not verify and was rebuilt; letters that wait
    waiting_by_box: tuple[tuple[str, int], ...] = ()  # (box path, letters waiting for a safe filing)
    malformed: tuple[int, ...] = ()  # spool line numbers read this run that are malformed (never filed)
    # What the escalation step after this run needs not work out again (Handover).
    # Not part of what a receipt says.
    handover: Handover | None = field(default=None, compare=False, repr=False)

    def appended_to(self, box_path: str) -> int:
        return dict(self.appended_by_box).get(box_path, 0)

    def waiting_for(self, box_path: str) -> int:
        return dict(self.waiting_by_box).get(box_path, 0)

    def as_json(self) -> dict:
        return {
            "spool_total": self.spool_total,
            "appended": self.appended,
            "to_project": self.to_project,
            "to_medulla": self.to_medulla,
            "pending": list(self.pending),
        }


@dataclass
class _Tally:
    total: int = 0
    to_project: int = 0
    to_medulla: int = 0
    pending_letters: int = 0
    held: int = 0
    pending: set[str] = field(default_factory=set)

    def add_pairs(self, pairs, route_of) -> None:
        for pair in pairs:
            self.total += pair.count
            kind, _ = route_of(pair)
            if kind == MEDULLA:
                self.to_medulla += pair.count
                continue
            self.held += pair.held
            live = pair.count - pair.held
            if kind == PROJECT:
                self.to_project += live
            elif live:
                self.pending_letters += live
                self.pending.add(pair.route[2:])

    def add_tail(self, tail_counts: tuple[str, bool, str] | None) -> None:
        """The spool's unfinished last line, when it is a letter (reading.file_tail):
        counted, though the state does not record it."""
        if tail_counts is None:
            return
        kind, is_held, name = tail_counts
        self.total += 1
        if kind == MEDULLA:
            self.to_medulla += 1
        elif is_held:
            self.held += 1
        elif kind == PROJECT:
            self.to_project += 1
        else:
            self.pending_letters += 1
            self.pending.add(name)


def _waiting_by_box(state: State, route_of) -> dict[str, int]:
    waiting_by_box: dict[str, int] = {}
    for i, n in state.waiting.items():
        box = route_of(state.pairs[i])[1]
        if box is not None:
            waiting_by_box[box.path] = waiting_by_box.get(box.path, 0) + n
    return waiting_by_box


def _waiting_notes(waiting_by_box: dict[str, int], router) -> list[str]:
    """One note per box whose letters this filing may not write, and why."""
    notes = []
    boxes_by_path = {b.path: b for b in router.boxes_by_root.values()}
    for path, n in sorted(waiting_by_box.items()):
        box = boxes_by_path.get(path)
        verdict = router.gate.verdict(box) if box is not None else None
        if verdict is not None and not verdict.ok:
            notes.append(f"{plural(n, 'letter')} for {box.label} not filed now: {verdict.reason}")
    return notes


def receipt_of(one, filer, problems: tuple[BoxProblem, ...], tail_counts) -> Receipt:
    """The receipt of the pass `one` (flow.py) once its `filer` finished."""
    tally = _Tally()
    tally.add_pairs(one.state.pairs, one.router.route_of)
    tally.add_tail(tail_counts)
    waiting_by_box = _waiting_by_box(one.state, one.router.route_of)
    notes = list(one.notes)
    if one.write:
        notes.extend(_waiting_notes(waiting_by_box, one.router))
    return Receipt(
        spool_total=tally.total,
        appended=filer.appended,
        to_project=tally.to_project,
        to_medulla=tally.to_medulla,
        pending=tuple(sorted(tally.pending)),
        problems=problems,
        pending_letters=tally.pending_letters,
        appended_by_box=filer.appended_by_box(),
        held=tally.held,
        notes=tuple(notes),
        waiting_by_box=tuple(sorted(waiting_by_box.items())),
        malformed=tuple(one.found.malformed),
    )


def record_coverage(run: Run, seen: dict[bytes, None], receipt: Receipt) -> Receipt:
    """The coverage ledger (reports): the letters this run read (their digests taken in
    the pass), at their read time, so that a report never waits for a read command to
    notice them.  A ledger that cannot be written never stops a filing: it warns."""
    from m1nd import ledger
    from m1nd.clock import parse_now, stamp

    if not seen:
        return receipt
    try:
        ledger.record_seen(run.paths, seen, stamp(parse_now()))
    except (OSError, M1ndError) as exc:
        warning = f"coverage ledger not updated: {getattr(exc, 'message', None) or exc}"
        return replace(receipt, notes=receipt.notes + (warning,))
    return replace(receipt, handover=replace(receipt.handover, observed=seen)) if receipt.handover else receipt
