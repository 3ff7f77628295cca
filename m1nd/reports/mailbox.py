"""What a report reads: the union of the spool and every reachable box, keyed by the
full digest of each letter (two letters sharing a 12-hex id stay two), with the box
that holds each one.  Reading never files and never changes a box.

This is the reports' adapter to the mailbox; once the read model serves the union
(with first-seen letters), this module asks it instead of reading every file.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from m1nd import ledger
from m1nd.boxes import Refused, refusal
from m1nd.errors import M1ndError
from m1nd.fates import ReplyGraph, reply_graph
from m1nd.fsutil import gc_paused
from m1nd.letters import Letter, read_file
from m1nd.routing import MEDULLA, PENDING
from m1nd.run import Run

WAITING = "waiting"


@dataclass
class Union:
    letters: dict[str, Letter]  # by full digest, missions left out
    holder: dict[str, str]  # digest -> label of the first box (run order) holding it
    members: dict[str, set[str]]  # box label -> digests it holds
    labels: list[str]  # every reachable box's label, run order (medulla last)
    unreachable: list[str]
    problems: list[str]  # refused or unreadable boxes
    malformed: int
    graph: ReplyGraph
    _pending: dict[str, str] = field(default_factory=dict)
    run: Run | None = None

    def pending_name(self, digest: str) -> str:
        """Why a letter no box holds waits: its pending name, or where it will go."""
        name = self._pending.get(digest)
        if name is None:
            name = self._pending[digest] = _pending_name(self.run, self.letters[digest])
        return name


def _pending_name(run: Run, letter: Letter) -> str:
    from m1nd.secrets import likely_secret

    route = run.roots.resolve(letter.brain, letter.repo)
    if route.kind == PENDING:
        return route.name
    if route.kind != MEDULLA and likely_secret(letter.raw):
        return "held"
    return f"{route.root.label if route.root else 'medulla'} (not filed yet)"


def read_union(run: Run) -> Union:
    with gc_paused():
        return _read_union(run)


def _read(path: str):
    try:
        return read_file(path)
    except OSError as exc:
        raise M1ndError(f"cannot read {path}: {exc.strerror}") from None


def _read_union(run: Run) -> Union:
    sha256 = hashlib.sha256
    letters: dict[str, Letter] = {}
    missions: set[str] = set()
    holder: dict[str, str] = {}
    members: dict[str, set[str]] = {}
    problems: list[str] = []
    spool = _read(run.paths.spool)
    malformed = len(spool.malformed)
    # Project boxes in roster order, then the medulla box: the profile default order.
    boxes = run.boxes()[1:] + run.boxes()[:1]
    labels = []
    for box in boxes:
        reason = refusal(box)
        if reason:
            problems.append(f"box {box.label} refused: {reason}")
            continue
        try:
            found = read_file(box.path)
        except (OSError, Refused) as exc:
            problems.append(f"box {box.label} unreadable: {getattr(exc, 'strerror', None) or exc}")
            continue
        labels.append(box.label)
        malformed += len(found.malformed)
        held = members.setdefault(box.label, set())
        for _, letter in found.letters:
            digest = sha256(letter.raw).hexdigest()
            if letter.is_mission:
                missions.add(digest)
                continue
            letters.setdefault(digest, letter)
            holder.setdefault(digest, box.label)
            held.add(digest)
    for _, letter in spool.letters:
        digest = sha256(letter.raw).hexdigest()
        if letter.is_mission:
            continue
        letters.setdefault(digest, letter)
    graph = reply_graph(letters.values(), run.markers)
    return Union(letters, holder, members, labels, sorted({r.label for r in run.roots.unreachable}),
                 problems, malformed, graph, run=run)


def observe(run: Run, observed_at: str) -> tuple[Union, list[ledger.Entry]]:
    """Read the union and record every letter seen for the first time."""
    union = read_union(run)
    added = ledger.record(run.paths, ((l.id, d) for d, l in union.letters.items()), observed_at)
    return union, added
