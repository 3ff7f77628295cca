"""Fate counts kept current from what is new, instead of recomputed over the mailbox.

A count (ReadModel.counts, ReadModel.box_counts) is stored with the generation `g`
it was computed at.  While no file of the run has lost a copy since `g`
(`files.cut_gen`), what changed since is exactly the copies added after `g`
(`copies.gen > g`), and a copy changes the count of at most:

- its own letter (it may have just entered a box, or the union), and
- the letters whose ids it answers, when it is a reply (their fate may move on).

Each of those letters is counted again as it stood at `g` and as it stands now (a
copy "stood" at `g` when its generation is not later), and the difference is added.
So a read after K new letters costs work proportional to K and the replies they
touch.  A file that lost copies (a rewrite or replacement by git, a deleted box), a
change of the foreign markers, another set of files, or more new copies than both
MAX_NEW and a quarter of the files' lines makes the count computed again from the
whole mailbox (the caller's `full`); it is kept from then on.

The state is the same as fates.ReplyGraph.state: external by tool; else answered
when a receipt in the graph's scope answers the id; else in flight when another
reply does; else open ink.
"""

from __future__ import annotations

from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, WET_INK, tool_is_external
from m1nd.readmodel.idspan import rows_with_ids

MAX_NEW = 20_000  # new copies past this (and past a quarter of the mailbox): one pass is cheaper than a lookup each
CHUNK = 900  # bound parameters per statement

def _contribution(state: str, reply: int, misdelivery: bool) -> dict[str, int]:
    """What one letter adds to a count (ReadModel._count_rows, one letter at a time)."""
    work = not reply
    is_open = state in (WET_INK, IN_FLIGHT)
    return {WET_INK: state == WET_INK, IN_FLIGHT: state == IN_FLIGHT, FIRED_CLAY: state == FIRED_CLAY,
            EXTERNAL: state == EXTERNAL, "open": is_open, "open_work": is_open and work, "total": 1,
            "replies": reply, "misdelivery": misdelivery, "in_flight_work": state == IN_FLIGHT and work,
            "answered_work": state == FIRED_CLAY and work, "external_work": state == EXTERNAL and work}


def _chunks(items: list):
    for i in range(0, len(items), CHUNK):
        yield items[i:i + CHUNK]


class Scope:
    """Which letters a count covers: those with a copy in `fids`, and (for the letters
    of the spool waiting to be filed) none in `none_in`."""

    def __init__(self, fids, none_in=()) -> None:
        self.fids = frozenset(fids)
        self.none_in = frozenset(none_in)

    def holds(self, copies: list[tuple[int, int]], at: int | None) -> bool:
        """Whether a letter with these (fid, gen) copies is in the scope, now (`at`
        None) or as it stood at generation `at`."""
        seen = [fid for fid, gen in copies if at is None or gen <= at]
        return any(f in self.fids for f in seen) and not any(f in self.none_in for f in seen)


def usable(model, base: dict | None, fids: list[int]) -> bool:
    """Whether a stored count can be brought current: the same files, none of which
    lost a copy since it was computed."""
    if not base or base.get("fids") != fids or base.get("epoch") != model.epoch:
        return False
    marks = ",".join("?" * len(fids)) or "NULL"
    row = model.con.execute(f"SELECT max(cut_gen) FROM files WHERE fid IN ({marks})", fids).fetchone()
    return (row[0] or 0) <= base["gen"]


def _limit(model, fids: list[int]) -> int:
    """How many new copies are still brought current one by one: MAX_NEW, or a
    quarter of the files' lines when that is more (a pass over a large mailbox costs
    more than a lookup for each of a quarter of its copies)."""
    marks = ",".join("?" * len(fids)) or "NULL"
    lines = model.con.execute(f"SELECT sum(lines) FROM files WHERE fid IN ({marks})", fids).fetchone()[0]
    return max(MAX_NEW, (lines or 0) // 4)


def changed_letters(model, gen: int, fids: list[int], limit: int = MAX_NEW) -> dict[bytes, tuple] | None:
    """The letters (not missions) whose count may differ from generation `gen`:
    {digest: (id, tool, reply, class)}; None when there are more than `limit` new
    copies."""
    con = model.con
    marks = ",".join("?" * len(fids)) or "NULL"
    new = [r[0] for r in con.execute(
        f"SELECT DISTINCT digest FROM copies INDEXED BY copies_gen WHERE gen > ? AND fid IN ({marks}) LIMIT ?",
        [gen, *fids, limit + 1])]
    if len(new) > limit:
        return None
    targets: set[str] = set()
    for part in _chunks(new):
        targets.update(r[0] for r in con.execute(
            f"SELECT target FROM replies WHERE digest IN ({','.join('?' * len(part))})", part))
    rows: dict[bytes, tuple] = {}
    for part in _chunks(new):
        for r in con.execute(f"SELECT digest, id, tool, reply, class FROM letters WHERE mission = 0 AND digest IN"
                             f" ({','.join('?' * len(part))})", part):
            rows[r[0]] = r[1:]
    for r in rows_with_ids(con, "l.digest, l.id, l.tool, l.reply, l.class", targets, "l.mission = 0"):
        rows[r[0]] = r[1:]
    return rows


def _copies_of(con, digests: list[bytes], fids: list[int]) -> dict[bytes, list[tuple[int, int]]]:
    """Each digest's copies in the files `fids`: (fid, generation)."""
    out: dict[bytes, list[tuple[int, int]]] = {d: [] for d in digests}
    marks = ",".join("?" * len(fids)) or "NULL"
    for part in _chunks(digests):
        # `+fid`: one probe of the (digest, fid) index per digest, its few copies then
        # filtered, rather than a probe for every pair of digest and file
        for digest, fid, gen in con.execute(
                f"SELECT digest, fid, gen FROM copies INDEXED BY copies_digest WHERE +fid IN ({marks})"
                f" AND digest IN ({','.join('?' * len(part))})",
                [*fids, *part]):
            out[digest].append((fid, gen))
    return out


class Fates:
    """The state of given ids within one graph scope, at generation `gen` and now."""

    def __init__(self, model, ids: set[str], graph_scope: Scope, gen: int, fids: list[int]) -> None:
        con = model.con
        answering: dict[str, list[tuple[bytes, int]]] = {}
        for part in _chunks(sorted(ids)):
            for target, digest, receipt in con.execute(
                    f"SELECT target, digest, receipt FROM replies WHERE target IN ({','.join('?' * len(part))})", part):
                answering.setdefault(target, []).append((digest, receipt))
        copies = _copies_of(con, sorted({d for rs in answering.values() for d, _ in rs}), fids)
        self.answering = answering
        self.copies = copies
        self.scope = graph_scope
        self.gen = gen

    def state(self, lid: str, external: bool, now: bool) -> str:
        if external:
            return EXTERNAL
        at = None if now else self.gen
        replied = [receipt for digest, receipt in self.answering.get(lid, ())
                   if self.scope.holds(self.copies[digest], at)]
        if any(replied):
            return FIRED_CLAY
        return IN_FLIGHT if replied else WET_INK


def brought_current(model, base: dict, scopes: dict[str, Scope], graph_scope: Scope | None,
                    fids: list[int]) -> dict[str, dict[str, int]] | None:
    """The counts of `base["value"]` (one per scope name) brought from generation
    `base["gen"]` to now, or None when that is not worth it (see MAX_NEW).
    `graph_scope` None: each scope's fates come from that scope alone."""
    gen = base["gen"]
    rows = changed_letters(model, gen, fids, _limit(model, fids))
    if rows is None:
        return None
    value = {name: dict(counts) for name, counts in base["value"].items()}
    if not rows:
        return value
    copies = _copies_of(model.con, list(rows), fids)
    ids = {r[0] for r in rows.values()}
    fates = {name: Fates(model, ids, graph_scope or scope, gen, fids)
             for name, scope in (scopes.items() if graph_scope is None else [("", graph_scope)])}
    # a letter counts only in the scopes that hold one of its files: the sweep's table
    # has a scope per box, and a letter sits in one or two of them
    scopes_of: dict[int, list[str]] = {}
    for name, scope in scopes.items():
        for fid in scope.fids:
            scopes_of.setdefault(fid, []).append(name)
    markers, known = tuple(m.lower() for m in model.run.markers), {}
    states: dict[tuple, str] = {}  # (fates' name, id, external, now): two letters may share an id
    for digest, (lid, tool, reply, klass) in rows.items():
        held = copies[digest]
        names = {name for fid, _ in held for name in scopes_of.get(fid, ())}
        if not names:
            continue
        ext = tool_is_external(tool, markers, known)
        mis = klass == "memory_misdelivery"
        for name in names:
            scope, which = scopes[name], ("" if graph_scope is not None else name)
            counts = value[name]
            for now, sign in ((False, -1), (True, 1)):
                if not scope.holds(held, None if now else gen):
                    continue
                key = (which, lid, ext, now)
                state = states.get(key)
                if state is None:
                    state = states[key] = fates[which].state(lid, ext, now)
                for field, n in _contribution(state, reply, mis).items():
                    counts[field] += sign * n
    return value
