"""The read model's queries: which letters the union or one box holds (the scope SQL
every query restricts to), looked up by id, digest or prefix, where their copies are
and their raw bytes, each file's malformed lines, and the reply graph that gives fates.
A part of ReadModel (m1nd/readmodel/__init__.py)."""

from __future__ import annotations

import hashlib
from typing import Iterator

import orjson

from m1nd.fates import ReplyGraph
from m1nd.readmodel.graph import ModelGraph
from m1nd.readmodel.idspan import SPANS_PER_QUERY, id_span, prefix_span, rows_with_ids
from m1nd.readmodel.rows import COLS as _COLS, COLS_OF_L, LetterRow, Location, Source, row as _row

DIGESTS_PER_QUERY = 500  # SQLite builds before 3.32 allow 999 parameters


class Queries:
    """Letters and fates, asked of `self.con` over `self.sources` (readmodel/opening.py)."""

    # -- scope -----------------------------------------------------------------
    def union_key(self) -> str:
        """A key of the union's current content (changes when any file of the run does)."""
        return self._scope_key(None)

    def content_key(self, scope: Source) -> str:
        """A key of one box's current content (changes when its file does)."""
        return self._scope_key(scope)

    def thread_key(self, lid: str) -> str:
        """A key of what `show ID` reads of one id: the letters with that id, with the
        ids they answer and with the ids of the letters that answer it, each letter
        with its copies (where it lives, and whether it is in the union), and the
        replies to each of those ids with their copies (which give their fates).  A
        letter's fields never change under its digest.  Past DIGESTS_PER_QUERY ids,
        the union's key."""
        def by_ids(ids: list[str]) -> list:
            return list(rows_with_ids(self.con, "l.id, l.digest, l.answers", ids))

        own = by_ids([lid])
        related = {lid}
        for _, _, answers in own:
            related.update(a for a in orjson.loads(answers or "[]") if isinstance(a, str))
        related.update(r[0] for r in self.con.execute(
            "SELECT l.id FROM replies r JOIN letters l ON l.digest = r.digest WHERE r.target = ?", (lid,)))
        if len(related) > DIGESTS_PER_QUERY:  # a thread that large: the whole mailbox's key
            return "union:" + self.union_key()
        ids = sorted(related)
        marks = ",".join("?" * len(ids))
        others = [i for i in ids if i != lid]
        letters = sorted(own + (by_ids(others) if others else []))  # the id's own rows are read once
        replies = sorted(self.con.execute(
            f"SELECT target, digest, pos, receipt FROM replies WHERE target IN ({marks})", ids).fetchall())
        digests = sorted({r[1] for r in letters} | {r[1] for r in replies})
        copies = []
        for at in range(0, len(digests), DIGESTS_PER_QUERY):
            part = digests[at:at + DIGESTS_PER_QUERY]
            copies += self.con.execute(f"SELECT digest, fid, line FROM copies WHERE digest IN"
                                       f" ({','.join('?' * len(part))})", part).fetchall()
        data = [ids, [[i, d.hex(), a] for i, d, a in letters],
                [[t, d.hex(), p, r] for t, d, p, r in replies], sorted([d.hex(), f, n] for d, f, n in copies)]
        return hashlib.sha256(orjson.dumps(data)).hexdigest()[:20]

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

    # -- letters ---------------------------------------------------------------
    def letters(self, scope: Source | None = None, order: str = "id", missions: bool = False,
                where: str = "", args: tuple = ()) -> Iterator[LetterRow]:
        """Distinct letters of the union (or of one box), missions left out unless
        asked.  order: "id" (ascending id, then digest) or "newest" (by UTC time, newest
        first, then id descending).  `where` is extra SQL over the columns of
        `letters` (e.g. "agent = ?")."""
        for r in self.letter_columns(_COLS, scope, order, missions, where, args):
            yield _row(r)

    def letter_columns(self, cols: str, scope: Source | None = None, order: str = "id", missions: bool = False,
                       where: str = "", args: tuple = ()) -> Iterator[tuple]:
        """`letters()` as plain rows of the columns `cols` (SQL over `letters l`): for a
        document over every letter, which needs no LetterRow of each."""
        member, margs = self._member_sql(scope)
        sql = f"SELECT {cols} FROM letters l WHERE 1" + ("" if missions else " AND l.mission = 0") + member
        if where:
            sql += f" AND ({where})"
        # id order is digest order (an id is the digest's first bytes, ties go by digest)
        sql += " ORDER BY l.digest" if order == "id" else " ORDER BY l.sortkey DESC, l.id DESC, l.digest DESC"
        cur = self.con.execute(sql, [*margs, *args])
        # Small batches first: a view that stops after 20 letters must not make SQLite
        # find thousands (a small box among many letters).
        size = 32
        while True:
            rows = cur.fetchmany(size)
            if not rows:
                return
            yield from rows
            size = min(size * 4, 512)  # 512 letters of 64 KB: 32 MB of rows at most

    def letters_since(self, gen: int, where: str = "", args: tuple = ()) -> Iterator[LetterRow]:
        """`letters()` first indexed after generation `gen`, found through the first_gen
        index (a plain `l.first_gen > ?` makes SQLite walk the whole id index for the
        ORDER BY); `where` narrows them further."""
        since = "l.digest IN (SELECT f.digest FROM letters f WHERE f.first_gen > ?)"
        return self.letters(where=f"{since} AND ({where})" if where else since, args=(gen, *args))

    def by_digests(self, digests: list[bytes], missions: bool = False) -> Iterator[LetterRow]:
        """`letters()` with these digests (raw sha256), DIGESTS_PER_QUERY to a query."""
        for at in range(0, len(digests), DIGESTS_PER_QUERY):
            part = tuple(digests[at:at + DIGESTS_PER_QUERY])
            yield from self.letters(missions=missions, where=f"l.digest IN ({','.join('?' * len(part))})", args=part)

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
        span = id_span(lid)
        if span is None:
            return []
        return list(self.letters(scope, missions=missions, where="l.digest BETWEEN ? AND ?", args=span))

    def lookup(self, prefix: str, missions: bool = True) -> list[str]:
        """Sorted distinct ids of the union starting with `prefix` (lowercase hex)."""
        span = prefix_span(prefix)
        if span is None:
            return []
        member, margs = self._member_sql(None)
        sql = (f"SELECT l.id FROM letters l WHERE l.digest BETWEEN ? AND ?"
               + ("" if missions else " AND l.mission = 0") + member + " ORDER BY l.digest")
        found: dict[str, None] = {}  # digest order is id order: stop at the 50th id
        for (lid,) in self.con.execute(sql, [*span, *margs]):
            found[lid] = None
            if len(found) == 50:
                break
        return list(found)

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

    def secret_of(self, digest: str) -> str | None:
        """The kind of likely secret a letter carries (what holds it back from a
        project box), or None."""
        row = self.con.execute("SELECT secret FROM letters WHERE digest = ?", (bytes.fromhex(digest),)).fetchone()
        return row[0] or None if row else None

    # -- lines of one file -----------------------------------------------------
    def malformed(self, source: Source) -> list[int]:
        return [r[0] for r in self.con.execute(
            "SELECT line FROM malformed WHERE fid = ? AND conflict < 2 ORDER BY line", (source.fid,))]

    def conflict_lines(self, source: Source) -> list[int]:
        return [r[0] for r in self.con.execute(
            "SELECT line FROM malformed WHERE fid = ? AND conflict > 0 ORDER BY line", (source.fid,))]

    def tail(self, source: Source) -> int | None:
        row = self.con.execute("SELECT tail_line FROM files WHERE fid = ?", (source.fid,)).fetchone()
        return row[0] if row else None

    # -- fates -----------------------------------------------------------------
    def graph(self, scope: Source | None = None) -> ModelGraph:
        """The reply graph over the union (or one box), asked one letter at a time
        (readmodel/graph.py)."""
        key = "lazy:" + self._scope_key(scope)
        if key not in self._graphs:
            self._graphs[key] = ModelGraph(self, scope, lambda: self._whole_graph(scope),
                                           lambda: self._graph_cost(scope))
        return self._graphs[key]

    def _graph_cost(self, scope: Source | None) -> int:
        """Rows that loading the whole reply graph of the scope reads (_reply_edges)."""
        replies, lines = self._reply_sizes(scope)
        return replies if lines is None else min(replies, lines)

    def _reply_sizes(self, scope: Source | None) -> tuple[int, int | None]:
        """(replies of the union, lines of the scope's box or None for the union)."""
        replies = self.con.execute("SELECT count(*) FROM replies").fetchone()[0]
        if scope is None or scope.fid is None:
            return replies, None
        row = self.con.execute("SELECT lines FROM files WHERE fid = ?", (scope.fid,)).fetchone()
        return replies, row[0] if row else 0

    def _reply_edges(self, scope: Source | None) -> Iterator[tuple[str, int, str]]:
        """(target, receipt, replier's id) of every answer of every distinct reply (not a
        mission) in the scope, by target, keeping only targets that name a letter of the
        model: `answers` may hold any strings (a pushed box of random ids), and the graph
        stays bounded by the letters, not by what their answers name.  A box with fewer
        lines than the union has replies is read from its own copies (work in proportion
        to the box, not to the mailbox)."""
        # Only a letter that is no mission has rows in `replies`, and a replier's id is its
        # digest's first six bytes: the letters table is never visited.
        replies, lines = self._reply_sizes(scope)
        if lines is not None and lines < replies:
            rows = self.con.execute(
                "SELECT r.target, r.receipt, r.digest FROM replies r"
                " WHERE r.digest IN (SELECT digest FROM copies WHERE fid = ?) ORDER BY r.target", (scope.fid,))
        else:
            member, margs = self._member_sql(scope, alias="r")
            rows = self.con.execute(  # the replies' primary key gives the order
                "SELECT r.target, r.receipt, r.digest FROM replies r WHERE 1" + member + " ORDER BY r.target", margs)
        rows = ((target, receipt, digest[:6].hex()) for target, receipt, digest in rows)
        groups: list[list[tuple[str, int, str]]] = []  # the edges of up to SPANS_PER_QUERY targets

        def named():
            real = {lid for (lid,) in rows_with_ids(self.con, "DISTINCT l.id", [g[0][0] for g in groups])}
            return [edge for group in groups if group[0][0] in real for edge in group]

        for edge in rows:
            if groups and groups[-1][0][0] == edge[0]:
                groups[-1].append(edge)
                continue
            if len(groups) == SPANS_PER_QUERY:
                yield from named()
                groups = []
            groups.append([edge])
        if groups:
            yield from named()

    def _whole_graph(self, scope: Source | None = None) -> ReplyGraph:
        """The whole reply graph over the union (or one box): derived, cached by content."""
        key = "graph:" + self._scope_key(scope)
        if key in self._graphs:
            return self._graphs[key]
        cached = self._cache_get(key)
        if cached is None:
            closed, picked, answered_by = set(), set(), {}
            for target, receipt, lid in self._reply_edges(scope):
                (closed if receipt else picked).add(target)
                answered_by.setdefault(target, []).append(lid)
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
