"""The read model: one persistent, derived index of every letter (spool and boxes).

    from m1nd.readmodel import open_model
    model = open_model(run)            # opened and brought current for this run
    for letter in model.letters():     # the union, distinct by digest, id order
        model.state(letter)            # its fate over the union
    model.close()

Never a source of truth: delete `<home>/state/readmodel.sqlite3` and every view
prints what it printed.  Fates and counts are derived at read time (section 5 of
the mailbox contract); what is cached is keyed by the content generations it was
computed from.  The methods of ReadModel below are the API (the README says what
every view reads from it).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, NamedTuple

import orjson

from m1nd.boxes import Box, Refused, refusal
from m1nd.errors import M1ndError
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, STATES, WET_INK, ReplyGraph, is_receipt
from m1nd.fsutil import open_regular
from m1nd.readmodel import store, tally
from m1nd.readmodel.graph import ModelGraph
from m1nd.readmodel.rows import BOX, COLS as _COLS, COLS_OF_L, SPOOL, LetterRow, Location, Source, row as _row
from m1nd.readmodel.update import path_key, refresh_file
from m1nd.run import Run

PRELOAD_BYTES = 4 << 20  # spool bytes to index that are worth compiling the secret rules in a thread
PROGRESS_BYTES = 1 << 20  # a first build reading this much shows a progress bar when stderr is a terminal


# How a fact of one file reads its copies: all of them through the primary key, or
# only those added after a generation through their index (never one probe per copy).
_NEW_COPIES = {False: "", True: " INDEXED BY copies_gen"}


class ReadModel:
    def __init__(self, run: Run, con: sqlite3.Connection, persistent: bool, notes: list[str]) -> None:
        self.run = run
        self.con = con
        self.persistent = persistent
        self.notes = notes  # said once on stderr by the CLI: state rebuilt, read-only home
        self.gens: list[int] = []  # generations this update wrote
        self.sources: list[Source] = []
        self._graphs: dict[str, ReplyGraph] = {}
        self._progress = None  # advances the first build's progress bar (see _build_progress)

    # -- keeping current -----------------------------------------------------------
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
        with _build_progress(fresh, [spool_path] + [b.path for b in boxes]) as progress:
            self._progress = progress
            try:
                sources.append(self._refresh_one(SPOOL, SPOOL, spool_path, None, secret_check, strict=True))
                for box in boxes:  # a box line may have arrived by git: judged as a spool line is
                    sources.append(self._refresh_one(BOX, box.label, box.path, box, secret_check, strict=False))
            finally:
                self._progress = None
        if fresh:
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

    # -- identity ------------------------------------------------------------------------
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

    def union_key(self) -> str:
        """A key of the union's current content (changes when any file of the run does)."""
        return self._scope_key(None)

    def count(self, where: str = "", args: tuple = (), missions: bool = False, scope: Source | None = None) -> int:
        """Distinct letters of the union (or one box) matching extra SQL over `letters l`."""
        member, margs = self._member_sql(scope)
        sql = "SELECT count(*) FROM letters l WHERE 1" + ("" if missions else " AND l.mission = 0") + member
        if where:
            sql += f" AND ({where})"
        return self.con.execute(sql, [*margs, *args]).fetchone()[0]

    # -- sources -----------------------------------------------------------------------
    @property
    def spool(self) -> Source:
        return self.sources[0]

    @property
    def boxes(self) -> list[Source]:
        """Every box of the run, readable or not (see Source.problem)."""
        return self.sources[1:]

    def readable_boxes(self) -> list[Source]:
        return [s for s in self.sources[1:] if s.fid is not None]

    def _fids(self, scope: Source | None) -> list[int]:
        if scope is not None:
            return [scope.fid] if scope.fid is not None else []
        return sorted({s.fid for s in self.sources if s.fid is not None})

    def _scope_key(self, scope: Source | None) -> str:
        fids = self._fids(scope)
        rows = self.con.execute(f"SELECT fid, gen FROM files WHERE fid IN ({','.join('?' * len(fids))})", fids)
        data = sorted(rows.fetchall())
        return hashlib.sha256(orjson.dumps([data, "union" if scope is None else "box"])).hexdigest()[:20]

    def _member_sql(self, scope: Source | None, alias: str = "l") -> tuple[str, list]:
        """SQL restricting letters to the scope (the union by default)."""
        fids = self._fids(scope)
        if scope is None:
            others = self.con.execute(
                f"SELECT 1 FROM files WHERE fid NOT IN ({','.join('?' * len(fids))}) AND lines > 0 LIMIT 1",
                fids).fetchone()
            if others is None:
                return "", []
        if not fids:
            return " AND 0", []
        return (f" AND EXISTS (SELECT 1 FROM copies c WHERE c.digest = {alias}.digest"
                f" AND c.fid IN ({','.join('?' * len(fids))}))", fids)

    # -- letters -----------------------------------------------------------------------
    def letters(self, scope: Source | None = None, order: str = "id", missions: bool = False,
                where: str = "", args: tuple = ()) -> Iterator[LetterRow]:
        """Distinct letters of the union (or of one box), missions left out unless
        asked.  order: "id" (ascending id, then digest) or "newest" (by UTC time, newest
        first, then id descending).  `where` is extra SQL over the columns of
        `letters` (e.g. "agent = ?")."""
        member, margs = self._member_sql(scope)
        sql = f"SELECT {_COLS} FROM letters l WHERE 1" + ("" if missions else " AND l.mission = 0") + member
        if where:
            sql += f" AND ({where})"
        sql += " ORDER BY l.id, l.digest" if order == "id" else " ORDER BY l.sortkey DESC, l.id DESC, l.digest DESC"
        cur = self.con.execute(sql, [*margs, *args])
        # Small batches first: a view that stops after 20 letters must not make SQLite
        # find thousands (a small box among many letters).
        size = 32
        while True:
            rows = cur.fetchmany(size)
            if not rows:
                return
            for r in rows:
                yield _row(r)
            size = min(size * 4, 4096)

    def box_letters(self, source: Source) -> Iterator[tuple[int, LetterRow]]:
        """(line number, letter) of one file in file order, duplicates kept, missions left out."""
        cur = self.con.execute(
            f"SELECT c.line, {COLS_OF_L} FROM copies c JOIN letters l"
            " ON l.digest = c.digest WHERE c.fid = ? AND l.mission = 0 ORDER BY c.line", (source.fid,))
        while True:
            rows = cur.fetchmany(2000)
            if not rows:
                return
            for r in rows:
                yield r[0], _row(r[1:])

    def by_digest(self, digest: str) -> LetterRow | None:
        r = self.con.execute(f"SELECT {_COLS} FROM letters WHERE digest = ?", (bytes.fromhex(digest),)).fetchone()
        return _row(r) if r else None

    def by_id(self, lid: str, scope: Source | None = None, missions: bool = False) -> list[LetterRow]:
        """Letters with exactly this 12-hex id (two when they collide), digest order."""
        return list(self.letters(scope, missions=missions, where="l.id = ?", args=(lid,)))

    def lookup(self, prefix: str, missions: bool = True) -> list[str]:
        """Sorted distinct ids of the union starting with `prefix` (lowercase hex)."""
        member, margs = self._member_sql(None)
        hi = prefix + "g"  # every id with this prefix sorts below prefix + "g"
        sql = (f"SELECT DISTINCT l.id FROM letters l WHERE l.id >= ? AND l.id < ?"
               + ("" if missions else " AND l.mission = 0") + member + " ORDER BY l.id LIMIT 50")
        return [r[0] for r in self.con.execute(sql, [prefix, hi, *margs])]

    def locations(self, digest: str, scope: Source | None = None) -> list[Location]:
        """Every copy of a letter in the run's files: spool first, then boxes in run order."""
        by_fid = {s.fid: s for s in self.sources if s.fid is not None}
        out = []
        rows = self.con.execute("SELECT fid, line, offset, length FROM copies WHERE digest = ? ORDER BY fid, line",
                                (bytes.fromhex(digest),)).fetchall()
        order = {s.fid: i for i, s in enumerate(self.sources) if s.fid is not None}
        for fid, line, offset, length in sorted(rows, key=lambda r: (order.get(r[0], 1 << 30), r[1])):
            s = by_fid.get(fid)
            if s is None or (scope is not None and s.fid != scope.fid):
                continue
            out.append(Location(s.kind, s.label, s.path, s.root, line, offset, length))
        return out

    def raw(self, digest: str) -> bytes | None:
        """The letter's raw bytes, read from one of its copies (checked by digest)."""
        for loc in self.locations(digest):
            try:
                with open(loc.path, "rb") as fh:
                    fh.seek(loc.offset)
                    data = fh.read(loc.length)
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() == digest:
                return data
        return None

    def malformed(self, source: Source) -> list[int]:
        return [r[0] for r in self.con.execute(
            "SELECT line FROM malformed WHERE fid = ? AND conflict < 2 ORDER BY line", (source.fid,))]

    def conflict_lines(self, source: Source) -> list[int]:
        return [r[0] for r in self.con.execute(
            "SELECT line FROM malformed WHERE fid = ? AND conflict > 0 ORDER BY line", (source.fid,))]

    def tail(self, source: Source) -> int | None:
        row = self.con.execute("SELECT tail_line FROM files WHERE fid = ?", (source.fid,)).fetchone()
        return row[0] if row else None

    def line_count(self, source: Source, missions: bool = True) -> int:
        """Letter lines of one file (per line, duplicates counted)."""
        def compute(since):  # the lines added after generation `since`
            sql = "SELECT count(*) FROM copies c INDEXED BY copies_gen" + (
                "" if missions else " JOIN letters l ON l.digest = c.digest")
            sql += " WHERE c.gen > ? AND c.fid = ?" + ("" if missions else " AND l.mission = 0")
            return self.con.execute(sql, (since, source.fid)).fetchone()[0]
        return self._grown(f"lines:{int(missions)}", source, compute, lambda old, new: old + new)

    def spool_pairs(self) -> list[tuple[str, str, int, int]]:
        """(brain, repo, letter lines, held lines) per pair over the spool's lines,
        missions included (what distribution counts).  Held: a likely secret."""
        def compute(since):
            return [list(r) for r in self.con.execute(
                "SELECT l.brain, l.repo, count(*), sum(coalesce(l.secret, '') != '') FROM copies c"
                + _NEW_COPIES[bool(since)] + " JOIN letters l ON l.digest = c.digest"
                " WHERE c.fid = ? AND c.gen > ? GROUP BY l.brain, l.repo", (self.spool.fid, since))]

        def merge(old, new):
            total = {(b, r): [n, h] for b, r, n, h in old}
            for b, r, n, h in new:
                part = total.setdefault((b, r), [0, 0])
                part[0] += n
                part[1] += h
            return [[b, r, n, h] for (b, r), (n, h) in sorted(total.items())]
        return [tuple(r) for r in self._grown("pairs", self.spool, compute, merge)]

    def plan(self):
        """Where the spool's letters go, as `distribute(run, write=False)` would say
        (a Receipt with nothing appended), from the model instead of a spool read."""
        from m1nd.distribute import Receipt
        from m1nd.routing import MEDULLA, PROJECT

        total = to_project = to_medulla = pending_letters = held = 0
        pending: set[str] = set()
        resolve = self.run.roots.resolve
        for brain, repo, n, h in self.spool_pairs():
            total += n
            route = resolve(brain, repo)
            if route.kind == MEDULLA:
                to_medulla += n
                continue
            held += h
            if route.kind == PROJECT:
                to_project += n - h
            elif n - h:
                pending_letters += n - h
                pending.add(route.name)
        return Receipt(total, 0, to_project, to_medulla, tuple(sorted(pending)), pending_letters=pending_letters,
                       held=held)

    def unfiled(self, root) -> list[str]:
        """Ids of the spool's letters routed to `root`'s box (held letters left out) that
        the box does not hold, in spool order (doctor's letters in danger, git.md 3)."""
        from m1nd.routing import PROJECT

        box = next((s for s in self.boxes if s.box is not None and s.box.root is not None
                    and s.box.root.real == root.real), None)
        if box is None or box.fid is None:
            return []
        resolve = self.run.roots.resolve
        pairs = [(brain, repo) for brain, repo, _, _ in self.spool_pairs()
                 if (route := resolve(brain, repo)).kind == PROJECT and route.root.real == root.real]
        out: list[tuple[int, str]] = []
        for brain, repo in pairs:
            out.extend(self.con.execute(
                "SELECT c.line, l.id FROM copies c JOIN letters l ON l.digest = c.digest"
                " WHERE c.fid = ? AND l.brain = ? AND l.repo = ? AND coalesce(l.secret, '') = ''"
                " AND NOT EXISTS (SELECT 1 FROM copies b WHERE b.digest = l.digest AND b.fid = ?)",
                (self.spool.fid, brain, repo, box.fid)))
        return list(dict.fromkeys(lid for _, lid in sorted(out)))

    def _shared_candidates(self) -> list[str]:
        """Ids two rows of `letters` share, kept and extended by the letters added since:
        an id becomes shared only when a letter with it is added, and one that no
        longer is (a letter gone) is dropped by the caller, which looks at the copies."""
        def compute(since):
            if not since:
                return [r[0] for r in self.con.execute("SELECT id FROM letters GROUP BY id HAVING count(*) > 1")]
            return [r[0] for r in self.con.execute(
                "SELECT DISTINCT l.id FROM letters l INDEXED BY letters_first WHERE l.first_gen > ?"
                " AND (SELECT count(*) FROM letters o INDEXED BY letters_id WHERE o.id = l.id) > 1", (since,))]
        return self._kept("kept:shared-ids", [], lambda base: sorted({*base["value"], *compute(base["gen"])}),
                          lambda: sorted(compute(0)))

    def secret_of(self, digest: str) -> str | None:
        """The kind of likely secret a letter carries (what holds it back from a
        project box), or None."""
        row = self.con.execute("SELECT secret FROM letters WHERE digest = ?", (bytes.fromhex(digest),)).fetchone()
        return row[0] or None if row else None

    def shared_ids(self) -> dict[str, list[str]]:
        """{id: ["path:line" where each different letter with it first appears]} for the
        ids that two or more different letters of the spool and readable boxes share
        (doctor's `ids` check), in the order the files are read."""
        order = {src.fid: (n, src.path) for n, src in enumerate(self.sources) if src.fid is not None}
        out: dict[str, list[str]] = {}
        for lid in self._shared_candidates():
            first: dict[bytes, tuple] = {}
            for fid, line, digest in self.con.execute(
                    "SELECT c.fid, c.line, c.digest FROM letters l JOIN copies c ON c.digest = l.digest"
                    " WHERE l.id = ?", (lid,)):
                if fid not in order:
                    continue
                at = (order[fid][0], line, f"{order[fid][1]}:{line}")
                if digest not in first or at < first[digest]:
                    first[digest] = at
            if len(first) > 1:
                out[lid] = [place for _, _, place in sorted(first.values())]
        return out

    def held(self) -> list[tuple[int, str, str, str, str]]:
        """(line, id, kind of secret, repo, class) of every spool line held back from a project box."""
        from m1nd.routing import MEDULLA

        def compute(since):  # all held letters, else the copies added after `since`
            driver = ("letters l INDEXED BY letters_secret JOIN copies c INDEXED BY copies_digest ON c.digest = l.digest"
                      if not since else "copies c INDEXED BY copies_gen JOIN letters l ON l.digest = c.digest")
            return [list(r) for r in self.con.execute(
                f"SELECT c.line, l.id, l.secret, l.brain, l.repo, l.class FROM {driver} WHERE l.secret IS NOT NULL"
                " AND l.secret != '' AND c.fid = ? AND c.gen > ? ORDER BY c.line", (self.spool.fid, since))]

        rows = self._grown("held", self.spool, compute, lambda old, new: old + new)
        resolve = self.run.roots.resolve
        return [(line, lid, kind, repo, klass) for line, lid, kind, brain, repo, klass in rows
                if resolve(brain, repo).kind != MEDULLA]

    def held_in(self, source: Source) -> list[tuple[int, str, str]]:
        """(line, id, kind of secret) of every line of one box carrying a likely secret."""
        if source.fid is None:
            return []

        def compute(since):  # as held(): all of them, else the copies added after `since`
            driver = ("letters l INDEXED BY letters_secret JOIN copies c ON c.digest = l.digest" if not since
                      else "copies c INDEXED BY copies_gen JOIN letters l ON l.digest = c.digest")
            return [list(r) for r in self.con.execute(
                f"SELECT c.line, l.id, l.secret FROM {driver} WHERE l.secret IS NOT NULL AND l.secret != ''"
                " AND c.fid = ? AND c.gen > ? ORDER BY c.line", (source.fid, since))]
        return [tuple(r) for r in self._grown("held-in", source, compute, lambda old, new: old + new)]

    def spool_misdelivered_days(self) -> dict[str, int]:
        """Distinct misdelivery letters of the spool (missions left out) by the first
        10 characters of their `ts` (doctor's window reads the day from there)."""
        def compute(since):  # letters whose first copy in the spool came after `since`
            if not since:
                return dict(self.con.execute(
                    "SELECT substr(l.ts, 1, 10), count(*) FROM letters l WHERE l.class = 'memory_misdelivery'"
                    " AND l.mission = 0 AND EXISTS (SELECT 1 FROM copies c INDEXED BY copies_digest"
                    " WHERE c.digest = l.digest AND c.fid = ?) GROUP BY 1", (self.spool.fid,)).fetchall())
            return dict(self.con.execute(
                "SELECT substr(l.ts, 1, 10), count(DISTINCT l.digest) FROM copies c INDEXED BY copies_gen"
                " JOIN letters l ON l.digest = c.digest WHERE c.gen > ? AND c.fid = ?"
                " AND l.class = 'memory_misdelivery' AND l.mission = 0 AND NOT EXISTS (SELECT 1 FROM copies o"
                " INDEXED BY copies_digest WHERE o.digest = l.digest AND o.fid = ? AND o.gen <= ?) GROUP BY 1",
                (since, self.spool.fid, self.spool.fid, since)).fetchall())

        def merge(old, new):
            return {day: old.get(day, 0) + new.get(day, 0) for day in sorted({*old, *new})}
        return self._grown("misdelivered", self.spool, compute, merge)

    def spool_answered(self) -> "SpoolAnswered":
        """Ids named in the `answers` of some spool letter, asked one id at a time."""
        def compute(since):  # the spool's missions that name answers (few: kept whole)
            rows = self.con.execute(
                "SELECT DISTINCT l.answers FROM copies c INDEXED BY copies_gen JOIN letters l ON l.digest = c.digest"
                " WHERE c.gen > ? AND c.fid = ? AND l.reply = 1 AND l.mission = 1", (since, self.spool.fid))
            return sorted({a for (answers,) in rows for a in orjson.loads(answers)})

        missions = self._grown("mission-answers", self.spool, compute, lambda old, new: sorted({*old, *new}))
        return SpoolAnswered(self.con, self.spool.fid, frozenset(missions))

    # -- fates -------------------------------------------------------------------------
    def graph(self, scope: Source | None = None) -> ModelGraph:
        """The reply graph over the union (or one box), asked one letter at a time
        (readmodel/graph.py)."""
        key = "lazy:" + self._scope_key(scope)
        if key not in self._graphs:
            self._graphs[key] = ModelGraph(self, scope, lambda: self._whole_graph(scope))
        return self._graphs[key]

    def _whole_graph(self, scope: Source | None = None) -> ReplyGraph:
        """The whole reply graph over the union (or one box): derived, cached by content."""
        key = "graph:" + self._scope_key(scope)
        if key in self._graphs:
            return self._graphs[key]
        cached = self._cache_get(key)
        if cached is None:
            member, margs = self._member_sql(scope)
            closed, picked, answered_by = set(), set(), {}
            for lid, klass, answers in self.con.execute(
                    "SELECT l.id, l.class, l.answers FROM letters l WHERE l.reply = 1 AND l.mission = 0" + member,
                    margs):
                receipt = len(klass) == 6 and klass.isascii() and klass.lower() == "triage"
                target = closed if receipt else picked
                for answered in orjson.loads(answers):
                    target.add(answered)
                    answered_by.setdefault(answered, []).append(lid)
            for ids in answered_by.values():
                ids.sort()
            cached = {"closed": sorted(closed), "picked": sorted(picked), "answered_by": answered_by}
            self._cache_put(key, cached)
        graph = ReplyGraph(frozenset(cached["closed"]), frozenset(cached["picked"]), cached["answered_by"],
                           tuple(m.lower() for m in self.run.markers))
        self._graphs[key] = graph
        return graph

    def state(self, letter, scope: Source | None = None) -> str:
        return self.graph(scope).state(letter)

    def counts(self, scope: Source | None = None) -> dict[str, int]:
        """Fate counts over the union (or one box, fates from that box alone):
        wet_ink, in_flight, fired_clay, external, open, open_work, total, replies,
        misdelivery (class exactly memory_misdelivery)."""
        fids = self._fids(scope)

        def full():
            member, margs = self._member_sql(scope)
            return {"all": self._count(member, margs, self._whole_graph(scope))}
        family = "union" if scope is None else f"box:{scope.fid}"
        return self._tallied(family, fids, {"all": tally.Scope(fids)}, None, full)["all"]

    def box_counts(self) -> tuple[list[tuple[Source, dict]], dict | None]:
        """Per readable box its counts with fates over the union (the sweep's table),
        and the counts of the union's letters in no box ("waiting to be filed"), or None
        when there are none."""
        boxes = self.readable_boxes()
        fids = self._fids(None)
        box_fids = [s.fid for s in boxes]
        scopes = {str(s.fid): tally.Scope([s.fid]) for s in boxes}
        scopes["spool"] = tally.Scope([self.spool.fid] if self.spool.fid is not None else [], box_fids)
        cached = self._tallied("boxes", fids, scopes, tally.Scope(fids),
                               lambda: self._box_counts_now(boxes, self._whole_graph()))
        rows = [(s, cached[str(s.fid)]) for s in boxes]
        spool = cached["spool"]
        return rows, (spool if spool["total"] else None)

    def _count(self, member: str, margs: list, graph: ReplyGraph) -> dict[str, int]:
        groups = self.con.execute(
            "SELECT l.tool, l.reply, count(*), sum(l.class = 'memory_misdelivery') FROM letters l"
            " WHERE l.mission = 0" + member + " GROUP BY l.tool, l.reply", margs).fetchall()
        targets = []
        if graph.closed or graph.picked_up:
            self._load_targets(graph)
            targets = self.con.execute(
                "SELECT l.id, l.tool, l.reply FROM temp.targets t JOIN letters l ON l.id = t.id"
                " WHERE l.mission = 0" + member, margs).fetchall()
        return self._count_rows(groups, targets, graph)

    def _box_counts_now(self, boxes: list[Source], graph: ReplyGraph) -> dict:
        """Every box's counts in one grouped pass over the boxes' copies, and the
        letters of the spool in no box.  (`+c.fid` keeps SQLite from probing the
        (digest, fid) index once per box for every letter.)"""
        fids = [s.fid for s in boxes]
        marks = ",".join("?" * len(fids)) or "NULL"
        groups: dict = {}
        for grp, tool, reply, n, mis in self.con.execute(
                f"SELECT c.fid, l.tool, l.reply, count(DISTINCT c.digest), count(DISTINCT CASE WHEN"
                f" l.class = 'memory_misdelivery' THEN c.digest END) FROM copies c JOIN letters l ON l.digest = c.digest"
                f" WHERE +c.fid IN ({marks}) AND l.mission = 0 GROUP BY c.fid, l.tool, l.reply", fids):
            groups.setdefault(grp, []).append((tool, reply, n, mis))
        not_in_box = f"NOT EXISTS (SELECT 1 FROM copies c2 WHERE c2.digest = c.digest AND +c2.fid IN ({marks}))"
        spool = self.spool.fid
        groups["spool"] = [tuple(r) for r in self.con.execute(
            "SELECT l.tool, l.reply, count(DISTINCT l.digest), count(DISTINCT CASE WHEN l.class = 'memory_misdelivery'"
            " THEN l.digest END) FROM copies c JOIN letters l ON l.digest = c.digest WHERE c.fid = ? AND l.mission = 0"
            f" AND {not_in_box} GROUP BY l.tool, l.reply", [spool, *fids])]
        targets: dict = {}
        if graph.closed or graph.picked_up:
            self._load_targets(graph)
            for grp, digest, lid, tool, reply in self.con.execute(
                    "SELECT DISTINCT c.fid, c.digest, l.id, l.tool, l.reply FROM temp.targets t"
                    " JOIN letters l ON l.id = t.id JOIN copies c ON c.digest = l.digest"
                    f" WHERE (+c.fid IN ({marks}) OR c.fid = ?) AND l.mission = 0", [*fids, spool]):
                targets.setdefault(grp, {})[digest] = (lid, tool, reply)
            in_box = set()
            for grp, found in targets.items():
                if grp != spool:
                    in_box.update(found)
            targets["spool"] = {d: v for d, v in targets.pop(spool, {}).items() if d not in in_box}
        out = {str(s.fid): self._count_rows(groups.get(s.fid, []), list(targets.get(s.fid, {}).values()), graph)
               for s in boxes}
        out["spool"] = self._count_rows(groups["spool"], list(targets.get("spool", {}).values()), graph)
        return out

    def held_in_no_box(self) -> int:
        """Letters of the spool in no readable box that carry a likely secret: held
        back, not waiting to be filed (no filing will take them)."""
        fids = [s.fid for s in self.readable_boxes()]
        marks = ",".join("?" * len(fids)) or "NULL"
        row = self.con.execute(
            "SELECT count(DISTINCT l.digest) FROM copies c JOIN letters l ON l.digest = c.digest"
            " WHERE c.fid = ? AND l.mission = 0 AND l.secret IS NOT NULL AND l.secret != ''"
            f" AND NOT EXISTS (SELECT 1 FROM copies c2 WHERE c2.digest = c.digest AND +c2.fid IN ({marks}))",
            [self.spool.fid, *fids]).fetchone()
        return row[0] if row else 0

    def _load_targets(self, graph: ReplyGraph) -> None:
        if getattr(self, "_targets_of", None) is graph:
            return
        self.con.execute("CREATE TEMP TABLE IF NOT EXISTS targets (id TEXT PRIMARY KEY) WITHOUT ROWID")
        self.con.execute("DELETE FROM temp.targets")
        self.con.executemany("INSERT INTO temp.targets VALUES (?)", [(t,) for t in graph.closed | graph.picked_up])
        self._targets_of = graph

    @staticmethod
    def _count_rows(groups, targets, graph: ReplyGraph) -> dict[str, int]:
        external = graph.is_external
        total = [0, 0]  # by reply flag
        ext = [0, 0]
        misdelivery = 0
        for tool, reply, n, mis in groups:
            total[reply] += n
            misdelivery += mis
            if external(tool):
                ext[reply] += n
        fired = [0, 0]
        flight = [0, 0]
        for lid, tool, reply in targets:
            if external(tool):
                continue
            if lid in graph.closed:
                fired[reply] += 1
            else:
                flight[reply] += 1
        wet = [total[i] - ext[i] - fired[i] - flight[i] for i in (0, 1)]
        return {
            WET_INK: sum(wet), IN_FLIGHT: sum(flight), FIRED_CLAY: sum(fired), EXTERNAL: sum(ext),
            "open": sum(wet) + sum(flight), "open_work": wet[0] + flight[0],
            "total": sum(total), "replies": total[1], "misdelivery": misdelivery,
            "in_flight_work": flight[0], "answered_work": fired[0], "external_work": ext[0],
        }

    def _grown(self, name: str, source: Source, compute, merge):
        """A fact of one file kept under `kept:NAME`: `compute(since)` gives it over
        the copies added after generation `since` (0: all of them); while the file
        lost no copy, the stored fact is merged with what is new (`merge(old, new)`)."""
        return self._kept(f"kept:{name}:{source.fid}", self._fids(source),
                          lambda base: merge(base["value"], compute(base["gen"])), lambda: compute(0))

    def _tallied(self, family: str, fids: list[int], scopes: dict, graph_scope, full) -> dict:
        """Counts per scope name, kept under `tally:FAMILY`, brought current from what
        is new since they were stored (readmodel/tally.py), else `full()`."""
        return self._kept(f"tally:{family}:{','.join(self.run.markers)}", fids,
                          lambda base: tally.brought_current(self, base, scopes, graph_scope, fids), full)

    def _kept(self, key: str, fids: list[int], advance, full):
        """A derived value stored with the generation it was computed at: as stored when
        nothing is new, `advance(stored)` while the files `fids` lost no copy (None: not
        worth it), else `full()`.  One read transaction: the generation stored is the one
        the value was computed at, whatever another process commits meanwhile."""
        base = self._cache_get(key)
        value = None
        self.con.execute("BEGIN")
        try:
            gen = self.generation
            if tally.usable(self, base, fids):
                value = base["value"] if base["gen"] == gen else advance(base)
            stale = value is None or base["gen"] != gen
            if value is None:
                value = full()
        finally:
            self.con.execute("COMMIT")
        if stale:
            self._cache_put(key, {"gen": gen, "fids": fids, "epoch": self.epoch, "value": value})
        return value

    # -- the cache -----------------------------------------------------------------------
    def _cache_get(self, key: str):
        row = self.con.execute("SELECT value FROM cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return orjson.loads(row[0])
        except orjson.JSONDecodeError:
            return None

    def _cache_put(self, key: str, value) -> None:
        if self.con.in_transaction:  # inside a read snapshot (_kept): kept by the caller, if at all
            return
        try:
            self.con.execute("BEGIN IMMEDIATE")
            self.con.execute("INSERT OR REPLACE INTO cache (key, value) VALUES (?, ?)", (key, orjson.dumps(value)))
            # the newest 64 shortcuts stay; counts and facts kept per file (`tally:`,
            # `kept:`: one entry per file, replaced in place) are never pushed out by them
            self.con.execute("DELETE FROM cache WHERE n <= (SELECT max(n) FROM cache) - 64"
                             " AND key NOT LIKE 'tally:%' AND key NOT LIKE 'kept:%'")
            self.con.execute("COMMIT")
        except sqlite3.Error:
            if self.con.in_transaction:
                self.con.execute("ROLLBACK")


STATE_ORDER = STATES


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


class SpoolAnswered:
    """`lid in answered`: some spool letter names `lid` in its answers (a reply, by the
    `replies` index, or one of the spool's missions)."""

    def __init__(self, con, fid, missions: frozenset) -> None:
        self.con, self.fid, self.missions = con, fid, missions

    def __contains__(self, lid) -> bool:
        if lid in self.missions:
            return True
        return self.con.execute(
            "SELECT 1 FROM replies r JOIN copies c INDEXED BY copies_digest ON c.digest = r.digest"
            " WHERE r.target = ? AND c.fid = ? LIMIT 1", (lid, self.fid)).fetchone() is not None


def open_model(run: Run, secret_check=None, only: Box | None = None) -> ReadModel:
    """The read model for this run, brought current with the run's files.

    `only`: bring current (and list in `sources`) the spool and this one box, not
    every box of the run (the hook's line needs one box).

    Never fails for the model's own sake: a database that does not verify is
    rebuilt (a note in `model.notes`), and a home where nothing can be written
    gets a model built in memory from the files (with a note).  Raises M1ndError
    only for what the files themselves make fail (an unreadable spool)."""
    if not os.path.isdir(run.paths.home):
        # No home yet: nothing to keep a model in, and a read must not create one.
        con, persistent, notes = store.open_memory(), False, []
    else:
        con, persistent, notes = store.open_db(run.paths.state)
    if not persistent and os.path.isdir(run.paths.home):
        notes.append(f"cannot write the read model under {run.paths.state}: reading the files directly (slower)")
    model = ReadModel(run, con, persistent, notes)
    try:
        model.refresh(secret_check, only)
    except (sqlite3.DatabaseError, UnicodeDecodeError, orjson.JSONDecodeError) as exc:
        model.close()
        if store.busy(exc) or (persistent and isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc)):
            # Another process held the lock too long, or the file cannot be written
            # after all: answer from the files, leave the database as it is.
            why = "is busy (another m1nd is updating it)" if store.busy(exc) else "cannot be written"
            model = ReadModel(run, store.open_memory(), False,
                              notes + [f"read model {store.db_path(run.paths.state)} {why}: reading the files directly"])
            model.refresh(secret_check, only)
            _record_first_seen(model)
            return model
        # Damaged under us (a page torn on disk): start over from the files.
        if persistent:
            store._remove(store.db_path(run.paths.state))
            con, persistent, more = store.open_db(run.paths.state)
            notes = notes + [f"read model {store.db_path(run.paths.state)} does not verify ({exc}): rebuilt from the files"] + more
        else:
            raise
        model = ReadModel(run, con, persistent, notes)
        model.refresh(secret_check, only)
    except BaseException:
        model.close()
        raise
    _record_first_seen(model)
    return model


def _record_first_seen(model: ReadModel) -> None:
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
        # digests only, in the order of the letters (id, then digest): what the ledger
        # writes, without building a row per letter of a whole rebuild
        marks = ",".join("?" * len(model.gens))
        seen = [r[0] for r in model.con.execute(
            f"SELECT digest FROM letters WHERE first_gen IN ({marks}) AND mission = 0 ORDER BY id, digest",
            model.gens)]
        if seen:
            record(model.run.paths, seen, stamp(parse_now()))
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


__all__ = ["open_model", "ReadModel", "LetterRow", "Location", "Source", "SPOOL", "BOX", "is_receipt"]
