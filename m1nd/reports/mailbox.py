"""What a report reads: the union of the spool and every reachable box, from the read
model (m1nd.readmodel), keyed by full digest (two letters sharing a 12-hex id stay
two).  Reading never files and never changes a box.

Coverage: every letter the read model has indexed is recorded in the ledger.  The
model records what each of its updates saw first; it numbers its updates
(generations, per database epoch), and `<home>/state/ledger-sync` keeps the last
generation whose new letters are all in the ledger, so a command killed between the
model's update and the ledger's append is caught up by the next report command.  Deleting the state makes the next read offer every letter
again, and the ledger, keyed by digest, adds none twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import islice

from m1nd import ledger
from m1nd.fates import IN_FLIGHT, WET_INK
from m1nd.fsutil import atomic_write, lock_for
from m1nd.paths import ensure_dir
from m1nd.routing import MEDULLA, PENDING
from m1nd.run import Run

WAITING = "waiting"
RECORD_BATCH = 10_000  # letters offered to the coverage ledger at a time


def _sync_path(run: Run) -> str:
    return os.path.join(run.paths.state, "ledger-sync")


def _synced(run: Run, epoch: str) -> int:
    """The last generation of this model (epoch) whose new letters are all in the
    ledger; 0 when unknown (a new or rebuilt model: offer every letter again)."""
    try:
        with open(_sync_path(run), "rb") as fh:
            saved_epoch, _, gen = fh.read().decode().strip().partition(" ")
        return int(gen) if saved_epoch == epoch and epoch else 0
    except (OSError, ValueError, UnicodeDecodeError):
        return 0  # a cache: start over, the ledger dedups


@dataclass
class Union:
    model: object
    run: Run
    labels: list[str]  # readable boxes, run order
    problems: list[str]
    malformed: int
    _pending: dict[tuple, str] = field(default_factory=dict)
    _rows: dict[str, object] = field(default_factory=dict)

    _graph: object = None

    @property
    def graph(self):
        if self._graph is None:
            self._graph = self.model.graph()
        return self._graph

    _batch: dict[str, object] = field(default_factory=dict)

    def prefetch(self, digests: list[str]) -> None:
        """Read these letters' rows in a query or a few (freezing asks for a batch of ledger
        entries at a time); the previous batch is let go.  A letter the union does
        not list is read on its own when asked for, as before."""
        self._batch = {}
        for row in self.model.by_digests([bytes.fromhex(d) for d in digests], missions=True):
            self._batch[row.digest] = row

    def letter(self, digest: str):
        """The letter's row; the last few asked for are kept (freezing asks for each
        letter a few times in a row), never the whole period."""
        found = self._batch.get(digest)
        if found is not None:
            return found
        rows = self._rows
        if digest in rows:
            return rows[digest]
        if len(rows) >= 64:
            rows.clear()
        row = rows[digest] = self.model.by_digest(digest)
        return row

    def holders(self, digest: str) -> list[str] | None:
        """Labels of the boxes holding the letter (run order); None when no readable
        file holds it now."""
        locations = self.model.locations(digest)
        if not locations:
            return None
        return [loc.label for loc in locations if loc.kind != "spool"]

    def pending_name(self, digest: str) -> str:
        letter = self.letter(digest)
        key = (letter.brain, letter.repo)  # the name depends on the route alone: one per repository
        name = self._pending.get(key)
        if name is None:
            name = self._pending[key] = _pending_name(self.run, letter)
        return name

    _counts: object = None

    def _box_counts(self):
        if self._counts is None:
            self._counts = self.model.box_counts()
        return self._counts

    def waiting(self) -> int:
        """Letters in no box that a filing would take (held letters never: they are
        itemized as held, and `m1nd distribute` would not help)."""
        _, not_filed = self._box_counts()
        return max(0, not_filed["total"] - self.model.held_in_no_box()) if not_filed else 0

    def box_summary(self) -> dict[str, dict]:
        """Current fates of each readable box's letters (over the union); Open and In
        flight count open work (replies left out)."""
        rows, _ = self._box_counts()
        out = {}
        for source, c in rows:
            out[source.label] = {"open": c["open_work"] - c["in_flight_work"], "in_flight": c["in_flight_work"],
                                 "answered": c["fired_clay"], "external": c["external"]}
        return out

    def not_filed_summary(self) -> dict:
        """The same counts over the union's letters in no box yet (the waiting row)."""
        _, c = self._box_counts()
        if not c:
            return {"open": 0, "in_flight": 0, "answered": 0, "external": 0}
        return {"open": c["open_work"] - c["in_flight_work"], "in_flight": c["in_flight_work"],
                "answered": c["fired_clay"], "external": c["external"]}


def _pending_name(run: Run, letter) -> str:
    from m1nd.secrets import likely_secret

    route = run.roots.resolve(letter.brain, letter.repo)
    if route.kind == PENDING:
        return route.name
    if route.kind != MEDULLA:
        return f"{route.root.label} (not filed yet)" if route.root else "not filed yet"
    return "medulla (not filed yet)"


def observe(run: Run, observed_at: str) -> tuple[Union, int]:
    """Bring the read model current and record every letter it holds that the ledger
    may not have yet (those indexed since the last synced generation); the number of
    letters recorded now."""
    from m1nd.readmodel import open_model

    with lock_for(run.paths.locks, "ledger-sync", run.paths.home):
        # open_model records what its own update saw first; this catches up whatever an
        # earlier command indexed but did not get into the ledger (a kill in between).
        model = open_model(run)
        epoch, generation = model.epoch, model.generation
        synced = _synced(run, epoch) if model.persistent else 0
        added = 0
        if generation > synced or synced == 0:
            # from none: all of them, in one walk of the id index (the first_gen index
            # would sort a million digests first)
            rows = model.letters_since(synced) if synced else model.letters(where="l.first_gen > ?", args=(0,))
            # in batches: after the state was deleted this offers every letter, and the
            # ledger holds what it is offered in memory
            while True:
                batch = [(r.id, r.digest) for r in islice(rows, RECORD_BATCH)]
                if not batch:
                    break
                added += len(ledger.record(run.paths, batch, observed_at, create_home=True))
            if model.persistent:
                try:
                    ensure_dir(run.paths.state)
                    atomic_write(_sync_path(run), f"{epoch} {generation}".encode(), sync=False)
                except OSError:
                    pass
    problems = [s.problem for s in model.boxes if s.problem]
    malformed = sum(len(model.malformed(s)) for s in model.sources if s.fid is not None)
    labels = [s.label for s in model.readable_boxes()]
    return Union(model, run, labels, problems, malformed), added
