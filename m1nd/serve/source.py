"""Where the server's answers come from: the same core functions the commands call,
over a run opened for each request (so a roster change is seen at once).

Answers that cost a full read are kept and reused for as long as the files they
were computed from are unchanged (inode, size and mtime of the spool, of every box
and of its `.m1nd/` directory, plus the roots and foreign markers of the run), so
repeated requests never re-read every letter; the first request after a change
computes once, however many requests wait for it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from datetime import datetime, timezone

from m1nd.errors import M1ndError
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, OPEN_STATES, WET_INK
from m1nd.run import Run, open_run
from m1nd.serve import documents
from m1nd.serve.documents import Doc

SPOOL_ROW = "spool"  # letters that wait in the spool (not filed into any box)


def _stat(path: str):
    try:
        st = os.lstat(path)
    except OSError as exc:
        return ("missing", exc.errno)
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)


def fingerprint(run: Run) -> tuple:
    files = [run.paths.spool]
    for box in run.boxes():
        files += [box.path, os.path.dirname(box.path)]
    return (
        tuple(_stat(p) for p in files),
        tuple((r.path, r.real, r.reachable) for r in run.roots.roots),
        run.markers,
    )


class Kept:
    """A small store of computed answers, each valid for one fingerprint; a value
    is computed once while every other request for it waits."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self.items: OrderedDict = OrderedDict()
        self.lock = threading.Lock()
        self.building: dict = {}

    def get(self, key, fp, build):
        while True:
            with self.lock:
                hit = self.items.get(key)
                if hit is not None and hit[0] == fp:
                    self.items.move_to_end(key)
                    return hit[1]
                gate = self.building.get(key)
                if gate is None:
                    gate = self.building[key] = threading.Event()
                    break
            gate.wait()
        try:
            value = build()
            with self.lock:
                self.items[key] = (fp, value)
                self.items.move_to_end(key)
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
            return value
        finally:
            with self.lock:
                del self.building[key]
            gate.set()


def sort_key(ts: str) -> float:
    """Seconds since the epoch of an ISO 8601 time (no zone: UTC); unparseable: -inf."""
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return float("-inf")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


class Snapshot:
    """The union as the page shows it: every letter with its box and fate, newest
    first, and every box with its counts."""

    def __init__(self, result) -> None:
        letters, graph = result.letters, result.graph
        self.letters = letters
        self.graph = graph
        self.where: dict[str, str] = {}
        self.boxes: list[dict] = []
        in_boxes: set[str] = set()
        for read in result.boxes:
            for i in read.ids:
                self.where.setdefault(i, read.box.label)
            in_boxes |= read.ids
            self.boxes.append(self._row(read.box.label, read.box.root.path if read.box.root else None, read.ids))
        waiting = [i for i in letters if i not in in_boxes]
        for i in waiting:
            self.where[i] = SPOOL_ROW
        if waiting:
            self.boxes.append(self._row(SPOOL_ROW, None, waiting))
        self.state = {i: graph.state(l) for i, l in letters.items()}
        self.when = {i: sort_key(l.ts) for i, l in letters.items()}
        self.newest_first = sorted(letters, key=lambda i: (self.when[i], i), reverse=True)
        self.unreachable = result.doc["unreachable"]
        self.problems = [f"box {p.label}: {p.reason}" for p in result.problems]

    def _row(self, label, path, ids) -> dict:
        counts = {WET_INK: 0, IN_FLIGHT: 0, FIRED_CLAY: 0, EXTERNAL: 0, "open_work": 0}
        for i in ids:
            letter = self.letters[i]
            state = self.graph.state(letter)
            counts[state] += 1
            if state in OPEN_STATES and not letter.answers:
                counts["open_work"] += 1
        counts["total"] = len(ids)
        return {"label": label, "path": path, "counts": counts}

    def find(self, ident: str) -> list[str]:
        """Ids of the union that are `ident` or start with it."""
        ident = ident.lower()
        return sorted(i for i in self.letters if i.startswith(ident))


class Mailbox:
    """The server's view of one home: the options `m1nd serve` was given."""

    def __init__(self, home=None, spool=None, roots=None, cwd=None) -> None:
        self.home, self.spool, self.roots = home, spool, list(roots or [])
        self.cwd = cwd or os.getcwd()
        self.kept = Kept()

    def run(self, tolerant: bool = False) -> Run:
        return open_run(home=self.home, spool=self.spool, extra_roots=self.roots, cwd=self.cwd,
                        tolerant=tolerant)

    def _sweep(self, run: Run):
        from m1nd.sweep import sweep

        return sweep(run, distribute_first=False)

    def _kept(self, key, run: Run, build):
        return self.kept.get(key, fingerprint(run), build)

    # JSON routes -------------------------------------------------------------

    def inbox_sweep(self) -> Doc:
        """`m1nd --inbox-sweep --no-distribute`: the v0 document (also when a box is
        refused, as the command prints it before exiting 1)."""
        try:
            run = self.run()
            return self._kept("sweep-doc", run, lambda: documents.ok(self._sweep(run).doc))
        except M1ndError as exc:
            return documents.error(exc)

    def box(self, selector: str | None) -> Doc:
        """`m1nd box SELECTOR --json`."""
        from m1nd.boxview import view_box

        try:
            run = self.run()
            return self._kept(("box", selector), run, lambda: documents.ok(view_box(run, selector).as_json()))
        except M1ndError as exc:
            return documents.error(exc)

    def doctor(self) -> Doc:
        """`m1nd doctor --json`, status 200 even when a check is an error. Not kept:
        its checks look at more than the mailbox files (hooks, consent, the clock)."""
        from m1nd.clock import parse_now
        from m1nd.doctor import diagnose

        try:
            moment = parse_now(None)
            return documents.ok(diagnose(self.run(tolerant=True), moment).as_json())
        except M1ndError as exc:
            return documents.error(exc)

    # pages -------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        run = self.run()
        return self._kept("snapshot", run, lambda: Snapshot(self._sweep(run)))
