"""Where the server's answers come from: the same core functions the commands call
(`m1nd/documents/` names each document's one function), over a run opened for each
request (so a roster change is seen at once).

Every answer that reads the mailbox asks the read model, as the command does; nothing
is kept between requests. `show`, a box's document and the pages take turns
(turns.py): one model per turn, brought current with the files as they are when the
turn begins and shared by every request waiting then. The v0 document (long to write,
so it would hold up a turn), doctor and cases open their own model.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import BytesIO

import orjson

from m1nd.errors import M1ndError, NotFound
from m1nd.held import held_kind, held_row, held_ts
from m1nd.run import Run, open_run
from m1nd.serve import documents
from m1nd.serve.documents import Doc
from m1nd.serve.turns import Turns

SPOOL_ROW = "spool"  # letters that wait in the spool (not filed into any box)


class Mailbox:
    """The server's view of one home: the options `m1nd serve` was given."""

    def __init__(self, home=None, spool=None, roots=None, cwd=None) -> None:
        self.home, self.spool, self.roots = home, spool, list(roots or [])
        self.cwd = cwd or os.getcwd()
        self.turns = Turns(self._opened)

    def run(self, tolerant: bool = False) -> Run:
        return open_run(home=self.home, spool=self.spool, extra_roots=self.roots, cwd=self.cwd,
                        tolerant=tolerant)

    @contextmanager
    def model(self, run: Run):
        """The read model, brought current for this request."""
        from m1nd.readmodel import open_model

        model = open_model(run)
        try:
            for note in model.notes:
                _say_once(note)
            yield model
        finally:
            model.close()

    @contextmanager
    def _opened(self):
        """A turn's run and read model (Turns): opened for the turn, closed after it."""
        run = self.run()
        with self.model(run) as model:
            yield run, model

    # JSON routes -------------------------------------------------------------

    def inbox_sweep(self) -> Doc:
        """`m1nd --inbox-sweep --no-distribute`: the v0 document (also when a box is
        refused, as the command prints it before exiting 1)."""
        try:
            return self._sweep_doc(self.run())
        except M1ndError as exc:
            return documents.error(exc)

    def _sweep_doc(self, run: Run) -> Doc:
        from m1nd.sweep import write_document

        out = BytesIO()
        with self.model(run) as model:
            write_document(run, model, None, out)
        return Doc(200, out.getvalue())

    def box(self, selector: str | None, given: dict[str, str]) -> Doc:
        """`m1nd box SELECTOR --json` with the box filters `given` (state, agent,
        class, tool, since, until: a parameter present counts, as an option given
        on the command line does)."""
        try:
            from m1nd.views import make_filters

            make_filters(given.get("state"), given.get("agent"), given.get("class"), given.get("tool"),
                         given.get("since"), given.get("until"), default_state="all")  # its errors first
            return self.turns.ask(lambda run, model: self._box_doc(run, model, selector, given))
        except M1ndError as exc:
            return documents.error(exc)

    @staticmethod
    def _box_doc(run: Run, model, selector: str | None, given: dict[str, str]) -> Doc:
        from m1nd.boxview import box_json

        out = BytesIO()
        box_json(run, selector, out, state=given.get("state"), agent=given.get("agent"),
                 klass=given.get("class"), tool=given.get("tool"), since=given.get("since"),
                 until=given.get("until"), model=model)
        return Doc(200, out.getvalue())

    def show(self, given: str) -> Doc:
        """`m1nd show ID --json`."""
        from m1nd.show import show_json

        try:
            return self.turns.ask(lambda run, model: documents.ok(show_json(model, given)))
        except M1ndError as exc:
            return documents.error(exc)

    def doctor(self) -> Doc:
        """`m1nd doctor --json`, status 200 even when a check is an error."""
        from m1nd.clock import parse_now
        from m1nd.documents.doctor import doctor_report

        moment = parse_now(None)
        return documents.ok(doctor_report(self.run(tolerant=True), moment, _say_once).as_json())

    # cases (issue 11) --------------------------------------------------------

    def cases(self) -> Doc:
        """`m1nd cases --json`."""
        from m1nd.documents.cases import cases_document

        return documents.ok(cases_document(self.run(), _say_once))

    def cases_overlay(self):
        """The overlay of `m1nd cases --json`, which the page shapes."""
        from m1nd.documents.cases import cases_overlay

        return cases_overlay(self.run(), _say_once)

    # reports (issue 10's store) ---------------------------------------------

    def _paths(self):
        from m1nd.paths import resolve_paths

        return resolve_paths(self.home, self.spool)

    def delivered(self) -> list[dict]:
        """Every delivered report, newest first, as `m1nd report list` orders them."""
        from m1nd.documents.reports import delivered

        return delivered(self._paths())

    def reports(self, limit: str | None, offset: str | None) -> Doc:
        """`m1nd report list --json [--limit N] [--offset K]`."""
        from m1nd.documents.reports import report_list

        low, skip = _int_option("--limit", limit), _int_option("--offset", offset)
        return documents.ok(report_list(self._paths(), low, skip).as_json())

    def report_html(self, run_id: str) -> bytes:
        """A delivered report's HTML, the same bytes its directory sink stored."""
        from m1nd.documents.reports import delivered_html

        return delivered_html(self._paths(), run_id)

    # pages -------------------------------------------------------------------

    def index(self, filters, render):
        """The mailbox page for these filters, from the model of a turn (rendered after it)."""
        return render(self.turns.ask(lambda run, model: _index_data(run, model, filters)))

    def letter(self, ident: str, render):
        return render(self.turns.ask(lambda run, model: _thread_data(model, ident)))


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


def _int_option(name: str, raw: str | None) -> int:
    """A whole-number query parameter checked by the very option `m1nd report list`
    declares (its default, its range, its message)."""
    from typer.main import get_command

    from m1nd.cli.report import app as report_app
    from m1nd.errors import UsageError

    command = get_command(report_app).commands["list"]
    param = next(p for p in command.params if name in p.opts)
    if raw is None:
        return param.default
    try:
        return param.type.convert(raw, param, None)
    except Exception as exc:  # click's BadParameter, from typer's bundled click
        if not hasattr(exc, "format_message"):
            raise
        raise UsageError(exc.format_message()) from None


_said: set[str] = set()


def _say_once(note: str) -> None:
    import sys

    from m1nd.safetext import safe

    if note not in _said:
        _said.add(note)
        sys.stderr.write(f"m1nd: warning: {safe(note)}\n")


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
