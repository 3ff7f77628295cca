"""What a report freezes, kept on disk until it is written: the period's entries in
report order and the digests it accounts for, so that freezing a period of a million
letters holds one page in memory, not the period.

`Spill` is a private temporary SQLite database (deleted when closed): SQLite sorts
with a bounded cache and spills to its temporary files.  The order is the report's
(freeze.py): box in profile order, then state, then newest first, then id and
digest; strings compare as their UTF-8 bytes, which is Python's order of str.

`ledger_lines` reads the coverage ledger from an offset in blocks, not whole.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Iterator

from m1nd import ledger
from m1nd.errors import M1ndError
from m1nd.paths import Paths
from m1nd.reports import store

BLOCK = 4 << 20  # ledger bytes parsed at a time


def _key(text: str | None) -> bytes:
    return (text or "").encode("utf-8", "surrogatepass")


_IN_ORDER = "SELECT doc FROM e ORDER BY box, state, ts DESC, id, digest, rowid"


class Spill:
    def __init__(self, page_size: int) -> None:
        self.page_size = page_size
        self.con = sqlite3.connect("")  # "": a temporary database on disk, private to this connection
        self.con.execute("PRAGMA journal_mode=OFF")
        self.con.execute("PRAGMA synchronous=OFF")
        self.con.execute("CREATE TABLE e (box INTEGER, state INTEGER, ts BLOB, id BLOB, digest BLOB, doc BLOB)")
        self.con.execute("CREATE TABLE d (digest TEXT)")
        self.count = 0

    def add(self, box: int, state: int, entry: dict) -> None:
        self.con.execute("INSERT INTO e VALUES (?, ?, ?, ?, ?, ?)",
                         (box, state, _key(entry["ts"]), _key(entry["id"]), _key(entry["digest"]),
                          store.canonical(entry)))
        self.count += 1

    def account(self, digest: str) -> None:
        self.con.execute("INSERT INTO d VALUES (?)", (digest,))

    @property
    def pages(self) -> int:
        return -(-self.count // self.page_size)

    def page_lines(self, run_id: str) -> Iterator[bytes]:
        """Each page's canonical bytes (as store.canonical of the page dict), in order."""
        tail = b'],"number":%d,"run_id":' + store.canonical(run_id) + b"}"
        rows = self.con.execute(_IN_ORDER)
        number = 0
        while True:
            batch = rows.fetchmany(self.page_size)
            if not batch:
                return
            number += 1
            yield b'{"entries":[' + b",".join(doc for (doc,) in batch) + tail % number

    def docs(self) -> Iterator[bytes]:
        """Each entry's canonical bytes, in report order."""
        for (doc,) in self.con.execute(_IN_ORDER):
            yield doc

    def digests(self) -> Iterator[str]:
        for (digest,) in self.con.execute("SELECT digest FROM d ORDER BY rowid"):
            yield digest

    def close(self) -> None:
        self.con.close()


class LedgerLines:
    """(offset after the line, entry) for every whole line of the ledger from `offset`
    (a line boundary), read in blocks; `end` is the offset after the last whole line
    once iterated.  The same checks and errors as `ledger.read_from`."""

    def __init__(self, paths: Paths, offset: int) -> None:
        self.paths, self.offset, self.end = paths, offset, offset

    def __iter__(self) -> Iterator[tuple[int, ledger.Entry]]:
        path = ledger.ledger_path(self.paths)
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            ledger.read_from(self.paths, self.offset)  # the same answer: an error, or nothing
            self.end = 0
            return
        except OSError:
            ledger.read_from(self.paths, self.offset)  # says why
            raise
        with fh:
            size = os.fstat(fh.fileno()).st_size
            bad = self.offset > size
            if self.offset and not bad:
                fh.seek(self.offset - 1)
                bad = fh.read(1) != b"\n"
            if bad:
                ledger.read_from(self.paths, self.offset)  # refuses, in its own words
                raise M1ndError(f"the coverage ledger {path} does not match a report cursor: refusing to go on")
            fh.seek(self.offset)
            base, left, rest = self.offset, size - self.offset, b""
            while left > 0:
                chunk = fh.read(min(BLOCK, left))
                if not chunk:
                    break
                left -= len(chunk)
                data = rest + chunk
                whole = data.rfind(b"\n") + 1
                try:
                    lines = ledger._parse_block(data[:whole], path, base)
                except M1ndError:
                    ledger.read_from(self.paths, self.offset)  # the damaged line, numbered as it numbers it
                    raise
                yield from lines
                base += whole
                rest = data[whole:]
                self.end = base
