"""Opening the read model and keeping it current: the database opened (rebuilt from the
files when it does not verify, in memory when it cannot be written or is busy), the
spool and every box brought current one file at a time (readmodel/update.py), the
letters seen for the first time told to the coverage ledger, and a database fault in
the middle of a view turned into one error line.  A part of ReadModel
(m1nd/readmodel/__init__.py)."""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager

import orjson

from m1nd.boxes import Box, Refused, refusal
from m1nd.errors import M1ndError
from m1nd.fates import ReplyGraph
from m1nd.fsutil import gc_paused, open_regular
from m1nd.readmodel import store
from m1nd.readmodel.rows import BOX, SPOOL, Source
from m1nd.readmodel.update import path_key, refresh_file
from m1nd.run import Run

PRELOAD_BYTES = 4 << 20  # spool bytes to index that are worth compiling the secret rules in a thread
PROGRESS_BYTES = 1 << 20  # a first build reading this much shows a progress bar when stderr is a terminal
FIRST_SEEN_BLOCK = 1 << 16  # digests told to the coverage ledger at a time


class Opening:
    """How ReadModel is opened and brought current, and what it was brought current
    over: its sources (the spool, then the boxes) and its generation."""

    def __init__(self, run: Run, con: sqlite3.Connection, persistent: bool, notes: list[str]) -> None:
        self.run = run
        self.con = con
        self.persistent = persistent
        self.notes = notes  # said once on stderr by the CLI: state rebuilt, read-only home
        self.gens: list[int] = []  # generations this update wrote
        self.sources: list[Source] = []
        self._graphs: dict[str, ReplyGraph] = {}
        self._progress = None  # advances the first build's progress bar (see _build_progress)

    @classmethod
    def open(cls, run: Run, secret_check=None, only: Box | None = None):
        """The model for this run, brought current (what `open_model` does, which says how)."""
        if not os.path.isdir(run.paths.home):
            # No home yet: nothing to keep a model in, and a read must not create one.
            con, persistent, notes = store.open_memory(), False, []
        else:
            con, persistent, notes = store.open_db(run.paths.state)
        if not persistent and os.path.isdir(run.paths.home):
            notes.append(f"cannot write the read model under {run.paths.state}: reading the files directly (slower)")
        model = cls(run, con, persistent, notes)
        try:
            model.refresh(secret_check, only)
        except (sqlite3.DatabaseError, UnicodeDecodeError, orjson.JSONDecodeError) as exc:
            model.close()
            readonly = persistent and isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc)
            if store.busy(exc) or readonly:
                # Another process held the lock too long, or the file cannot be written
                # after all: answer from the files, leave the database as it is.
                why = "is busy (another m1nd is updating it)" if store.busy(exc) else "cannot be written"
                model = cls(run, store.open_memory(), False,
                            notes + [f"read model {store.db_path(run.paths.state)} {why}: reading the files directly"])
                model.refresh(secret_check, only)
                _record_first_seen(model)
                return model
            # Damaged under us (a page torn on disk): start over from the files.
            if persistent:
                store._remove(store.db_path(run.paths.state))
                con, persistent, more = store.open_db(run.paths.state)
                notes = notes + [f"read model {store.db_path(run.paths.state)} does not verify ({exc}):"
                                 " rebuilt from the files"] + more
            else:
                raise
            model = cls(run, con, persistent, notes)
            model.refresh(secret_check, only)
        except BaseException:
            model.close()
            raise
        _record_first_seen(model)
        return model

    # -- keeping current ------------------------------------------------------------
    def refresh(self, secret_check=None, only: Box | None = None) -> None:
        run = self.run
        sources = []
        spool_path = run.paths.spool
        if os.path.isdir(spool_path):
            raise M1ndError(f"cannot read spool {spool_path}: Is a directory")
        if secret_check is None:
            from m1nd import secrets

            secret_check = secrets.held_in_batch
            if self.persistent:  # the compiled rules are cached in the state, as distribution does
                secrets.use_cache(os.path.join(run.paths.state, "rules"))
            if self._unread(spool_path) >= PRELOAD_BYTES:
                secrets.preload()  # compiled in a thread while the spool is read
        fresh = self.con.execute("SELECT count(*) FROM files").fetchone()[0] == 0
        if fresh:
            store.drop_secondary(self.con)
            self.con.execute(f"PRAGMA cache_size = -{store.BUILD_CACHE_KB}")
        boxes = [only] if only is not None else run.boxes()
        # gc_paused: indexing makes millions of acyclic rows; on a first build of a million
        # letters the collector's passes over them cost about a tenth of the build.
        with _build_progress(fresh, [spool_path] + [b.path for b in boxes]) as progress, gc_paused():
            self._progress = progress
            try:
                sources.append(self._refresh_one(SPOOL, SPOOL, spool_path, None, secret_check, strict=True))
                for box in boxes:  # a box line may have arrived by git: judged as a spool line is
                    sources.append(self._refresh_one(BOX, box.label, box.path, box, secret_check, strict=False))
            finally:
                self._progress = None
        if fresh:
            if self.persistent:  # read again by later commands: worth ordering once
                store.cluster_letters(self.con)
            store.make_secondary(self.con)
            self.con.execute(f"PRAGMA cache_size = -{store.CACHE_KB}")
        self.sources = sources

    def _unread(self, path: str) -> int:
        """Bytes of a file past what the model has indexed of it."""
        try:
            size = os.stat(path).st_size
        except OSError:
            return 0
        row = self.con.execute("SELECT offset FROM files WHERE path = ?", (path_key(path),)).fetchone()
        return size - (row[0] if row else 0)

    def _refresh_one(self, kind, label, path, box, secret_check, strict) -> Source:
        if box is not None:
            reason = refusal(box)
            if reason:
                return Source(kind, label, path, box, None, str(Refused(reason)))
        fh = None
        try:
            fh = open_regular(path)  # a FIFO, a device or a directory: an error, never a hang
            fid, gens = refresh_file(self.con, path, fh.fileno() if fh else None, secret_check,
                                     self._progress)
        except OSError as exc:
            message = f"cannot read {'spool ' if strict else ''}{path}: {exc.strerror}"
            if strict:
                raise M1ndError(message) from None
            return Source(kind, label, path, box, None, message)
        finally:
            if fh is not None:
                fh.close()
        self.gens.extend(gens)
        return Source(kind, label, path, box, fid, None)

    def close(self) -> None:
        try:
            self.con.close()
        except sqlite3.Error:
            pass

    # -- identity -------------------------------------------------------------------
    @property
    def generation(self) -> int:
        """The model's committed generation: it grows whenever indexed content changes.
        `letters(where="l.first_gen > ?", args=(g,))` gives what was indexed since `g`."""
        return int(self.con.execute("SELECT value FROM meta WHERE key = 'gen'").fetchone()[0])

    @property
    def epoch(self) -> str:
        """A random identity of this database, new whenever it is built from nothing:
        generations of two epochs are not comparable."""
        row = self.con.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        return row[0] if row else ""

    # -- sources --------------------------------------------------------------------
    @property
    def spool(self) -> Source:
        return self.sources[0]

    @property
    def boxes(self) -> list[Source]:
        """Every box of the run, readable or not (see Source.problem)."""
        return self.sources[1:]

    def readable_boxes(self) -> list[Source]:
        return [s for s in self.sources[1:] if s.fid is not None]


def _record_first_seen(model: Opening) -> None:
    """Tell the coverage ledger (reports, `m1nd/ledger.py`) which letters this update
    saw for the first time, missions left out.  The ledger is the durable record
    and ignores letters it already holds; without it there is nothing to do."""
    if not model.gens:
        return
    try:
        from m1nd import ledger  # type: ignore[attr-defined]
    except ImportError:
        return
    record = getattr(ledger, "record_seen", None)
    if record is None:
        return
    from m1nd.clock import parse_now, stamp

    try:
        # digests only, in the order of the letters (by id: digest order): what the ledger
        # writes, a block at a time (a whole rebuild holds no list of every digest)
        marks = ",".join("?" * len(model.gens))
        cur = model.con.execute(
            f"SELECT digest FROM letters WHERE first_gen IN ({marks}) AND mission = 0 ORDER BY digest",
            model.gens)
        observed = stamp(parse_now())
        while block := [r[0] for r in cur.fetchmany(FIRST_SEEN_BLOCK)]:
            record(model.run.paths, block, observed)
    except (OSError, M1ndError) as exc:
        model.notes.append(f"coverage ledger not updated: {getattr(exc, 'message', None) or exc}")


@contextmanager
def damage_reported(run: Run):
    """A database fault in the middle of a view (a page damaged under a running
    command) becomes one error line: the database is removed, unless it was only
    busy, so that the next command rebuilds it from the files."""
    try:
        yield
    except (sqlite3.DatabaseError, UnicodeDecodeError, orjson.JSONDecodeError) as exc:
        path = store.db_path(run.paths.state)
        if store.busy(exc):
            raise M1ndError(f"read model {path} is busy (another m1nd is updating it): try again") from None
        store._remove(path)
        raise M1ndError(f"read model {path} failed ({exc}): removed; the next command rebuilds it") from None


@contextmanager
def _build_progress(fresh: bool, paths: list[str]):
    """A progress bar on stderr while a first build (a new home, or after the state was
    deleted) reads a large mailbox, when stderr is a terminal; yields the callback
    that advances it by bytes read (None: no bar). It leaves no trace on the screen."""
    import sys

    total = 0
    if fresh:
        for path in paths:
            try:
                total += os.stat(path).st_size
            except OSError:
                pass
    stream = sys.stderr
    if total < PROGRESS_BYTES or not (hasattr(stream, "isatty") and stream.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("indexing the mailbox"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                   console=Console(file=stream), transient=True)
    task = bar.add_task("index", total=total)
    with bar:
        yield lambda n: bar.advance(task, n)
