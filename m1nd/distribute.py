"""The distribution pass: file every spool letter into the one box that owns it.

A run reads only what is new in the spool since the cursor (see cursor.py), files
letters in large batches under each box's lock with dedup by id (boxindex.py), and
keeps per (brain, repo) pair counts so that the receipt always describes the whole
spool ("filed now or earlier") exactly as a first run would.

When the roots change every pair is routed again (waiting pairs are, every run); a
pair that now resolves to a different project box has its letters read back from
their logged spool locations and filed there.  The same refiling serves a box
deleted or emptied outside m1nd, and a box that was refused or failed at the write
call, whose pairs stay marked until the box takes them (the cursor moves on).  A
spool that was replaced, truncated or rewritten, state that does not verify, or a
pair moving to or from the medulla box means a full rescan.  Held letters
(secrets.py) are never filed into a project box.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable

import orjson

from m1nd import boxes, jsonout
from m1nd.boxes import Box, project_box
from m1nd.boxindex import BoxIndex
from m1nd.cursor import LOCATION, Pair, State, StateCorrupt, Store, mark_spool, spool_unchanged
from m1nd.errors import M1ndError
from m1nd.fsutil import gc_paused, lock_for, open_regular
from m1nd.gitops.safety import WAIT_FOR_SAFE, Gate
from m1nd.letters import iter_raw, load
from m1nd.paths import ensure_home
from m1nd.routing import MEDULLA, PENDING, PROJECT, Route
from m1nd.run import Run
from m1nd.reports.faults import pause
from m1nd.secrets import compiling, held_in_batch, likely_secret, preload, use_cache
from m1nd.words import plural

FLUSH_BYTES = 16 << 20  # buffered letter bytes before the batches are written out
WAIT_BYTES = 48 << 20  # buffered while the secret rules compile, before a flush waits for them
PRELOAD_BYTES = 4 << 20  # a read this large compiles the secret rules in a thread meanwhile
PENDING_BATCH = 4096  # letters bound for no box yet, checked for secrets in one batch
PROGRESS_EVERY = 1 << 16  # lines between progress callbacks

Progress = Callable[[int, int], None]


@contextmanager
def _naming(path: str | None):
    """Name the file an OSError was about: a call on a descriptor (write, fsync)
    fails with no file name, and "No space left on device" alone does not say
    where.  (An atomic rewrite fails naming its temp file: the file meant is `path`.)"""
    try:
        yield
    except OSError as exc:
        if path:
            exc.filename, exc.filename2 = path, None
        raise


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


def route_key(route: Route) -> str:
    if route.kind == PROJECT:
        return "p\0" + route.root.path
    if route.kind == MEDULLA:
        return "m"
    return "n\0" + route.name


def roots_digest(run: Run) -> str:
    """Everything routing depends on besides the letters themselves."""
    roots = [[r.path, r.real, r.label, r.reachable] for r in run.roots.roots]
    data = [roots, run.roots.base, run.roots.home, os.environ.get("HOME", "")]
    return hashlib.sha256(jsonout.record(data)).hexdigest()[:16]  # a root may not be UTF-8


@dataclass
class _Batch:
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


class _Filer:
    """Buffers letters per box; at each flush, holds back likely secrets (project
    boxes only) and appends the rest in one locked write per box."""

    def __init__(self, run: Run, pairs: list[Pair], write: bool, gate: Gate) -> None:
        self.run = run
        self.pairs = pairs
        self.write = write
        self.gate = gate
        self.batches: dict[str, _Batch] = {}
        self.buffered = 0
        self.appended = 0
        self.waited: dict[int, int] = {}  # pair -> letters of this run left waiting
        self.written: dict[str, list] = {}  # Handover.appended

    def add(self, box: Box, lid: bytes, raw: bytes, pair: int, refiled: bool = False) -> None:
        batch = self.batches.get(box.path)
        if batch is None:
            batch = self.batches[box.path] = _Batch(box)
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

    def _too_late(self, batch: _Batch) -> None:
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
                with _naming(batch.box.path):
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
                with _naming(batch.index.file):
                    batch.index.save()
        return notes

    @staticmethod
    def _committed_filter(batch: _Batch):
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


class _Pass:
    """One distribution run over an open spool."""

    def __init__(self, run: Run, fd: int, write: bool, progress: Progress | None, gate: Gate | None = None) -> None:
        self.run = run
        self.gate = gate or Gate()
        self.deferred: set[int] = set()  # moved pairs whose box this filing may not write
        self.fd = fd
        self.write = write
        self.progress = progress
        self.store = Store(run.paths.state) if write else None
        self.notes: list[str] = []
        self.state = State()
        self.kept_locations = 0
        self.records = bytearray()
        self.boxes_by_root = {r.path: project_box(r) for r in run.roots.roots}
        self.medulla = run.medulla
        self.digest = roots_digest(run)
        self.moved: set[int] = set()  # pairs whose letters are filed again from their locations
        self.refile: list[tuple[int, bytes]] = []  # (pair, raw) of those letters, checked (read_moved)
        self.malformed: list[int] = []  # malformed spool lines read this run
        self.handover: Handover | None = None
        self.seen: dict[bytes, None] = {}  # sha256 of each letter read this run, once each (the coverage ledger)

    # -- state -----------------------------------------------------------------
    def start(self) -> None:
        """Pick up where the last run stopped, or start over."""
        state = None
        if self.store is not None:
            self.store.sweep_temp_files()
            try:
                state = self.store.load()
            except StateCorrupt as exc:
                self.notes.append(f"distribution state {exc}: rescanned the spool")
        if state is not None and state.mark is not None and spool_unchanged(state.mark, self.fd):
            self.state = state
            self.kept_locations = state.locations
            same_roots = state.roots == self.digest
            if (same_roots and self.recheck_pending() or not same_roots and self.reroute()) and self.routes_known():
                self.refile_lost_boxes()
                # Pairs an earlier run began to file again and did not finish (killed,
                # a full disk): their box may now hold part of their letters, so it is
                # neither missing nor empty any more, yet still lacks the rest.
                self.moved |= {i for i in state.refiling if i < len(state.pairs)
                               and self.route_of(state.pairs[i])[1] is not None}
                self.defer_unwritable()
                if self.read_moved():
                    self.remember_refiling()
                    return
        self.state = State(roots=self.digest)
        self.kept_locations = 0
        self.moved, self.refile, self.deferred = set(), [], set()

    def writable(self, box: Box) -> bool:
        return not self.write or self.gate.verdict(box).ok

    def defer_unwritable(self) -> None:
        """Pairs to file again whose box this filing may not write (a consented box in
        a hook, git mid-operation) are not read now: they stay marked for later."""
        for i in list(self.moved):
            box = self.route_of(self.state.pairs[i])[1]
            if box is not None and not self.writable(box):
                self.moved.discard(i)
                self.deferred.add(i)

    def routes_known(self) -> bool:
        """Every saved project route names a root of this run (else: rescan)."""
        return all(self.root_box(p.route[2:]) is not None for p in self.state.pairs if p.route.startswith("p\0"))

    def root_box(self, path: str) -> Box | None:
        """The box of the root at `path`; a git work tree nested in a root, which an
        earlier resolve made a root of its own, is adopted again (routing.py)."""
        box = self.boxes_by_root.get(path)
        if box is None:
            root = self.run.roots.nested_root(path)
            if root is not None and root.path == path:
                box = self.boxes_by_root[path] = project_box(root)
        return box

    def refile_lost_boxes(self) -> None:
        """A box deleted or emptied outside m1nd (`git clean`, `rm`) gets its letters
        again, as a first run would file them.  So does a consented box that git
        changed since m1nd last filed it (a `reset --hard`, a checkout, a merge racing
        an append), at a filing that may write it: its letters that the box lacks are
        filed again, except those git holds on a local branch or in a stash (spec/git.md
        section 3).  Boxes this filing may not write are not even looked at."""
        lost: dict[str, bool] = {}
        for i, pair in enumerate(self.state.pairs):
            kind, box = self.route_of(pair)
            if box is None or pair.count == pair.held:
                continue
            if box.path not in lost:
                lost[box.path] = self._lost(box)
            if lost[box.path]:
                self.moved.add(i)

    def _lost(self, box: Box) -> bool:
        try:
            if os.lstat(box.path).st_size == 0:
                return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
        if not self.write or box.is_medulla or not self.gate.may_write_consented(box):
            return False
        verdict = self.gate.verdict(box)
        if not (verdict.ok and verdict.consented):
            return False
        index = BoxIndex(box.path, self.run.paths.state)
        if not index.untouched():
            return True
        if index.lean:  # an earlier filing left letters to a branch or stash: still there?
            from m1nd.gitops.committed import holders

            return holders(box.path) != index.lean
        return False

    def route_of(self, pair: Pair) -> tuple[str, Box | None]:
        """The route kind of a pair and its box (None for pending)."""
        key = pair.route
        if key == "m":
            return MEDULLA, self.medulla
        if key.startswith("p\0"):
            return PROJECT, self.root_box(key[2:])
        return PENDING, None

    def recheck_pending(self) -> bool:
        """Route the waiting pairs again even when the roots did not change: a path
        can come to lie inside a root (a symlink made, a directory created), and a
        first run would file such letters.  They are few, so this is cheap."""
        return self.reroute(only_pending=True)

    def reroute(self, only_pending: bool = False) -> bool:
        """Route every pair again under changed roots.  False means: rescan fully."""
        moved: set[int] = set()
        for i, pair in enumerate(self.state.pairs):
            if only_pending and not pair.route.startswith("n\0"):
                continue
            new = route_key(self.run.roots.resolve(pair.brain, pair.repo))
            if new == pair.route:
                continue
            if new == "m" or pair.route == "m":
                return False
            pair.route = new
            if new.startswith("p\0"):
                moved.add(i)
        self.state.roots = self.digest
        self.moved |= moved
        return True

    # -- the pass --------------------------------------------------------------
    def run_pass(self, fh) -> Receipt:
        state = self.state
        pairs = state.pairs
        filer = _Filer(self.run, pairs, self.write, self.gate)
        self._refile_moved(filer)

        index = state.index()
        routes = [self.route_of(p) for p in pairs]
        resolve = self.run.roots.resolve
        records = self.records
        seen = self.seen
        pack = LOCATION.pack
        sha256 = hashlib.sha256
        offset = state.mark.offset if state.mark else 0
        first = offset
        lines = state.mark.lines if state.mark else 0
        n = lines
        size = os.fstat(self.fd).st_size
        progress = self.progress
        tail = None
        if size - offset >= PRELOAD_BYTES:
            preload()
        unrouted: list[tuple[int, bytes]] = []  # (pair, raw) of letters bound for no box yet

        def count_held() -> None:
            # Held letters bound for no box are counted (a flush counts those of boxes).
            for j in held_in_batch([r for _, r in unrouted]):
                pairs[unrouted[j][0]].held += 1
            unrouted.clear()

        for start, end, raw, terminated in iter_raw(fh, offset):
            n += 1
            if not terminated:
                tail = (raw, n)
                break
            if not raw or raw.isspace():
                offset, lines = end, n
                continue
            obj = load(raw)
            if obj is None:  # malformed: never filed (doctor names it)
                self.malformed.append(n)
                offset, lines = end, n
                continue
            key = (obj.get("brain", ""), obj.get("repo", ""))
            i = index.get(key)
            if i is None:
                i = index[key] = len(pairs)
                pair = Pair(key[0], key[1], route_key(resolve(*key)))
                pairs.append(pair)
                routes.append(self.route_of(pair))
            pairs[i].count += 1
            kind, box = routes[i]
            records += pack(i, start, len(raw))
            digest = sha256(raw).digest()
            if obj.get("kind") != "mission":
                seen[digest] = None
            if kind == MEDULLA:
                filer.add(box, digest, raw, -1)
            else:
                if kind == PROJECT:
                    filer.add(box, digest, raw, i)
                else:
                    unrouted.append((i, raw))
                    if len(unrouted) >= PENDING_BATCH and (len(unrouted) >= 8 * PENDING_BATCH or not compiling()):
                        count_held()
            offset, lines = end, n
            if progress is not None and n % PROGRESS_EVERY == 0:
                progress(end, size)

        if unrouted:
            count_held()
        tail_counts = self._tail(tail, filer) if tail else None
        self.notes.extend(filer.finish())
        problems = filer.problems()
        if self.write:
            # The cursor moves on even past a box that could not be written (refused,
            # read-only, disk full), so that one bad box does not make every later run
            # read the whole spool; its pairs are filed again from their logged
            # locations by the next run, until the box takes them.
            failed = {p.path for p in problems}
            refiling = {i for i, pair in enumerate(pairs)
                        if (box := self.route_of(pair)[1]) is not None and box.path in failed}
            self._keep_waiting(filer)
            self._save(offset, lines, sorted(refiling | set(self.state.waiting) | self.deferred))
        if progress is not None:
            progress(size, size)
        st = os.fstat(self.fd)
        self.handover = Handover(filer.written, (st.st_dev, st.st_ino, first, offset))
        return self._receipt(filer, problems, tail_counts)

    def read_moved(self) -> bool:
        """Read back the letters of the moved pairs from their logged locations.

        The location log carries no checksum, so each record is checked against the
        spool before anything is filed: it must point at one whole line that is a
        letter of its own pair.  A record that does not (a log corrupted or left by
        another state) would file garbage, or another pair's letter, into a box: the
        log is reported and the spool rescanned instead.  False means: rescan.
        """
        self.refile = []
        if not self.moved or self.store is None:
            return True
        size = os.fstat(self.fd).st_size
        try:
            records = self.store.locations_of(self.moved, self.kept_locations)
        except OSError as exc:
            self.notes.append(f"distribution state {self.store.log} unreadable ({exc.strerror}): rescanned the spool")
            return False
        pairs = self.state.pairs
        for i, start, length in records:
            before = 1 if start else 0
            data = os.pread(self.fd, length + before + 2, start - before) if start + length < size else b""
            raw = data[before:before + length]
            end = data[before + length:]
            obj = load(raw) if len(raw) == length and raw.strip() else None
            whole = (not before or data[:1] == b"\n") and (end[:1] == b"\n" or end[:2] == b"\r\n")
            if obj is None or not whole or (obj.get("brain", ""), obj.get("repo", "")) != (pairs[i].brain, pairs[i].repo):
                self.notes.append(f"distribution state {self.store.log} does not match the spool: rescanned the spool")
                return False
            self.refile.append((i, raw))
        return True

    def remember_refiling(self) -> None:
        """Save which pairs this run files again before filing them (see start)."""
        refiling = sorted(self.moved | self.deferred | set(self.state.waiting))
        if refiling != self.state.refiling:
            self.state.refiling = refiling
            with _naming(self.store.json):
                self.store.save(self.state)

    def _refile_moved(self, filer: _Filer) -> None:
        for i, raw in self.refile:
            _, box = self.route_of(self.state.pairs[i])
            filer.add(box, hashlib.sha256(raw).digest(), raw, -1, refiled=True)

    def _keep_waiting(self, filer: _Filer) -> None:
        """Count, per pair, the letters that wait for a filing that may write their box:
        pairs read back this run are done; letters deferred this run are added."""
        waiting = self.state.waiting
        for i in self.moved:
            waiting.pop(i, None)
        for i, n in filer.waited.items():
            waiting[i] = waiting.get(i, 0) + n
        for i in list(waiting):
            box = self.route_of(self.state.pairs[i])[1] if i < len(self.state.pairs) else None
            if box is None:
                del waiting[i]

    def _tail(self, tail: tuple[bytes, int], filer: _Filer) -> tuple[str, bool, str] | None:
        """A final line without `\\n`: a letter if it parses (filed and counted, but
        not recorded in the state, since a writer may still be appending), else an
        unfinished tail.  Returns (route kind, held, pending name) for a letter."""
        raw, _ = tail
        if not raw or raw.isspace():
            return None
        obj = load(raw)
        if obj is None:
            return None
        route = self.run.roots.resolve(obj.get("brain", ""), obj.get("repo", ""))
        lid = hashlib.sha256(raw).digest()
        if route.kind == MEDULLA:
            filer.add(self.medulla, lid, raw, -1)
            return MEDULLA, False, ""
        held = likely_secret(raw) is not None
        if route.kind == PROJECT and not held:
            filer.add(self.root_box(route.root.path), lid, raw, -1)
        return route.kind, held, route.name

    def _save(self, offset: int, lines: int, refiling: list[int]) -> None:
        self.state.mark = mark_spool(self.fd, offset, lines, self.state.mark)
        with _naming(self.store.log):
            self.store.append_locations(self.kept_locations, self.records)
        self.state.locations = self.kept_locations + len(self.records) // LOCATION.size
        self.state.refiling = refiling
        with _naming(self.store.json):
            self.store.save(self.state)

    def _receipt(self, filer: _Filer, problems, tail_counts) -> Receipt:
        total = to_project = to_medulla = pending_letters = held = 0
        pending: set[str] = set()
        for pair in self.state.pairs:
            total += pair.count
            kind, _ = self.route_of(pair)
            if kind == MEDULLA:
                to_medulla += pair.count
                continue
            held += pair.held
            live = pair.count - pair.held
            if kind == PROJECT:
                to_project += live
            elif live:
                pending_letters += live
                pending.add(pair.route[2:])
        if tail_counts is not None:
            kind, is_held, name = tail_counts
            total += 1
            if kind == MEDULLA:
                to_medulla += 1
            elif is_held:
                held += 1
            elif kind == PROJECT:
                to_project += 1
            else:
                pending_letters += 1
                pending.add(name)
        waiting_by_box: dict[str, int] = {}
        for i, n in self.state.waiting.items():
            box = self.route_of(self.state.pairs[i])[1]
            if box is not None:
                waiting_by_box[box.path] = waiting_by_box.get(box.path, 0) + n
        notes = list(self.notes)
        if self.write:
            boxes_by_path = {b.path: b for b in self.boxes_by_root.values()}
            for path, n in sorted(waiting_by_box.items()):
                box = boxes_by_path.get(path)
                verdict = self.gate.verdict(box) if box is not None else None
                if verdict is not None and not verdict.ok:
                    notes.append(f"{plural(n, 'letter')} for {box.label} not filed now: {verdict.reason}")
        return Receipt(
            spool_total=total,
            appended=filer.appended,
            to_project=to_project,
            to_medulla=to_medulla,
            pending=tuple(sorted(pending)),
            problems=problems,
            pending_letters=pending_letters,
            appended_by_box=filer.appended_by_box(),
            held=held,
            notes=tuple(notes),
            waiting_by_box=tuple(sorted(waiting_by_box.items())),
            malformed=tuple(self.malformed),
        )


def distribute(run: Run, write: bool = True, progress: Progress | None = None, gate: Gate | None = None) -> Receipt:
    """File the spool into boxes (or, with write=False, only work out where it goes:
    nothing is written, no state is read or kept).  `gate` says which boxes this filing
    may write (safety.py): by default, a command the user runs."""
    path = run.paths.spool
    if os.path.isdir(run.paths.home):  # the compiled secret rules are cached in the state
        use_cache(os.path.join(run.paths.state, "rules"))
    try:
        fh = open_regular(path)  # a FIFO, a device or a directory: an error, never a hang
    except OSError as exc:
        raise M1ndError(f"cannot read spool {path}: {exc.strerror}") from None
    if fh is None:
        return Receipt(0, 0, 0, 0, ())
    with fh, gc_paused():
        one = _Pass(run, fh.fileno(), write, progress, gate)
        try:
            if not write:
                return one.run_pass(fh)
            ensure_home(run.paths)
            one.gate.upgrade_earlier_births(run.roots.reachable)
            # Keyed by the state directory, which runs over different spools share.
            with lock_for(run.paths.locks, "distribute", run.paths.state):
                one.start()
                receipt = one.run_pass(fh)
            remember_bound_root(run, receipt)
            receipt = replace(receipt, handover=one.handover)
            return _record_coverage(run, one.seen, receipt)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""  # one line that says where
            raise M1ndError(f"distribution failed: {where}{exc.strerror or exc}") from None


def remember_bound_root(run: Run, receipt: Receipt) -> None:
    """A run that filed into its bound root's box adds that root to the roster (one
    line on stderr, the first time), so that a run from anywhere else finds the box
    its letters went into instead of calling them letters for an unknown repository."""
    if not run.bound or not receipt.appended_by_box:
        return
    from m1nd import roster

    real = os.path.realpath(run.bound)
    bound = next((r for r in run.roots.reachable if r.real == real and not r.refused), None)
    if bound is None or receipt.appended_to(bound.box) == 0:
        return
    try:
        root, added, _ = roster.add_checked(run.paths, bound.path)
    except (M1ndError, OSError):
        return  # a roster that cannot be written: the letters are filed all the same
    if added:
        sys.stderr.write(f"m1nd: added {root} to the roster: its box now holds letters "
                         f"(m1nd roster remove {shlex.quote(root)} undoes it)\n")


def _record_coverage(run: Run, seen: dict[bytes, None], receipt: Receipt) -> Receipt:
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
