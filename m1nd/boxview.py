"""One box, scoped to its own letters (contract section 7): never a re-fold of the spool."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from m1nd.boxes import MEDULLA_LABEL, Box, Refused, project_box, read_box
from m1nd.errors import M1ndError, NotFound, UsageError
from m1nd.fates import OPEN_STATES, count_states, reply_graph
from m1nd.held import held_ts
from m1nd.letters import Letter
from m1nd.run import Run
from m1nd.sweep import letter_view


@dataclass(frozen=True)
class BoxView:
    box: Box
    letters: list[Letter]  # file order, duplicates kept, missions left out
    views: list[dict]
    counts: dict[str, int]
    malformed: tuple[int, ...]

    def as_json(self) -> dict:
        return {
            "served_brain": {
                "project_root": self.box.root.path if self.box.root else None,
                "display_name": self.box.label,
            },
            "letters": self.views,
            "counts": self.counts,
        }


def select_box(run: Run, selector: str | None) -> Box:
    """`medulla`, a root path, or a label known to the run; default the bound root."""
    if selector is None:
        if run.bound is None:
            raise UsageError("not inside a git work tree: name a box (medulla, a root path or a label)")
        selector = run.bound
    if selector.lower() == MEDULLA_LABEL:
        return run.medulla
    looks_like_path = "/" in selector or selector in (".", "..") or selector.startswith("~")
    if looks_like_path:
        real = os.path.realpath(os.path.expanduser(selector))
        for root in run.roots.roots:
            if root.real == real:
                return project_box(root)
        raise NotFound(f"no box for {selector}: it is not a root of this run (m1nd roster add {selector})")
    key = selector.lower()
    if key in run.roots.known:
        return project_box(run.roots.known[key])
    if key in run.roots.ambiguous:
        paths = ", ".join(r.path for r in run.roots.ambiguous[key])
        raise NotFound(f"box label {selector!r} is ambiguous ({paths}): name its path instead")
    raise NotFound(f"no box named {selector!r} (labels: {', '.join(sorted(run.roots.known)) or 'none'}; or medulla)")


def view_box(run: Run, selector: str | None) -> BoxView:
    box = select_box(run, selector)
    try:
        found = read_box(box)
    except Refused as exc:
        raise M1ndError(f"box {box.label} refused: {exc}") from None
    except OSError as exc:
        raise M1ndError(f"cannot read box {box.path}: {exc.strerror}") from None
    letters = [l for _, l in found.letters if not l.is_mission]
    distinct = {hashlib.sha256(l.raw).digest(): l for l in letters}
    graph = reply_graph(distinct.values(), run.markers)
    from m1nd.secrets import held_in_batch

    kinds = {} if box.is_medulla else held_in_batch([l.raw for l in letters])  # the medulla box: never held
    views = [held_view(l, graph, kinds[i]) if i in kinds else letter_view(l, graph) for i, l in enumerate(letters)]
    counts = count_states(graph.state(l) for l in distinct.values())
    counts["open_work"] = sum(1 for l in distinct.values() if not l.answers and graph.state(l) in OPEN_STATES)
    return BoxView(box, letters, views, counts, tuple(found.malformed))


def held_view(letter, graph, kind: str) -> dict:
    """A held letter in `m1nd box --json`: its id, ts, state and the kind of secret, nothing else."""
    return {"id": letter.id, "ts": held_ts(letter.ts), "state": graph.state(letter), "held": kind}


COUNT_KEYS = ("wet_ink", "in_flight", "fired_clay", "external", "open", "open_work")


def model_box_json(model, source, filters, out) -> None:
    """`m1nd box --json` from the read model, streamed: the box's letters in file
    order (duplicates kept, missions left out), fates from this box alone; with
    `filters`, only the matching letters.  Same bytes as `BoxView.as_json()`."""
    from m1nd.sweep import _nested, write_views

    graph = model.graph(source)
    counts = model.counts(source)
    box = source.box
    out.write(b'{\n  "counts": ' + _nested({k: counts[k] for k in COUNT_KEYS}, 1) + b',\n  "letters": [')

    def views():
        # Every line of a project box carrying a likely secret is held (judged when indexed).
        held = {line: kind for line, _, kind in model.held_in(source)} if box.root is not None else {}
        for line, letter in model.box_letters(source):
            fate = graph.state(letter)
            if filters is not None and (not filters.matches(letter, fate) or (filters.on_hidden and line in held)):
                continue  # no held letter matches a filter on a field it never shows
            yield held_view(letter, graph, held[line]) if line in held else letter_view(letter, graph)

    any_written = write_views(out, views())
    out.write(b"\n  ],\n" if any_written else b"],\n")
    served = {"display_name": box.label, "project_root": box.root.path if box.root else None}
    out.write(b'  "served_brain": ' + _nested(served, 1) + b"\n}\n")
    out.flush()


def box_json(run: Run, selector: str | None, out, state=None, agent=None, klass=None, tool=None, since=None,
             until=None, model=None, notes=None) -> None:
    """Write the bytes of `m1nd box SELECTOR --json [filters]` to the binary stream
    `out`, from the read model (opened here unless given; its notes are appended to
    `notes` when a list is given).  Raises M1ndError (NotFound, UsageError) as the
    command does."""
    from m1nd.readmodel import open_model
    from m1nd.views import make_filters

    narrowed = any(v is not None for v in (state, agent, klass, tool, since, until))
    filters = make_filters(state, agent, klass, tool, since, until, default_state="all")
    chosen = select_box(run, selector)
    own = model is None
    if own:
        model = open_model(run, only=chosen)  # the spool and this box: fates from this box alone
        if notes is not None:
            notes.extend(model.notes)
    try:
        source = box_source(model, chosen)
        model_box_json(model, source, filters if narrowed else None, out)
    finally:
        if own:
            model.close()


def box_source(model, chosen: Box):
    """The model's Source of a selected box; M1ndError when it is refused or unreadable."""
    source = next(s for s in model.boxes if s.path == chosen.path)
    if source.problem:
        if "cannot read" in source.problem:
            raise M1ndError(f"cannot read box {chosen.path}: {source.problem.rsplit(': ', 1)[-1]}")
        raise M1ndError(f"box {chosen.label} refused: {source.problem}")
    return source
