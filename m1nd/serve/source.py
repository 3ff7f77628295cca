"""Where the server's answers come from: the same core functions the commands call
(`m1nd/documents/` names each document's one function), over a run opened for each
request (so a roster change is seen at once).

Every answer that reads the mailbox asks the read model, as the command does; nothing
is kept between requests but answers whose every input is the same. `show`, a box's
document and the pages take turns (turns.py): one model per turn, brought current
with the files as they are when the turn begins and shared by every request waiting
then. Each of them names what its answer is made of (`_box_key`, `_show_key`,
`_union_key`): an answer asked again with the same key is the one kept, so a box's
document is made again only when its box changed, `show` when its thread did, and
the page once per change of the mailbox however many ask it. The v0 document (long to write, so it would hold up a turn), doctor and
cases open their own model.

What the mailbox and thread pages show, read from a turn's model, is pagedata.py's.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from io import BytesIO

from m1nd.errors import M1ndError
from m1nd.run import Run, open_run
from m1nd.serve import documents
from m1nd.serve.documents import Doc
from m1nd.serve.pagedata import (  # noqa: F401  (the pages' data, asked of this module)
    SPOOL_ROW, IndexData, ThreadData, _index_data, _thread_data)
from m1nd.serve.turns import Turns


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
            return self.turns.ask(lambda run, model: self._box_doc(run, model, selector, given),
                                  lambda run, model: _box_key(run, model, selector, given))
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
            return self.turns.ask(lambda run, model: documents.ok(show_json(model, given)),
                                  lambda run, model: _show_key(run, model, given))
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
        """The mailbox page for these filters, from the model of a turn (rendered in it:
        the page kept is the HTML)."""
        return self.turns.ask(lambda run, model: render(_index_data(run, model, filters)),
                              lambda run, model: _union_key(run, model, "index", repr(filters)))

    def letter(self, ident: str, render):
        return self.turns.ask(lambda run, model: render(_thread_data(model, ident)),
                              lambda run, model: _union_key(run, model, "thread", ident))


# What an answer is made of (turns.py keeps answers by these keys). The model's epoch
# makes generations comparable; a file's generation changes with anything indexed
# from it; the run (its paths, every root as the roster gave it, reachable or not,
# the markers) and the sources (labels, paths, refused boxes) are the rest of what
# the views read.

def _run_key(run: Run) -> tuple:
    return (repr(run.paths), tuple(repr(r) for r in run.roots.roots), run.roots.base, run.bound, run.markers,
            run.setup_problems)


def _sources(model) -> tuple:
    return tuple((s.kind, s.label, s.path, s.root, s.fid, s.problem) for s in model.sources)


def _turn_key(run: Run, model) -> tuple:
    """What every answer of a turn shares: the epoch, the mailbox's generations, the run
    and the sources, worked out once per turn (the model is brought current once)."""
    parts = getattr(model, "served_key", None)
    if parts is None:
        parts = model.served_key = (model.epoch, model.union_key(), _run_key(run), _sources(model))
    return parts


def _box_key(run: Run, model, selector: str | None, given: dict[str, str]) -> tuple:
    """A box's document reads that box alone (its fates too), and the run's markers."""
    from m1nd.boxview import box_source, select_box

    source = box_source(model, select_box(run, selector))
    return ("box", _turn_key(run, model)[0], model.content_key(source), source.label, source.path, source.root,
            run.markers, tuple(sorted(given.items())))


def _show_key(run: Run, model, given: str) -> tuple | None:
    """`show` reads one id's thread (queries.thread_key), where its copies live, and
    the run (the medulla letters it never holds)."""
    from m1nd.show import resolve_id

    lid = resolve_id(model, given)  # a prefix another letter made ambiguous: computed (an error)
    epoch, _, run_key, sources = _turn_key(run, model)
    return ("show", epoch, run_key, sources, lid, model.thread_key(lid), given)


def _union_key(run: Run, model, kind: str, given: str) -> tuple:
    """The pages read the whole mailbox."""
    return (kind, *_turn_key(run, model), given)


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
