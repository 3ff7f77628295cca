"""What a human view is made of: the filters of the read commands (their options and
checks), and a view's plain data (`Listing`, `Shown`: the per-box counts, the letters
selected, newest first, each with its fate, its box and the replies to it).  views.py
computes them from the read model, fileviews.py from the files alone."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from m1nd.errors import UsageError
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, OPEN_STATES, WET_INK, ReplyGraph
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
