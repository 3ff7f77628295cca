"""The read model's cache table: derived values (reply graphs, counts, doctor's facts)
stored with the generation they were computed at, used as stored while nothing is
new, advanced from what is new, else computed again.  A part of ReadModel
(m1nd/readmodel/__init__.py)."""

from __future__ import annotations

import sqlite3

import orjson

from m1nd.readmodel import tally


class Cache:
    """What ReadModel keeps in its `cache` table (one row per key)."""

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
