"""The read model's counts: letters matching a condition, fate counts over the union
or one box, every box's counts in one pass (the sweep's table), and the spool's held
letters in no box.  Fate counts are kept under `tally:` and brought current from what
is new (readmodel/tally.py).  A part of ReadModel (m1nd/readmodel/__init__.py)."""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter

from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, WET_INK, ReplyGraph
from m1nd.readmodel import tally
from m1nd.readmodel.idspan import spans
from m1nd.readmodel.rows import Source


# The letters of an answered id, a range of the digest index (the spans drive the loop)
_IN_SPAN = "l.digest BETWEEN t.low AND t.high"


class Aggregates:
    """Counts over `self.con`, scoped as readmodel/queries.py scopes letters."""

    def count(self, where: str = "", args: tuple = (), missions: bool = False, scope: Source | None = None) -> int:
        """Distinct letters of the union (or one box) matching extra SQL over `letters l`."""
        member, margs = self._member_sql(scope)
        sql = "SELECT count(*) FROM letters l WHERE 1" + ("" if missions else " AND l.mission = 0") + member
        if where:
            sql += f" AND ({where})"
        return self.con.execute(sql, [*margs, *args]).fetchone()[0]

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

    def held_in_no_box(self) -> int:
        """Letters of the spool in no readable box that carry a likely secret: held
        back, not waiting to be filed (no filing will take them)."""
        fids = [s.fid for s in self.readable_boxes()]
        marks = ",".join("?" * len(fids)) or "NULL"
        # from the few letters with a secret (their partial index), not from every copy
        # in the spool
        row = self.con.execute(
            "SELECT count(*) FROM letters l INDEXED BY letters_secret"
            " WHERE l.secret IS NOT NULL AND l.secret != '' AND l.mission = 0"
            " AND EXISTS (SELECT 1 FROM copies c WHERE c.digest = l.digest AND c.fid = ?)"
            f" AND NOT EXISTS (SELECT 1 FROM copies c2 WHERE c2.digest = l.digest AND +c2.fid IN ({marks}))",
            [self.spool.fid, *fids]).fetchone()
        return row[0] if row else 0

    def _tallied(self, family: str, fids: list[int], scopes: dict, graph_scope, full) -> dict:
        """Counts per scope name, kept under `tally:FAMILY`, brought current from what
        is new since they were stored (readmodel/tally.py), else `full()`."""
        return self._kept(f"tally:{family}:{','.join(self.run.markers)}", fids,
                          lambda base: tally.brought_current(self, base, scopes, graph_scope, fids), full)

    def _count(self, member: str, margs: list, graph: ReplyGraph) -> dict[str, int]:
        groups = self.con.execute(
            "SELECT l.tool, l.reply, count(*), sum(l.class = 'memory_misdelivery') FROM letters l"
            " WHERE l.mission = 0" + member + " GROUP BY l.tool, l.reply", margs).fetchall()
        targets = ()
        if graph.closed or graph.picked_up:
            self._load_targets(graph)
            targets = self.con.execute(  # streamed: a union's answered letters are many
                "SELECT l.id, l.tool, l.reply FROM temp.targets t CROSS JOIN letters l ON " + _IN_SPAN +
                " WHERE l.mission = 0" + member, margs)
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
        # The answered letters of each box, then of the spool in no box, streamed a group at
        # a time (after a first build they are every answered copy of the mailbox: held
        # together they were the largest thing a sweep kept in memory).
        counted = {}
        spool_targets = ()
        if graph.closed or graph.picked_up:
            self._load_targets(graph)
            rows = self.con.execute(
                "SELECT DISTINCT c.fid, c.digest, l.id, l.tool, l.reply FROM temp.targets t"
                " CROSS JOIN letters l ON " + _IN_SPAN + " CROSS JOIN copies c ON c.digest = l.digest"
                f" WHERE +c.fid IN ({marks}) AND l.mission = 0 ORDER BY c.fid", fids)
            for grp, found in groupby(rows, key=itemgetter(0)):
                counted[grp] = self._count_rows(groups.get(grp, []), (r[2:] for r in found), graph)
            spool_targets = (r[1:] for r in self.con.execute(
                "SELECT DISTINCT c.digest, l.id, l.tool, l.reply FROM temp.targets t"
                " CROSS JOIN letters l ON " + _IN_SPAN + " CROSS JOIN copies c ON c.digest = l.digest"
                f" WHERE c.fid = ? AND l.mission = 0 AND {not_in_box}", [spool, *fids]))
        out = {str(s.fid): counted.get(s.fid) or self._count_rows(groups.get(s.fid, []), (), graph) for s in boxes}
        out["spool"] = self._count_rows(groups["spool"], spool_targets, graph)
        return out

    def _load_targets(self, graph: ReplyGraph) -> None:
        if getattr(self, "_targets_of", None) is graph:
            return
        # each answered id as its span of digests (idspan.py)
        self.con.execute("CREATE TEMP TABLE IF NOT EXISTS targets (low BLOB PRIMARY KEY, high BLOB NOT NULL) WITHOUT ROWID")
        self.con.execute("DELETE FROM temp.targets")
        self.con.executemany("INSERT INTO temp.targets VALUES (?, ?)", spans(graph.closed | graph.picked_up))
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
