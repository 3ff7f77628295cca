"""What the human views show, computed either from the read model (every command)
or from the files alone (the reference the tests hold the model to).

A view is plain data: the per-box counts, the letters selected by the filters
(newest first, at most `limit`), each with its fate, its box and the replies to it,
and how many more matched.  cli/render.py decides how it looks.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from m1nd.errors import UsageError
from m1nd.held import for_medulla, held_kind
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, OPEN_STATES, WET_INK, ReplyGraph, reply_graph
from m1nd.timefmt import parse_ts, sort_key

STATE_FILTERS = {
    "open": OPEN_STATES,
    "in_flight": (IN_FLIGHT,),
    "answered": (FIRED_CLAY,),
    "external": (EXTERNAL,),
    "all": (WET_INK, IN_FLIGHT, FIRED_CLAY, EXTERNAL),
}
DEFAULT_LIMIT = 20


def tool_family(tool: str) -> str:
    return tool.split("(", 1)[0].strip().lower()


@dataclass(frozen=True)
class Filters:
    state: str = "open"
    agent: str | None = None
    klass: str | None = None
    tool: str | None = None
    since: str | None = None  # sort keys (timefmt.sort_key), inclusive
    until: str | None = None
    box: str | None = None  # a box label (the sweep only)

    @property
    def narrowing(self) -> bool:
        """Anything beyond the default state."""
        return any(v is not None for v in (self.agent, self.klass, self.tool, self.since, self.until, self.box))

    @property
    def on_hidden(self) -> bool:
        """A filter on a field a held letter never shows (agent, class, tool): no held
        letter matches it, or the filter would tell its hidden text, a guess at a time."""
        return any(v is not None for v in (self.agent, self.klass, self.tool))

    def matches(self, letter, state: str) -> bool:
        if state not in STATE_FILTERS[self.state]:
            return False
        if self.agent is not None and letter.agent != self.agent:
            return False
        if self.klass is not None and letter.klass.lower() != self.klass.lower():
            return False
        if self.tool is not None and self.tool.lower() not in (letter.tool.lower(), tool_family(letter.tool)):
            return False
        if self.since is not None or self.until is not None:
            key = letter_sort_key(letter)
            if key.startswith("!"):
                return False
            if self.since is not None and key < self.since:
                return False
            if self.until is not None and key > self.until:
                return False
        return True


def make_filters(state: str | None = None, agent=None, klass=None, tool=None, since=None, until=None,
                 box=None, default_state: str = "open") -> Filters:
    chosen = state or default_state
    if chosen not in STATE_FILTERS:
        raise UsageError(f"--state must be one of {', '.join(STATE_FILTERS)} (not {chosen!r})")

    def moment(option: str, value: str | None) -> str | None:
        if value is None:
            return None
        if parse_ts(value) is None:
            raise UsageError(f"{option} takes an ISO 8601 time such as 2026-05-01 or 2026-05-01T09:00:00Z"
                             f" (not {value!r})")
        return sort_key(value)

    return Filters(chosen, agent, klass, tool, moment("--since", since), moment("--until", until), box)


def letter_sort_key(letter) -> str:
    key = getattr(letter, "sortkey", None)
    return key if key is not None else sort_key(letter.ts)


@dataclass(frozen=True)
class Shown:
    letter: object  # a LetterRow (model) or Letter (files): id, ts, agent, klass, tool, what, answers
    state: str
    box: str  # the label of the first box holding it (run order), or "spool"
    replies: tuple[tuple[object, str], ...] = ()  # (reply letter, its state), oldest first
    held: str | None = None  # carrying a likely secret (wherever it lives): its text is never shown
    held_replies: frozenset = frozenset()  # ids of the replies that are held: their text is never shown


@dataclass(frozen=True)
class Listing:
    rows: tuple[tuple[str, dict], ...]  # (box label, counts) for the box table
    not_filed: dict | None  # counts of union letters in no box (sweep only)
    totals: dict  # counts over the whole scope
    shown: tuple[Shown, ...]
    matched: int  # letters matching the filters (shown ones included)
    filters: Filters
    limit: int | None
    warnings: tuple[str, ...] = field(default=())

    @property
    def more(self) -> int:
        return self.matched - len(self.shown)


def _replies(letter, graph: ReplyGraph, fetch) -> tuple[tuple[object, str], ...]:
    ids = sorted(set(graph.answers_to(letter.id)))
    found = [r for lid in ids for r in fetch(lid)]
    found.sort(key=lambda r: (letter_sort_key(r), r.id))
    return tuple((r, graph.state(r)) for r in found)


def told_apart(rows: list[tuple[object, str, dict]]) -> tuple[tuple[str, dict], ...]:
    """The box table's rows: a label two roots share (`dup` twice) gets its root's path,
    so that the two rows say which is which."""
    from collections import Counter

    seen = Counter(label for _, label, _ in rows)
    home = os.environ.get("HOME") or ""

    def shown(box, label):
        if seen[label] < 2 or box is None or box.root is None:
            return label
        path = box.root.path
        if home and (path == home or path.startswith(home.rstrip("/") + "/")):
            path = "~" + path[len(home.rstrip("/")):]
        return f"{label} ({path})"

    return tuple((shown(box, label), counts) for box, label, counts in rows)


# -- from the read model ----------------------------------------------------------------


def model_listing(model, filters: Filters, limit: int | None, scope=None) -> Listing:
    """The sweep (scope None: the union, fates over it) or one box's view (scope a
    Source: its own letters, fates from it alone)."""
    graph = model.graph(scope)
    if scope is None:
        box_rows, not_filed = model.box_counts()
        rows = told_apart([(s.box, s.label, c) for s, c in box_rows])
        totals = model.counts()
    else:
        rows, not_filed = (), None
        totals = model.counts(scope)
    where_scope = scope
    if scope is None and filters.box is not None:
        chosen = [s for s in model.readable_boxes() if s.label.lower() == filters.box.lower()]
        if not chosen:
            from m1nd.errors import NotFound

            raise NotFound(f"no box named {filters.box!r} in this sweep "
                           f"(boxes: {', '.join(s.label for s in model.readable_boxes())})")
        where_scope = chosen[0]
    state = graph.state
    shown = []
    matched = 0
    quick = not filters.narrowing and filters.state == "open" and where_scope is scope
    never_held = scope is not None and scope.root is None  # the medulla box's own view
    for letter in model.letters(where_scope, order="newest", where="l.reply = 0"):
        fate = state(letter)
        if not filters.matches(letter, fate):
            continue
        if filters.on_hidden and not never_held and held_kind(model, letter.digest):
            continue
        matched += 1
        if limit is None or len(shown) < limit:
            shown.append(letter)
        elif quick:
            matched = totals["open_work"]
            break
    labels = _box_of(model, shown) if scope is None else {}
    fetch = lambda lid: model.by_id(lid, scope)  # noqa: E731
    out = tuple(Shown(l, state(l), labels.get(l.digest, "spool") if scope is None else scope.label,
                      _replies(l, graph, fetch),
                      *_held_model(model, l, graph, fetch, scope)) for l in shown)
    return Listing(rows, not_filed, totals, out, matched, filters, limit)


def _held_model(model, letter, graph, fetch, scope) -> tuple[str | None, frozenset]:
    """(held kind of the letter, ids of its held replies); nothing in the medulla box's view."""
    if scope is not None and scope.root is None:
        return None, frozenset()
    replies = frozenset(r.id for lid in graph.answers_to(letter.id) for r in fetch(lid) if held_kind(model, r.digest))
    return held_kind(model, letter.digest), replies


def _box_of(model, letters) -> dict[str, str]:
    out = {}
    for letter in letters:
        for loc in model.locations(letter.digest):
            if loc.kind == "box":
                out[letter.digest] = loc.label
                break
    return out


# -- from the files alone (the reference) ---------------------------------------------------


def _files_counts(letters, graph: ReplyGraph) -> dict:
    wet = [0, 0]
    flight = [0, 0]
    fired = [0, 0]
    ext = [0, 0]
    mis = 0
    for l in letters:
        r = 1 if l.answers else 0
        s = graph.state(l)
        {WET_INK: wet, IN_FLIGHT: flight, FIRED_CLAY: fired, EXTERNAL: ext}[s][r] += 1
        mis += l.klass == "memory_misdelivery"
    return {
        WET_INK: sum(wet), IN_FLIGHT: sum(flight), FIRED_CLAY: sum(fired), EXTERNAL: sum(ext),
        "open": sum(wet) + sum(flight), "open_work": wet[0] + flight[0],
        "total": sum(wet) + sum(flight) + sum(fired) + sum(ext), "replies": wet[1] + flight[1] + fired[1] + ext[1],
        "misdelivery": mis,
        "in_flight_work": flight[0], "answered_work": fired[0], "external_work": ext[0],
    }


def _files_select(letters: list, graph: ReplyGraph, filters: Filters, limit, box_of, scope_label, fetch,
                  judged) -> tuple:
    chosen = [l for l in letters if not l.answers and filters.matches(l, graph.state(l))]
    if filters.on_hidden:  # no held letter matches a filter on a field it never shows
        from m1nd.secrets import held_in_batch

        held = held_in_batch([l.raw for l in chosen])
        chosen = [l for i, l in enumerate(chosen) if i not in held or not judged(l)]
    chosen.sort(key=lambda l: (letter_sort_key(l), l.id, _digest(l)), reverse=True)
    shown = chosen if limit is None else chosen[:limit]
    out = tuple(Shown(l, graph.state(l), box_of(l) if scope_label is None else scope_label,
                      _replies(l, graph, fetch)) for l in shown)
    return out, len(chosen)


def _digest(letter) -> str:
    return hashlib.sha256(letter.raw).hexdigest()


def files_sweep_listing(result, filters: Filters, limit: int | None) -> Listing:
    """The sweep's view from a files-only `m1nd.sweep.sweep` result."""
    letters = result.letters  # digest -> Letter
    graph = result.graph
    rows = []
    in_boxes: set[str] = set()
    first_box: dict[str, str] = {}
    for read in result.boxes:
        rows.append((read.box, read.box.label, _files_counts([letters[d] for d in read.ids], graph)))
        for d in read.ids:
            first_box.setdefault(d, read.box.label)
        in_boxes |= read.ids
    waiting = [letters[d] for d in letters if d not in in_boxes]
    not_filed = _files_counts(waiting, graph) if waiting else None
    totals = _files_counts(letters.values(), graph)
    pool = list(letters.values())
    if filters.box is not None:
        chosen = [r for r in result.boxes if r.box.label.lower() == filters.box.lower()]
        if not chosen:
            from m1nd.errors import NotFound

            raise NotFound(f"no box named {filters.box!r} in this sweep "
                           f"(boxes: {', '.join(r.box.label for r in result.boxes)})")
        pool = [letters[d] for d in chosen[0].ids]
    by_id: dict[str, list] = {}
    for l in letters.values():
        by_id.setdefault(l.id, []).append(l)
    for same in by_id.values():
        same.sort(key=_digest)
    medulla = {d for read in result.boxes if read.box.is_medulla for d in read.ids}
    in_project = {d for read in result.boxes if not read.box.is_medulla for d in read.ids}

    def judged(letter) -> bool:  # a medulla letter is never held (files_held)
        d = _digest(letter)
        if d in in_project:
            return True
        return d not in medulla and not for_medulla(result.run, letter.brain, letter.repo)

    shown, matched = _files_select(pool, graph, filters, limit, lambda l: first_box.get(_digest(l), "spool"), None,
                                   lambda lid: by_id.get(lid, []), judged)
    shown = files_held(shown, judged)
    return Listing(told_apart(rows), not_filed, totals, shown, matched, filters, limit)


def files_box_listing(view, markers, filters: Filters, limit: int | None) -> Listing:
    """One box's view from a files-only `m1nd.boxview.view_box` result."""
    distinct: dict[str, object] = {}
    for l in view.letters:
        distinct.setdefault(_digest(l), l)
    graph = reply_graph(distinct.values(), markers)
    totals = _files_counts(distinct.values(), graph)
    by_id: dict[str, list] = {}
    for d, l in sorted(distinct.items()):
        by_id.setdefault(l.id, []).append(l)
    shown, matched = _files_select(list(distinct.values()), graph, filters, limit, None, view.box.label,
                                   lambda lid: by_id.get(lid, []), lambda letter: not view.box.is_medulla)
    if not view.box.is_medulla:  # the medulla box is private to the home: never held
        shown = files_held(shown, lambda letter: True)
    return Listing((), None, totals, shown, matched, filters, limit)


def files_held(shown: tuple[Shown, ...], judged) -> tuple[Shown, ...]:
    """The shown letters with `held` set on those carrying a likely secret, among the
    ones `judged(letter)` says the held rule applies to (the reference of held_kind)."""
    from dataclasses import replace

    from m1nd.secrets import held_in_batch

    out = []
    for sh in shown:
        letters = [sh.letter] + [r for r, _ in sh.replies]
        found = held_in_batch([l.raw for l in letters])
        kinds = [found.get(i) if judged(l) else None for i, l in enumerate(letters)]
        out.append(replace(sh, held=kinds[0], held_replies=frozenset(l.id for l, k in zip(letters[1:], kinds[1:]) if k)))
    return tuple(out)
