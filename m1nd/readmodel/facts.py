"""The facts doctor reads from the read model, each of one file and kept under
`kept:` with the generation it was computed at, grown by what is new while the file
lost no copy: lines per file, the spool's (brain, repo) pairs and the filing plan from
them, letters not yet filed, shared ids, held lines, misdeliveries per day and the
spool's answered ids.  A part of ReadModel (m1nd/readmodel/__init__.py)."""

from __future__ import annotations

import orjson

from m1nd.readmodel.idspan import id_span, rows_with_ids
from m1nd.readmodel.rows import Source

# How a fact of one file reads its copies: all of them through the primary key, or
# only those added after a generation through their index (never one probe per copy).
_NEW_COPIES = {False: "", True: " INDEXED BY copies_gen"}


class Facts:
    """Doctor's facts over `self.con`, kept through readmodel/cache.py."""

    def _grown(self, name: str, source: Source, compute, merge):
        """A fact of one file kept under `kept:NAME`: `compute(since)` gives it over
        the copies added after generation `since` (0: all of them); while the file
        lost no copy, the stored fact is merged with what is new (`merge(old, new)`)."""
        return self._kept(f"kept:{name}:{source.fid}", self._fids(source),
                          lambda base: merge(base["value"], compute(base["gen"])), lambda: compute(0))

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
            if not since:  # in digest order, letters that share an id are neighbours
                return [r[0] for r in self.con.execute(
                    "SELECT DISTINCT id FROM (SELECT id, lag(id) OVER (ORDER BY digest) AS before FROM letters)"
                    " WHERE id = before")]
            added = [r[0] for r in self.con.execute(
                "SELECT DISTINCT l.id FROM letters l INDEXED BY letters_first WHERE l.first_gen > ?", (since,))]
            seen: dict[str, int] = {}
            for (lid,) in rows_with_ids(self.con, "l.id", added):
                seen[lid] = seen.get(lid, 0) + 1
            return [lid for lid, n in seen.items() if n > 1]
        return self._kept("kept:shared-ids", [], lambda base: sorted({*base["value"], *compute(base["gen"])}),
                          lambda: sorted(compute(0)))

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
                    " WHERE l.digest BETWEEN ? AND ?", id_span(lid) or (b"", b"")):
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
