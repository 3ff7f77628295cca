"""One distribution run over an open spool, start to end.

A run picks up where the last one stopped (the cursor, cursor.py) and reads only
what is new; it files letters that moved to another box (routing_pass.py) again
from their logged spool locations first.  A box that was refused or failed at the
write call keeps its pairs marked until the box takes them (the cursor moves on).
A spool that was replaced, truncated or rewritten, state that does not verify, or
a pair moving to or from the medulla box means a full rescan.
"""

from __future__ import annotations

import hashlib
import os

from m1nd.cursor import LOCATION, State, StateCorrupt, Store, mark_spool, spool_unchanged
from m1nd.distribution.filing import Filer, naming
from m1nd.distribution.reading import Found, Progress, Stretch, file_tail, read_back, read_new
from m1nd.distribution.receipt import Handover, Receipt, receipt_of
from m1nd.distribution.routing_pass import Router
from m1nd.gitops.safety import Gate
from m1nd.run import Run


class Pass:
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
        self.router = Router(run, write, self.gate)
        self.moved: set[int] = set()  # pairs whose letters are filed again from their locations
        self.refile: list[tuple[int, bytes]] = []  # (pair, raw) of those letters, checked (read_back)
        self.found = Found()
        self.handover: Handover | None = None

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
            if self._pick_up(state):
                return
        self.state = State(roots=self.router.digest)
        self.kept_locations = 0
        self.moved, self.refile, self.deferred = set(), [], set()

    def _pick_up(self, state: State) -> bool:
        """Carry on from a saved state over the same spool.  False means: rescan."""
        router = self.router
        if state.roots == router.digest:
            moved = router.recheck_pending(state)
        else:
            moved = router.reroute(state)
        if moved is None or not router.routes_known(state):
            return False
        self.moved |= moved
        self.moved |= router.lost_boxes(state)
        # Pairs an earlier run began to file again and did not finish (killed,
        # a full disk): their box may now hold part of their letters, so it is
        # neither missing nor empty any more, yet still lacks the rest.
        self.moved |= {i for i in state.refiling if i < len(state.pairs)
                       and router.route_of(state.pairs[i])[1] is not None}
        # Pairs whose box this filing may not write are not read now: they stay marked for later.
        unwritable = router.unwritable(state, self.moved)
        self.moved -= unwritable
        self.deferred |= unwritable
        if not self.read_moved():
            return False
        self.remember_refiling()
        return True

    def read_moved(self) -> bool:
        """Read back the letters of the moved pairs (reading.read_back).  False means: rescan."""
        self.refile = []
        if not self.moved or self.store is None:
            return True
        refile = read_back(self.fd, self.store, self.state, self.moved, self.kept_locations, self.notes)
        if refile is None:
            return False
        self.refile = refile
        return True

    def remember_refiling(self) -> None:
        """Save which pairs this run files again before filing them (see start)."""
        refiling = sorted(self.moved | self.deferred | set(self.state.waiting))
        if refiling != self.state.refiling:
            self.state.refiling = refiling
            with naming(self.store.json):
                self.store.save(self.state)

    # -- the pass --------------------------------------------------------------
    def run_pass(self, fh) -> Receipt:
        filer = Filer(self.run, self.state.pairs, self.write, self.gate)
        self._refile_moved(filer)
        read = read_new(fh, self.fd, self.state, self.router, filer, self.found, self.progress)
        tail_counts = file_tail(read.tail, filer, self.router) if read.tail else None
        self.notes.extend(filer.finish())
        problems = filer.problems()
        if self.write:
            self._keep_state(filer, problems, read)
        if self.progress is not None:
            self.progress(read.size, read.size)
        st = os.fstat(self.fd)
        self.handover = Handover(filer.written, (st.st_dev, st.st_ino, read.first, read.offset))
        return receipt_of(self, filer, problems, tail_counts)

    def _refile_moved(self, filer: Filer) -> None:
        for i, raw in self.refile:
            _, box = self.router.route_of(self.state.pairs[i])
            filer.add(box, hashlib.sha256(raw).digest(), raw, -1, refiled=True)

    def _keep_state(self, filer: Filer, problems, read: Stretch) -> None:
        # The cursor moves on even past a box that could not be written (refused,
        # read-only, disk full), so that one bad box does not make every later run
        # read the whole spool; its pairs are filed again from their logged
        # locations by the next run, until the box takes them.
        failed = {p.path for p in problems}
        refiling = {i for i, pair in enumerate(self.state.pairs)
                    if (box := self.router.route_of(pair)[1]) is not None and box.path in failed}
        self._keep_waiting(filer)
        self._save(read.offset, read.lines, sorted(refiling | set(self.state.waiting) | self.deferred))

    def _keep_waiting(self, filer: Filer) -> None:
        """Count, per pair, the letters that wait for a filing that may write their box:
        pairs read back this run are done; letters deferred this run are added."""
        waiting = self.state.waiting
        for i in self.moved:
            waiting.pop(i, None)
        for i, n in filer.waited.items():
            waiting[i] = waiting.get(i, 0) + n
        for i in list(waiting):
            box = self.router.route_of(self.state.pairs[i])[1] if i < len(self.state.pairs) else None
            if box is None:
                del waiting[i]

    def _save(self, offset: int, lines: int, refiling: list[int]) -> None:
        self.state.mark = mark_spool(self.fd, offset, lines, self.state.mark)
        records = self.found.records
        with naming(self.store.log):
            self.store.append_locations(self.kept_locations, records)
        self.state.locations = self.kept_locations + len(records) // LOCATION.size
        self.state.refiling = refiling
        with naming(self.store.json):
            self.store.save(self.state)
