"""What the HTML pages show (serve.md §3), read from the read model of a turn: the
mailbox page's boxes and one page of letters for its filters, and a letter's thread.
A held letter's text never leaves: it is shown as held."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from m1nd.errors import NotFound
from m1nd.held import held_kind, held_row, held_ts
from m1nd.run import Run

SPOOL_ROW = "spool"  # letters that wait in the spool (not filed into any box)


def _index_data(run: Run, model, f) -> "IndexData":
    graph = model.graph()
    rows, not_filed = model.box_counts()
    boxes = [BoxData(s.label, s.root, c) for s, c in rows]
    if not_filed:
        boxes.append(BoxData(SPOOL_ROW, None, not_filed))
    problems = [f"box {s.label}: {s.problem}" for s in model.boxes if s.problem]
    unreachable = sorted({r.label for r in run.roots.unreachable})
    scope, where, args = _letters_sql(model, f)
    core = f.core()
    matches = core.matches
    # Open work of every box, or of one, is already counted: stop at the page's end.
    quick = (f.state == "open" and not f.replies and not (f.agent or f.klass or f.tool or f.since
                                                          or f.until or f.q) and f.box != SPOOL_ROW)
    known = None
    if quick:
        known = (model.counts(scope) if scope is None else
                 next((c for s, c in rows if s.fid == scope.fid), None))
    chosen = []
    total = 0
    end = f.offset + f.limit
    hidden = core.on_hidden or bool(f.q)  # a filter on fields a held letter never shows
    for row in model.letters(scope, order="newest", where=where, args=args):
        state = graph.state(row)
        if not matches(row, state):
            continue
        on_page = f.offset <= total < end
        held = held_kind(model, row.digest) if hidden or on_page else None
        if hidden and held:
            continue  # or the filter would tell its hidden text, a guess at a time
        if on_page:  # a held letter's text never leaves
            chosen.append(LetterData(held_row(row, held) if held else row, state, _box_of(model, row.digest),
                                     len(graph.answers_to(row.id))))
        total += 1
        if known is not None and total >= end:
            total = known["open_work"]
            break
    return IndexData(boxes, chosen, total, problems, unreachable)


def _thread_data(model, ident: str) -> "ThreadData":
    graph = model.graph()
    found = model.lookup(ident.lower(), missions=False)
    if not found:
        raise NotFound(f"no letter {ident}")
    if len(found) > 1:
        return ThreadData(ident, candidates=found)
    focus = found[0]
    cards: dict[str, CardData] = {}

    def card(lid: str) -> "CardData | None":
        if lid not in cards:
            rows = model.by_id(lid)
            if not rows:
                return None
            row = rows[0]
            raw = model.raw(row.digest)
            try:
                fields = orjson.loads(raw) if raw else {}
            except orjson.JSONDecodeError:
                fields = {}
            held = held_kind(model, row.digest)  # a held letter's text never leaves
            if held:
                row, fields = held_row(row, held), {"ts": held_ts(row.ts)}
            cards[lid] = CardData(row, graph.state(row), _box_of(model, row.digest),
                                  graph.answers_to(lid), fields if isinstance(fields, dict) else {})
        return cards[lid]

    card(focus)
    # up to the letters that answer nothing known, then every reply down from them
    roots, seen, todo = [], {focus}, [focus]
    while todo:
        cur = todo.pop()
        parents = [a for a in cards[cur].row.answers if card(a) is not None]
        if not parents:
            roots.append(cur)
        for p in parents:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    when = lambda lid: (cards[lid].row.sortkey, lid)  # noqa: E731
    roots = sorted(set(roots), key=when)
    children: dict[str, list[str]] = {}
    placed, queue = set(roots), list(roots)
    while queue:
        cur = queue.pop(0)
        kids = [k for k in dict.fromkeys(graph.answers_to(cur)) if k not in placed and card(k) is not None]
        kids.sort(key=when)
        placed.update(kids)
        children[cur] = kids
        queue.extend(kids)
    return ThreadData(focus, roots=roots, children=children, cards=cards)


def _box_of(model, digest: str) -> str:
    for loc in model.locations(digest):
        if loc.kind != "spool":
            return loc.label
    return SPOOL_ROW


def ascii_lower(text: str) -> str:
    """SQLite's lower() folds ASCII letters only: fold the query the same way."""
    return "".join(c.lower() if c.isascii() else c for c in text)


def _letters_sql(model, f):
    """(scope, where, args) for the read model: every filter but the fate, which is
    derived from the reply graph."""
    scope = None
    where, args = [], []
    if f.box == SPOOL_ROW:
        fids = [s.fid for s in model.readable_boxes()]
        if fids:
            where.append(f"NOT EXISTS (SELECT 1 FROM copies c2 WHERE c2.digest = l.digest"
                         f" AND c2.fid IN ({','.join('?' * len(fids))}))")
            args += fids
    elif f.box:
        # a label that is not UTF-8 comes back from its own link with U+FFFD for its bytes
        match = [s for s in model.readable_boxes() if _as_sent(s.label).lower() == f.box.lower()]
        if not match:
            raise NotFound(f"no box named {f.box!r} (boxes: {', '.join(s.label for s in model.readable_boxes())})")
        scope = match[0]
    if not f.replies:
        where.append("l.reply = 0")
    if f.q:
        where.append("instr(lower(l.what), ?) > 0")
        args.append(ascii_lower(f.q))
    return scope, " AND ".join(where), tuple(args)


@dataclass(frozen=True)
class BoxData:
    label: str
    path: str | None
    counts: dict


@dataclass(frozen=True)
class LetterData:
    row: object  # a read model LetterRow
    state: str
    box: str
    replies: int


@dataclass(frozen=True)
class IndexData:
    boxes: list[BoxData]
    letters: list[LetterData]
    total: int
    problems: list[str]
    unreachable: list[str]


@dataclass(frozen=True)
class CardData:
    row: object
    state: str
    box: str
    answered_by: list[str]
    fields: dict


@dataclass(frozen=True)
class ThreadData:
    focus: str
    candidates: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)
    children: dict = field(default_factory=dict)
    cards: dict = field(default_factory=dict)


def _as_sent(label: str) -> str:
    """A box label as a browser sends it back in a query (bytes that are not UTF-8: U+FFFD)."""
    return label.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
