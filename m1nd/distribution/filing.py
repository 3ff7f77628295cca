"""Filing: letters buffered per box and written out in large batches.

At each flush a batch holds back its likely secrets (secrets.py: held letters are
never filed into a project box) and appends the rest in one write under the box's
lock, with dedup by id (boxes.py, boxindex.py).  A box this filing may not write
(gitops/safety.py) is left alone: its letters are counted waiting.
"""

from __future__ import annotations

import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field

from m1nd import boxes
from m1nd.boxes import Box
from m1nd.boxindex import BoxIndex
from m1nd.cursor import Pair
from m1nd.distribution.receipt import BoxProblem
from m1nd.gitops.safety import WAIT_FOR_SAFE, Gate
from m1nd.reports.faults import pause
from m1nd.run import Run
from m1nd.secrets import compiling, held_in_batch, likely_secret

FLUSH_BYTES = 16 << 20  # buffered letter bytes before the batches are written out
WAIT_BYTES = 48 << 20  # buffered while the secret rules compile, before a flush waits for them


@contextmanager
def naming(path: str | None):
    """Name the file an OSError was about: a call on a descriptor (write, fsync)
    fails with no file name, and "No space left on device" alone does not say
    where.  (An atomic rewrite fails naming its temp file: the file meant is `path`.)"""
    try:
        yield
    except OSError as exc:
        if path:
            exc.filename, exc.filename2 = path, None
        raise


@dataclass
class Batch:
    box: Box
    ids: list[bytes] = field(default_factory=list)  # dedup keys: full sha256 digests
    raws: list[bytes] = field(default_factory=list)
    pairs: list[int] = field(default_factory=list)  # pair index, or -1: held not counted
    index: BoxIndex | None = None
    appended: int = 0
    problem: str | None = None
    wait: str | None = None  # why this filing leaves the box alone (safety.py)
    consented: bool = False  # git does not ignore the box
    refiled: set[bytes] = field(default_factory=set)  # digests filed again: skipped when git holds them
    drop_index: bool = False  # letters left out that the state counts as filed: re-check the box next time
    leaned: str | None = None  # fingerprint of the refs that held letters this run left out
    filed: list[bytes] = field(default_factory=list)  # digests appended to a consented box: the filing record


class Filer:
    """Buffers letters per box; at each flush, holds back likely secrets (project
    boxes only) and appends the rest in one locked write per box."""

    def __init__(self, run: Run, pairs: list[Pair], write: bool, gate: Gate) -> None:
        self.run = run
        self.pairs = pairs
        self.write = write
        self.gate = gate
        self.batches: dict[str, Batch] = {}
        self.buffered = 0
        self.appended = 0
        self.waited: dict[int, int] = {}  # pair -> letters of this run left waiting
        self.written: dict[str, list] = {}  # Handover.appended

    def add(self, box: Box, lid: bytes, raw: bytes, pair: int, refiled: bool = False) -> None:
        batch = self.batches.get(box.path)
        if batch is None:
            batch = self.batches[box.path] = Batch(box)
            if self.write:
                verdict = self.gate.verdict(box)
                batch.wait, batch.consented = (None if verdict.ok else verdict.reason), verdict.consented
                if batch.wait is None:
                    batch.problem = boxes.refusal(box)
                    batch.index = BoxIndex(box.path, self.run.paths.state)
        if batch.wait is not None:  # not now: the pair is read back at a filing that may write the box
            if pair < 0 and batch.index is not None:
                batch.drop_index = True  # the hook ran out of time (_too_late) on a letter filed again
            elif pair >= 0:
                if likely_secret(raw):  # held, as a flush would count it: it never waits for a box
                    self.pairs[pair].held += 1
                else:
                    self.waited[pair] = self.waited.get(pair, 0) + 1
            return
        if refiled:
            batch.refiled.add(lid)
        batch.ids.append(lid)
        batch.raws.append(raw)
        batch.pairs.append(pair)
        self.buffered += len(raw)
        if self.buffered >= FLUSH_BYTES and (self.buffered >= WAIT_BYTES or not compiling()):
            self.flush()

    def flush(self) -> None:
        for batch in self.batches.values():
            if not batch.raws:
                continue
            ids, raws = batch.ids, batch.raws
            if not batch.box.is_medulla:
                held = held_in_batch(raws)
                if held:
                    for i in held:
                        if batch.pairs[i] >= 0:
                            self.pairs[batch.pairs[i]].held += 1
                    ids = [x for i, x in enumerate(ids) if i not in held]
                    raws = [x for i, x in enumerate(raws) if i not in held]
            if self.write and not batch.problem and raws and batch.consented:
                if not self.gate.in_time():
                    self._too_late(batch)
                    raws = []
                else:
                    pause("consented-append")
            if self.write and not batch.problem and raws:
                written: list = []
                try:
                    n = boxes.append(batch.box, ids, raws, self.run.paths.locks, batch.index,
                                     exclude=self._committed_filter(batch),
                                     appended=batch.filed if batch.consented else None, written=written)
                    batch.appended += n
                    self.appended += n
                    for offset, data, digests in written:
                        if data[:1] != b"\n":  # (a box whose last line was cut short: scanned)
                            self.written.setdefault(batch.box.path, []).append(
                                (offset, len(data), zlib.crc32(data), digests))
                except boxes.Refused as exc:
                    batch.problem = str(exc)
                except OSError as exc:
                    batch.problem = f"cannot write {batch.box.path}: {exc.strerror or exc}"
            batch.ids, batch.raws, batch.pairs = [], [], []
        self.buffered = 0

    def _too_late(self, batch: Batch) -> None:
        """The hook gave up (or is about to): this consented box's letters wait for the
        next safe filing.  Letters of this run's pairs are counted waiting; letters filed
        again (or a spool tail) are found missing again because the box's index is
        dropped (then a filing re-checks the box)."""
        batch.wait = "the hook ran out of time: " + WAIT_FOR_SAFE
        for pair in batch.pairs:
            if pair >= 0:
                self.waited[pair] = self.waited.get(pair, 0) + 1
            else:
                batch.drop_index = True
        batch.ids, batch.raws, batch.pairs = [], [], []

    def finish(self) -> list[str]:
        """Flush, fsync every box written, save their indexes; returns index notes."""
        self.flush()
        notes = []
        for batch in self.batches.values():
            if batch.index is None:
                continue
            if batch.index.problem:
                notes.append(batch.index.problem)
            if batch.appended:
                with naming(batch.box.path):
                    boxes.sync(batch.box.path)
            if batch.filed:  # after the box is on disk: the record says what it then held
                from m1nd import filed

                try:
                    filed.record(self.run.paths, batch.box.path, batch.filed)
                except OSError as exc:
                    notes.append(f"cannot write the filing record of {batch.box.path}: {exc.strerror or exc}")
            if batch.drop_index:
                batch.index.forget()
            elif not batch.problem:
                if batch.refiled:  # this run checked what git holds: remember what it leant on
                    batch.index.set_lean(batch.leaned)
                with naming(batch.index.file):
                    batch.index.save()
        return notes

    @staticmethod
    def _committed_filter(batch: Batch):
        """For a consented box: of the letters filed again that the box lacks, those git
        holds in another version of the box (a local branch, a stash) are left out.
        Asked only when the box lacks some of them, then once per run."""
        if not batch.consented or not batch.refiled:
            return None
        known: list[set[bytes]] = []

        def committed(candidates: list[bytes]) -> set[bytes]:
            again = [c for c in candidates if c in batch.refiled]
            if not again:
                return set()
            if not known:
                from m1nd.gitops.committed import committed_state

                known.extend(committed_state(batch.box.path))
            skip = {c for c in again if c in known[0]}
            if skip:
                batch.leaned = known[1] or None
            return skip

        return committed

    def waits(self) -> list[tuple[Box, str]]:
        return [(b.box, b.wait) for b in self.batches.values() if b.wait is not None]

    def appended_by_box(self) -> tuple[tuple[str, int], ...]:
        return tuple((path, b.appended) for path, b in self.batches.items() if b.appended)

    def problems(self) -> tuple[BoxProblem, ...]:
        return tuple(BoxProblem(b.box.label, b.box.path, b.problem) for b in self.batches.values() if b.problem)
