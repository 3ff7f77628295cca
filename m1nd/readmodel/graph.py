"""The reply graph of the read model, asked one letter at a time.

A view that shows twenty letters needs the fates of twenty letters, not the whole
graph: each question is one lookup in the `replies` index (who answers this id,
and whether as a receipt), within the graph's scope.  After LOOKUPS questions the
whole graph is loaded once (a document over every letter), so no caller pays a
lookup per letter of a large mailbox; past LOOKUPS the budget is what loading the
whole graph costs: the replies of the union, or the lines of one box (a box's graph
is read from its own copies).  A report of a thousand new letters in a mailbox of a
million asks a thousand questions, not the whole graph; a box document of two
thousand letters loads its box's graph after a hundred.  Same answers as
fates.ReplyGraph.
"""

from __future__ import annotations

from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, WET_INK, ReplyGraph, tool_is_external

LOOKUPS = 32  # asked before the cost of the whole graph is (a view of twenty letters never asks it)
REPLIES_PER_LOOKUP = 20  # one lookup costs about what loading twenty replies does


class ModelGraph:
    def __init__(self, model, scope, whole, whole_cost) -> None:
        self._con = model.con
        self._member = model._member_sql(scope, alias="l")
        self._whole = whole  # () -> ReplyGraph over the same scope
        self._whole_cost = whole_cost  # () -> rows loading the whole graph reads
        self._graph: ReplyGraph | None = None
        self._facts: dict[str, tuple[bool, bool, list[str]]] = {}
        self.markers = tuple(m.lower() for m in model.run.markers)
        self._external: dict[str, bool] = {}
        self._lookups = LOOKUPS  # set once, when reached, by the whole graph's cost

    def whole(self) -> ReplyGraph:
        if self._graph is None:
            self._graph = self._whole()
        return self._graph

    @property
    def closed(self) -> frozenset[str]:
        return self.whole().closed

    @property
    def picked_up(self) -> frozenset[str]:
        return self.whole().picked_up

    def _of(self, lid: str) -> tuple[bool, bool, list[str]]:
        """(answered by a receipt, answered by another reply, the repliers' ids sorted)."""
        if self._graph is None:
            known = self._facts.get(lid)
            if known is not None:
                return known
            if len(self._facts) == self._lookups == LOOKUPS:
                self._lookups = max(LOOKUPS, self._whole_cost() // REPLIES_PER_LOOKUP)
            if len(self._facts) < self._lookups:
                member, margs = self._member
                rows = self._con.execute(
                    "SELECT l.id, r.receipt FROM replies r JOIN letters l ON l.digest = r.digest"
                    " WHERE r.target = ? AND l.mission = 0" + member + " ORDER BY l.id", [lid, *margs]).fetchall()
                facts = (any(r for _, r in rows), any(not r for _, r in rows), [i for i, _ in rows])
                self._facts[lid] = facts
                return facts
        graph = self.whole()
        return lid in graph.closed, lid in graph.picked_up, graph.answers_to(lid)

    def state(self, letter) -> str:
        if self.is_external(letter.tool):
            return EXTERNAL
        receipt, other, _ = self._of(letter.id)
        if receipt:
            return FIRED_CLAY
        return IN_FLIGHT if other else WET_INK

    def is_external(self, tool: str) -> bool:
        return tool_is_external(tool, self.markers, self._external)

    def answers_to(self, letter_id: str) -> list[str]:
        return list(self._of(letter_id)[2])
