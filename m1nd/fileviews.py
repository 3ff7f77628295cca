"""The human views from the files alone: the reference the read model's views
(views.py) are held to by the tests."""

from __future__ import annotations

import hashlib

from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, WET_INK, ReplyGraph, reply_graph
from m1nd.held import for_medulla
from m1nd.viewdata import Filters, Listing, Shown, _replies, letter_sort_key, told_apart

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
