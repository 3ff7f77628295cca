"""Routing within a pass: each (brain, repo) pair's route key and box.

When the roots change every pair is routed again (waiting pairs are, every run); a
pair that now resolves to a different project box is marked moved, to have its
letters read back from their logged spool locations and filed there.  The same
refiling serves a box deleted or emptied outside m1nd.  A pair moving to or from
the medulla box means a full rescan.
"""

from __future__ import annotations

import hashlib
import os

from m1nd import jsonout
from m1nd.boxes import Box, project_box
from m1nd.boxindex import BoxIndex
from m1nd.cursor import Pair, State
from m1nd.gitops.safety import Gate
from m1nd.routing import MEDULLA, PENDING, PROJECT, Route
from m1nd.run import Run


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


class Router:
    """The boxes of one run's roots, and the routes of the pairs of its state."""

    def __init__(self, run: Run, write: bool, gate: Gate) -> None:
        self.run = run
        self.write = write
        self.gate = gate
        self.boxes_by_root = {r.path: project_box(r) for r in run.roots.roots}
        self.medulla = run.medulla
        self.digest = roots_digest(run)

    def route_of(self, pair: Pair) -> tuple[str, Box | None]:
        """The route kind of a pair and its box (None for pending)."""
        key = pair.route
        if key == "m":
            return MEDULLA, self.medulla
        if key.startswith("p\0"):
            return PROJECT, self.root_box(key[2:])
        return PENDING, None

    def root_box(self, path: str) -> Box | None:
        """The box of the root at `path`; a git work tree nested in a root, which an
        earlier resolve made a root of its own, is adopted again (routing.py)."""
        box = self.boxes_by_root.get(path)
        if box is None:
            root = self.run.roots.nested_root(path)
            if root is not None and root.path == path:
                box = self.boxes_by_root[path] = project_box(root)
        return box

    def routes_known(self, state: State) -> bool:
        """Every saved project route names a root of this run (else: rescan)."""
        return all(self.root_box(p.route[2:]) is not None for p in state.pairs if p.route.startswith("p\0"))

    def recheck_pending(self, state: State) -> set[int] | None:
        """Route the waiting pairs again even when the roots did not change: a path
        can come to lie inside a root (a symlink made, a directory created), and a
        first run would file such letters.  They are few, so this is cheap."""
        return self.reroute(state, only_pending=True)

    def reroute(self, state: State, only_pending: bool = False) -> set[int] | None:
        """Route every pair again under changed roots: the pairs moved to a project
        box.  None means: rescan fully."""
        moved: set[int] = set()
        for i, pair in enumerate(state.pairs):
            if only_pending and not pair.route.startswith("n\0"):
                continue
            new = route_key(self.run.roots.resolve(pair.brain, pair.repo))
            if new == pair.route:
                continue
            if new == "m" or pair.route == "m":
                return None
            pair.route = new
            if new.startswith("p\0"):
                moved.add(i)
        state.roots = self.digest
        return moved

    def writable(self, box: Box) -> bool:
        return not self.write or self.gate.verdict(box).ok

    def unwritable(self, state: State, moved: set[int]) -> set[int]:
        """Of the pairs to file again, those whose box this filing may not write (a
        consented box in a hook, git mid-operation)."""
        found = set()
        for i in list(moved):
            box = self.route_of(state.pairs[i])[1]
            if box is not None and not self.writable(box):
                found.add(i)
        return found

    def lost_boxes(self, state: State) -> set[int]:
        """The pairs whose box was deleted or emptied outside m1nd (`git clean`, `rm`):
        they get their letters again, as a first run would file them.  So does a
        consented box that git changed since m1nd last filed it (a `reset --hard`, a
        checkout, a merge racing an append), at a filing that may write it: its letters
        that the box lacks are filed again, except those git holds on a local branch or
        in a stash (spec/git.md section 3).  Boxes this filing may not write are not
        even looked at."""
        lost: dict[str, bool] = {}
        found = set()
        for i, pair in enumerate(state.pairs):
            kind, box = self.route_of(pair)
            if box is None or pair.count == pair.held:
                continue
            if box.path not in lost:
                lost[box.path] = self._lost(box)
            if lost[box.path]:
                found.add(i)
        return found

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
