"""What the human views show, computed either from the read model (every command)
or from the files alone (the reference the tests hold the model to).

A view is plain data: the per-box counts, the letters selected by the filters
(newest first, at most `limit`), each with its fate, its box and the replies to it,
and how many more matched.  cli/render.py decides how it looks.

The filters and a view's data are viewdata.py's, the views from the files alone
fileviews.py's (each name is also asked of this module); the views from the read
model are here.
"""

from __future__ import annotations

from m1nd.fileviews import files_box_listing, files_held, files_sweep_listing  # noqa: F401  (asked of this module)
from m1nd.held import held_kind
from m1nd.viewdata import (  # noqa: F401  (asked of this module)
    DEFAULT_LIMIT, STATE_FILTERS, Filters, Listing, Shown, _replies, letter_sort_key, make_filters, tool_family,
    told_apart)


# -- from the read model -----------------------------------------------------------------


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
