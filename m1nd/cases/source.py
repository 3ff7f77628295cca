"""The letters case intelligence reads, through the read model (issue 9's index of
the spool and every box, distinct by full digest).

`open_cases(run)` brings the read model current, then the fold (fold.py) of every
letter that matters to cases, kept under `<home>/state/cases/fold.json` keyed by the
read model's content: a run with nothing new reuses it, new letters (those the model
indexed after the fold was made) are folded in, and anything else (a box replaced by
git with other content, other roots) refolds from the model.  The cache is derived:
delete it and the same fold comes back.

The kindless count needs no letter of its own: it is the union's letters that are
neither missions nor receipts, less the witnesses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import orjson

from m1nd import jsonout
from m1nd.boxes import Box
from m1nd.cases import fingerprints as fps
from m1nd.cases.fold import Fold
from m1nd.fsutil import atomic_write
from m1nd.paths import ensure_dir
from m1nd.run import Run

VERSION = 4  # 4: held letters are left out
# A letter carrying a likely secret is left out of case intelligence: a fingerprint and an
# escalation are made of a witness's fields, and a held letter's fields never leave (mailbox.md 4).
WANTED = f"({fps.RECEIPT_SQL} OR {fps.candidates_sql()}) AND coalesce(l.secret, '') = ''"


@dataclass
class Cases:
    """The read model and the fold over it, for one command."""

    run: Run
    model: object  # m1nd.readmodel.ReadModel
    fold: Fold
    letters: int  # distinct letters of the union, missions left out

    @property
    def kindless(self) -> int:
        return self.letters - self.fold.receipts_seen - self.fold.witness_count

    @property
    def problems(self) -> list[str]:
        return [f"box {s.label}: {s.problem}" for s in self.model.boxes if s.problem]

    @property
    def notes(self) -> list[str]:
        return list(self.model.notes)

    def box_of(self, digest: str) -> Box | None:
        """The box that holds a letter: the first in run order (None: only in the spool)."""
        for loc in self.model.locations(digest):
            if loc.kind == "box":
                for source in self.model.boxes:
                    if source.path == loc.path and source.box is not None:
                        return source.box
        return None

    def close(self) -> None:
        self.model.close()

    def __enter__(self) -> "Cases":
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self.close()
        if exc is not None:
            from m1nd.readmodel import damage_reported

            with damage_reported(self.run):  # the read model failed mid-way: one line, rebuilt next time
                raise exc


def _content_key(model) -> list:
    """[database epoch, the run's files, the union's content key]: equal keys, equal union."""
    # as the cache spells it: a path that is not UTF-8 with \xNN escapes (jsonout.record)
    return jsonout.utf8_safe([model.epoch, [[src.kind, src.path, src.fid] for src in model.sources],
                              model.union_key()])


# -- the fold cache -------------------------------------------------------------------

def _cache_path(run: Run) -> str:
    return os.path.join(run.paths.state, "cases", "fold.json")


def _load(run: Run):
    try:
        with open(_cache_path(run), "rb") as fh:
            doc = orjson.loads(fh.read())
        if doc.get("version") != VERSION:
            return None
        return doc["key"], doc["gen"], doc["letters"], Fold.from_json(doc["fold"])
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None


def _save(run: Run, key, gen: int, letters: int, fold: Fold) -> None:
    path = _cache_path(run)
    try:
        ensure_dir(os.path.dirname(path))
        atomic_write(path, jsonout.record({"version": VERSION, "key": key, "gen": gen, "letters": letters,
                                         "fold": fold.as_json()}), sync=False)
    except OSError:
        pass  # only a shortcut: the next run folds again


def fold_model(run: Run, model, cache: bool = True, write: bool = True) -> tuple[Fold, int]:
    """The fold over the model's union and its count of distinct non-mission letters."""
    key = _content_key(model)
    gen = model.generation
    cached = _load(run) if cache and model.persistent else None
    if cached is not None and cached[0] == key:
        return cached[3], cached[2]
    letters = model.counts()["total"]  # kept current by the read model (model.count() counts them all)
    if cached is not None and cached[0][:2] == key[:2]:  # the same database and files, new content
        _, old_gen, old_letters, fold = cached
        if old_letters + model.count("l.first_gen > ?", (old_gen,)) == letters:  # it only grew
            for row in model.letters_since(old_gen, where=WANTED):
                fold.add(row)
            if write:
                _save(run, key, gen, letters, fold)
            return fold, letters
    fold = Fold()
    for row in model.letters(where=WANTED):
        fold.add(row)
    if write and model.persistent:
        _save(run, key, gen, letters, fold)
    return fold, letters


def open_cases(run: Run, write: bool = True) -> Cases:
    """Bring the read model current and fold it (`write=False`: never write the fold cache)."""
    from m1nd.readmodel import damage_reported, open_model

    model = open_model(run)
    try:
        with damage_reported(run):
            fold, letters = fold_model(run, model, write=write)
    except BaseException:
        model.close()
        raise
    return Cases(run, model, fold, letters)
