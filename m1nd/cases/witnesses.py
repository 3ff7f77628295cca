"""The witnesses and escalations of every file of the union, kept as letters arrive
(cases.md 2), so that the escalation step after a filing never builds the read model.

Escalation needs, per fingerprint, its witnesses in order, whether the union already
holds an escalation for it, and which box holds a witness.  This index keeps exactly
that, in the read model's database (tables `case_files` and `case_letters`), for the
lines that can be a witness or an escalation: a line is parsed only when it holds a
marker every such line must hold (MARKERS), so looking at new bytes costs a byte
search over them and a parse of the few lines that may matter.

Each file is verified the way the read model verifies its files: an unchanged stat
costs one fstat; a file that only grew (same device and inode, the same checksums
over what was looked at) is read from where the last look stopped; a file replaced,
truncated or rewritten (a git checkout) is looked at again from its first byte.  A
file's update is one transaction: a process killed mid-update leaves that file as it
was, and the next update carries on.  Derived only: deleting the state rebuilds it.

Looking at the bytes (the markers, the parse, `Looked`) is witnessscan.py's; the
index's tables and their questions are here.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import orjson

from m1nd.boxes import Box, refusal
from m1nd.chunks import region_hashes, same_bytes, settled
from m1nd.cases.witnessscan import ESCALATION, WITNESS, Looked, _scan
from m1nd.fsutil import open_regular
from m1nd.readmodel import store
from m1nd.readmodel.update import path_key
from m1nd.run import Run

if TYPE_CHECKING:
    from m1nd.cases.overlay import Witness  # imported when an entry is made: a filing with nothing new makes none

# meta: the next escalation step must decide even if it finds nothing new (a look
# before the filing saw new lines, or the last decision left an escalation waiting or failing)
UNDECIDED_KEY = "cases_undecided"


def _stored_hashes(text) -> list | None:
    """The chunk hashes a row keeps; a damaged value is none (same_bytes: no match), so the
    file is looked at again from its first byte instead of failing every filing."""
    try:
        return orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return None


def _update_file(con: sqlite3.Connection, path: str, every: dict[bytes, None] | None = None,
                 looked: Looked | None = None, spool: bool = False) -> bool:
    """Bring one file's rows up to its content; True when anything changed.  Raises
    OSError for a file that cannot be read.  `every`, `looked`: see _scan; `spool`: the
    file is the spool (`looked` keeps which stretch of it was looked at)."""
    key = path_key(path)
    fh = open_regular(path)
    try:
        st = os.fstat(fh.fileno()) if fh is not None else None
        select = "SELECT dev, ino, size, mtime_ns, offset, hashes FROM case_files WHERE path = ?"
        row = con.execute(select, (key,)).fetchone()
        if st is not None and row is not None and tuple(row[:4]) == (st.st_dev, st.st_ino, st.st_size,
                                                                     st.st_mtime_ns):
            return False
        if st is None and row is None:
            return False
        con.execute("BEGIN IMMEDIATE")
        try:
            row = con.execute(select, (key,)).fetchone()  # lock, re-check, act
            if st is not None:  # another process may have looked further meanwhile
                st = os.fstat(fh.fileno())
            if st is None:
                con.execute("DELETE FROM case_letters WHERE path = ?", (key,))
                con.execute("DELETE FROM case_files WHERE path = ?", (key,))
                con.execute("COMMIT")
                return True
            fd = fh.fileno()
            hashes = _stored_hashes(row[5]) if row is not None else []
            grew = (row is not None and (row[0], row[1]) == (st.st_dev, st.st_ino) and st.st_size >= row[4]
                    and same_bytes(fd, row[4], hashes))
            start = row[4] if grew else 0
            if not grew:
                hashes = []
            con.execute("DELETE FROM case_letters WHERE path = ? AND offset >= ?", (key, start))
            appended = looked.appended.get(path, ()) if looked is not None else ()
            rows, offset = _scan(fd, start, st.st_size, key, every, looked, appended)
            if looked is not None and spool:
                looked.spool = (st.st_dev, st.st_ino, start, offset)
            con.executemany("INSERT OR REPLACE INTO case_letters VALUES (?,?,?,?,?,?,?,?,?)", rows)
            hashes = region_hashes(fd, offset, hashes, start)
            after = os.fstat(fd)
            # As the read model does: a stat is trusted only when everything was read and
            # it is not so fresh that a same-size rewrite in the same tick could hide.
            mtime = after.st_mtime_ns if after.st_size == st.st_size else -1
            if mtime >= 0 and not settled(mtime, time.time_ns()):
                mtime = -2
            con.execute("INSERT OR REPLACE INTO case_files VALUES (?,?,?,?,?,?,?)",
                        (key, st.st_dev, st.st_ino, st.st_size, mtime, offset, orjson.dumps(hashes).decode()))
            con.execute("COMMIT")
            return True
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
    finally:
        if fh is not None:
            fh.close()


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    witnesses: tuple[Witness, ...]  # distinct by digest, ordered by ts, then id, then digest


class Index:
    """The index for one run: open, brought current (`update`), asked, closed."""

    def __init__(self, run: Run, looked: Looked | None = None) -> None:
        self.run = run
        self.looked = looked if looked is not None else Looked()
        # notes: the database was rebuilt (damaged, or kept by another release): said by the filing
        self.con, self.persistent, self.notes = store.open_db(run.paths.state)
        self.boxes: list[Box] = []  # the run's boxes whose letters are in the union, in run order
        self.changed = False
        # digests (raw, in the order met, each once) of the letters on the boxes' lines looked at for the
        # first time: after the state was deleted, every letter of every box (a million as 64-character
        # strings, then again as bytes for the ledger, took 230 MB)
        self.arrived: dict[bytes, None] = {}

    def update(self, spool_only: bool = False) -> None:
        self.changed |= _update_file(self.con, self.run.paths.spool, looked=self.looked, spool=True)
        if spool_only:
            return
        self.boxes = []
        for box in self.run.boxes():
            if refusal(box):
                continue  # a refused box is not read: its letters are not in the union
            try:
                self.changed |= _update_file(self.con, box.path, self.arrived, self.looked)
            except OSError:
                continue  # an unreadable box: not in the union this run
            self.boxes.append(box)

    def _paths(self) -> list[bytes]:
        return [path_key(self.run.paths.spool)] + [path_key(b.path) for b in self.boxes]

    def unescalated(self) -> list[Entry]:
        """Fingerprints with two witnesses or more and no escalation in the union."""
        paths = self._paths()
        marks = ",".join("?" * len(paths))
        found = self.con.execute(
            f"SELECT fingerprint FROM case_letters WHERE path IN ({marks}) GROUP BY fingerprint"
            f" HAVING sum(role = '{ESCALATION}') = 0"
            f" AND count(DISTINCT CASE WHEN role = '{WITNESS}' THEN digest END) >= 2 ORDER BY fingerprint",
            paths).fetchall()
        from m1nd.cases.overlay import Witness

        entries = []
        for (fingerprint,) in found:
            distinct = {}
            for digest, ts, tool, repo, brain in self.con.execute(
                    f"SELECT digest, ts, tool, repo, brain FROM case_letters WHERE fingerprint = ?"
                    f" AND role = '{WITNESS}' AND path IN ({marks})", [fingerprint, *paths]):
                distinct[digest] = Witness(digest[:6].hex(), ts, digest.hex(), tool, repo, brain)
            entries.append(Entry(fingerprint, tuple(sorted(distinct.values(), key=lambda w: w.order))))
        return entries

    def box_of(self, digest: str) -> Box | None:
        """The box that holds a letter: the first in run order (None: only in the spool)."""
        held = {r[0] for r in self.con.execute("SELECT path FROM case_letters WHERE digest = ?",
                                               (bytes.fromhex(digest),))}
        return next((b for b in self.boxes if path_key(b.path) in held), None)

    def undecided(self) -> bool:
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", (UNDECIDED_KEY,)).fetchone()
        return row is not None and row[0] == "1"

    def set_undecided(self, undecided: bool) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (UNDECIDED_KEY, "1" if undecided else "0"))

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
