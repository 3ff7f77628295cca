"""The distribution pass: file every spool letter into the one box that owns it.

Streams the spool once; letters are batched per box and appended under each box's
lock with dedup by id, so any number of distributors may run at once.  The receipt
counts the whole spool ("filed now or earlier"), not just this run's work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from m1nd import boxes
from m1nd.boxes import Box, project_box
from m1nd.errors import M1ndError
from m1nd.letters import LETTER, MALFORMED, TAIL, iter_lines
from m1nd.paths import ensure_dir
from m1nd.routing import MEDULLA, PENDING, PROJECT
from m1nd.run import Run

FLUSH_BYTES = 8 << 20  # buffered letter bytes before the batches are written out


@dataclass(frozen=True)
class BoxProblem:
    """A box that could not be written: refused, or failing at the write call."""

    label: str
    path: str
    reason: str


@dataclass(frozen=True)
class Receipt:
    spool_total: int
    appended: int
    to_project: int
    to_medulla: int
    pending: tuple[str, ...]
    problems: tuple[BoxProblem, ...] = ()
    malformed: tuple[int, ...] = ()  # spool line numbers
    unfinished_tail: int | None = None
    pending_letters: int = 0
    appended_by_box: tuple[tuple[str, int], ...] = ()  # (box path, letters newly appended)

    def appended_to(self, box_path: str) -> int:
        return dict(self.appended_by_box).get(box_path, 0)

    def as_json(self) -> dict:
        return {
            "spool_total": self.spool_total,
            "appended": self.appended,
            "to_project": self.to_project,
            "to_medulla": self.to_medulla,
            "pending": list(self.pending),
        }


@dataclass
class _Batch:
    box: Box
    raws: list[bytes] = field(default_factory=list)
    appended: int = 0
    index: boxes.BoxIndex = field(default_factory=boxes.BoxIndex)
    problem: str | None = None


class _Filer:
    """Buffers letters per box and appends them in large locked batches."""

    def __init__(self, run: Run, write: bool) -> None:
        self.run = run
        self.write = write
        self.batches: dict[str, _Batch] = {}
        self.buffered = 0
        self.appended = 0

    def add(self, box: Box, raw: bytes) -> None:
        if not self.write:
            return
        batch = self.batches.get(box.path)
        if batch is None:
            batch = self.batches[box.path] = _Batch(box, problem=boxes.refusal(box))
        if batch.problem:
            return
        batch.raws.append(raw)
        self.buffered += len(raw)
        if self.buffered >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.batches:
            return
        ensure_dir(self.run.paths.home)
        for batch in self.batches.values():
            if batch.problem or not batch.raws:
                continue
            try:
                n = boxes.append(batch.box, batch.raws, self.run.paths.locks, batch.index)
                batch.appended += n
                self.appended += n
            except boxes.Refused as exc:
                batch.problem = str(exc)
            except OSError as exc:
                batch.problem = f"cannot write {batch.box.path}: {exc.strerror or exc}"
            batch.raws = []
        self.buffered = 0

    def appended_by_box(self) -> tuple[tuple[str, int], ...]:
        return tuple((path, b.appended) for path, b in self.batches.items() if b.appended)

    def problems(self) -> tuple[BoxProblem, ...]:
        return tuple(
            BoxProblem(b.box.label, b.box.path, b.problem) for b in self.batches.values() if b.problem
        )


def distribute(run: Run, write: bool = True) -> Receipt:
    """File the spool into boxes (or, with write=False, only work out where it goes)."""
    filer = _Filer(run, write)
    medulla = run.medulla
    project_boxes: dict[str, Box] = {}
    total = to_project = to_medulla = pending_letters = 0
    pending: set[str] = set()
    malformed: list[int] = []
    tail = None
    try:
        fh = open(run.paths.spool, "rb")
    except FileNotFoundError:
        return Receipt(0, 0, 0, 0, ())
    except OSError as exc:
        raise M1ndError(f"cannot read spool {run.paths.spool}: {exc.strerror}") from None
    with fh:
        try:
            if os.path.isdir(run.paths.spool):
                raise IsADirectoryError(21, "Is a directory")
            for line in iter_lines(fh):
                if line.outcome != LETTER:
                    if line.outcome == MALFORMED:
                        malformed.append(line.number)
                    elif line.outcome == TAIL:
                        tail = line.number
                    continue
                letter = line.letter
                total += 1
                route = run.roots.resolve(letter.brain, letter.repo)
                if route.kind == PROJECT:
                    to_project += 1
                    box = project_boxes.get(route.root.path)
                    if box is None:
                        box = project_boxes[route.root.path] = project_box(route.root)
                    filer.add(box, line.raw)
                elif route.kind == MEDULLA:
                    to_medulla += 1
                    filer.add(medulla, line.raw)
                else:
                    assert route.kind == PENDING
                    pending_letters += 1
                    pending.add(route.name)
        except OSError as exc:
            raise M1ndError(f"cannot read spool {run.paths.spool}: {exc.strerror}") from None
    filer.flush()
    return Receipt(
        spool_total=total,
        appended=filer.appended,
        to_project=to_project,
        to_medulla=to_medulla,
        pending=tuple(sorted(pending)),
        problems=filer.problems(),
        malformed=tuple(malformed),
        unfinished_tail=tail,
        pending_letters=pending_letters,
        appended_by_box=filer.appended_by_box(),
    )
