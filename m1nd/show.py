"""`m1nd show ID`: one letter whole, by full id or a unique prefix (as git takes
abbreviated hashes), with its box, its fate, what it answers and its replies."""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from m1nd.errors import NotFound, UsageError
from m1nd.held import held_kind, held_ts
from m1nd.letters import STRING_FIELDS
from m1nd.views import letter_sort_key

_PREFIX = re.compile(r"[0-9a-f]{4,12}")
KEY_ORDER = ("ts", "agent", "class", "kind", "repo", "brain", "tool", "what", "expected", "snippet",
             "answers", "disposition")


@dataclass(frozen=True)
class Shown:
    letter: object  # LetterRow
    fields: dict  # every field of the letter as written (known keys first, then the rest)
    state: str
    locations: tuple  # readmodel.Location
    answers: tuple[tuple[str, tuple], ...]  # (id answered, ((LetterRow, state), ...) letters with that id)
    replies: tuple[tuple[object, str], ...]  # (LetterRow, state), oldest first
    held: str | None = None  # in no box, carrying a likely secret: no view shows its fields
    held_others: frozenset = frozenset()  # digests of the held letters among answers and replies

    def as_json(self) -> dict:
        def brief(row, state):
            if row.digest in self.held_others:
                return {"id": row.id, "state": state, "ts": held_ts(row.ts), "held": True}
            return {"id": row.id, "state": state, "class": row.klass, "agent": row.agent, "ts": row.ts,
                    "what": row.what}

        if self.held:  # its id, ts, state and the kind of secret; none of its other fields
            return {"id": self.letter.id, "digest": self.letter.digest, "state": self.state,
                    "letter": {"ts": held_ts(self.letter.ts)}, "held": self.held,
                    "locations": [{"box": loc.label if loc.kind == "box" else None, "kind": loc.kind,
                                   "path": loc.path, "line": loc.line} for loc in self.locations],
                    "answers": [], "replies": [brief(r, s) for r, s in self.replies]}
        return {
            "id": self.letter.id,
            "digest": self.letter.digest,
            "state": self.state,
            "letter": self.fields,
            "locations": [{"box": loc.label if loc.kind == "box" else None, "kind": loc.kind, "path": loc.path,
                           "line": loc.line} for loc in self.locations],
            "answers": [{"id": lid, "letters": [brief(r, s) for r, s in found]} for lid, found in self.answers],
            "replies": [brief(r, s) for r, s in self.replies],
        }


def resolve_id(model, given: str) -> str:
    """The one id of the union this full id or prefix names."""
    text = given.strip()
    if not _PREFIX.fullmatch(text.lower()):
        raise UsageError(f"not a letter id: {given!r} (an id is 12 hex digits; a unique prefix of 4 or more will do)")
    text = text.lower()
    ids = model.lookup(text)
    if not ids:
        raise NotFound(f"no letter has the id {text}" + (" (or starts with it)" if len(text) < 12 else ""))
    if len(ids) > 1:
        shown = ", ".join(ids[:10]) + (", …" if len(ids) > 10 else "")
        raise UsageError(f"id prefix {text} is ambiguous: {shown} (give more digits)")
    return ids[0]


def ordered_fields(obj: dict) -> dict:
    """Known fields first (a missing string field shown as the contract reads it, "",
    and a missing `answers` as []), then every other key of the letter, sorted."""
    defaults = {k: "" for k in STRING_FIELDS}
    defaults["answers"] = []
    out = {}
    for k in KEY_ORDER:
        if k in obj:
            out[k] = obj[k]
        elif k in defaults:
            out[k] = defaults[k]
    for k in sorted(obj):
        if k not in out:
            out[k] = obj[k]
    return out


def show(model, given: str, reveal: bool = False) -> list[Shown]:
    """Every letter with the id `given` names (two when their ids collide); a held
    letter's fields are left out unless `reveal` (the local terminal only)."""
    lid = resolve_id(model, given)
    graph = model.graph()
    out = []
    for row in model.by_id(lid, missions=True):
        raw = model.raw(row.digest)
        obj = orjson.loads(raw) if raw is not None else None
        if not isinstance(obj, dict):
            obj = {"ts": row.ts, "agent": row.agent, "class": row.klass, "repo": row.repo, "brain": row.brain,
                   "tool": row.tool, "what": row.what, "expected": row.expected, "snippet": row.snippet,
                   "answers": list(row.answers)}
        answers = tuple((a, tuple((r, graph.state(r)) for r in model.by_id(a))) for a in dict.fromkeys(row.answers))
        replies = [r for rid in sorted(set(graph.answers_to(row.id))) for r in model.by_id(rid)]
        replies.sort(key=lambda r: (letter_sort_key(r), r.id))
        locations = tuple(model.locations(row.digest))
        held = None if reveal else held_kind(model, row.digest)
        others = frozenset(r.digest for r in replies + [r for _, found in answers for r, _ in found]
                           if not reveal and held_kind(model, r.digest))
        out.append(Shown(row, ordered_fields(obj), graph.state(row), locations, answers,
                         tuple((r, graph.state(r)) for r in replies), held, others))
    return out


def show_json(model, given: str) -> dict:
    """The document of `m1nd show ID --json`: the letter as one object; letters that
    share its id (different bytes) under `same_id`, present only then."""
    found = show(model, given)
    doc = found[0].as_json()
    if len(found) > 1:
        doc["same_id"] = [f.as_json() for f in found[1:]]
    return doc
