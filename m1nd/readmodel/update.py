"""Keeping the read model current, one letters file at a time.

A file is verified the way boxindex.py verifies boxes: untouched since it was last
indexed (same device, inode, size and mtime) costs one fstat; a file that changed
in place is checked against the chunk checksums of the bytes indexed so far, and
when it only grew, only the new bytes are read; a file that was replaced (a git
checkout writes a new file), truncated or rewritten anywhere is indexed again from
its first byte.  Each file's update is one SQLite transaction, so a process killed
at any point leaves the model as it was before that file's update.

A final line without `\\n` may still be growing (a writer mid-append): it is
indexed as a letter when it parses, but the offset stays before it, so the next
update reads it again.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from dataclasses import dataclass

import orjson

from m1nd.chunks import region_hashes, same_bytes, settled
from m1nd.fates import is_receipt_class
from m1nd.letters import iter_raw, load
from m1nd.readmodel.rows import INSERT_LETTER, letter_row

CHUNK_LINES = 50_000  # lines per transaction of a large read
BATCH = 900  # lines per batch (SQLite's default limit on bound parameters is higher)
BATCH_BYTES = 1 << 20  # or fewer: 900 letters of 64 KB, each naming thousands of answers, parse to gigabytes
CONFLICT_MARKERS = (b"<<<<<<< ", b"=======", b">>>>>>> ")

@dataclass
class FileRow:
    fid: int
    dev: int
    ino: int
    size: int
    mtime_ns: int
    offset: int
    lines: int
    hashes: list[str]
    tail_line: int | None
    gen: int


def path_key(path: str) -> bytes:
    """A file's key in the model: its path's bytes (a path need not be UTF-8)."""
    return os.fsencode(path)


def load_row(con: sqlite3.Connection, path: str) -> FileRow | None:
    row = con.execute(
        "SELECT fid, dev, ino, size, mtime_ns, offset, lines, hashes, tail_line, gen FROM files WHERE path = ?",
        (path_key(path),)).fetchone()
    if row is None:
        return None
    return FileRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], orjson.loads(row[7]), row[8], row[9])


def unchanged(row: FileRow | None, st: os.stat_result | None) -> bool:
    if st is None:
        return row is None or (row.size == 0 and row.offset == 0 and row.tail_line is None and row.ino == -1)
    return row is not None and (row.dev, row.ino, row.size, row.mtime_ns) == (
        st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _next_gen(con: sqlite3.Connection) -> int:
    gen = int(con.execute("SELECT value FROM meta WHERE key = 'gen'").fetchone()[0]) + 1
    con.execute("UPDATE meta SET value = ? WHERE key = 'gen'", (str(gen),))
    return gen


class _Removed:
    """Digests whose copies were dropped: letters left with no copy at all are deleted
    at the end of a file's update (after its new lines are in, so a letter read again
    keeps its first generation).  The set is a table of the model, written in the
    same transactions as the deletions, so a process killed in between leaves it for
    the next update to collect."""

    def __init__(self, con: sqlite3.Connection, fid: int, gen: int) -> None:
        self.con = con
        self.fid = fid
        self.gen = gen

    def take(self, where: str, args: tuple) -> None:
        self.con.execute(f"INSERT OR IGNORE INTO removed SELECT digest FROM copies WHERE fid = ? AND {where}",
                         (self.fid, *args))
        if self.con.execute(f"DELETE FROM copies WHERE fid = ? AND {where}", (self.fid, *args)).rowcount:
            # counts kept since an earlier generation cannot be brought current by
            # adding what is new: they are computed again (readmodel/tally.py)
            self.con.execute("UPDATE files SET cut_gen = ? WHERE fid = ?", (self.gen, self.fid))

    def collect(self) -> None:
        if self.con.execute("SELECT 1 FROM removed LIMIT 1").fetchone() is None:
            return
        gone = "SELECT r.digest FROM removed r WHERE NOT EXISTS (SELECT 1 FROM copies c WHERE c.digest = r.digest)"
        self.con.execute(f"DELETE FROM replies WHERE digest IN ({gone})")
        self.con.execute(f"DELETE FROM letters WHERE digest IN ({gone})")
        self.con.execute("DELETE FROM removed")


def _set_row(con, fid: int, st, offset: int, lines: int, hashes: list[str], tail, gen: int,
             size: int = -1, mtime: int = -1) -> None:
    con.execute(
        "UPDATE files SET dev = ?, ino = ?, size = ?, mtime_ns = ?, offset = ?, lines = ?, hashes = ?,"
        " tail_line = ?, gen = ? WHERE fid = ?",
        (st.st_dev, st.st_ino, size, mtime, offset, lines, orjson.dumps(hashes).decode(), tail, gen, fid))


def refresh_file(con: sqlite3.Connection, path: str, fd: int | None, secret_check=None,
                 progress=None) -> tuple[int, list[int]]:
    """Bring one file's part of the model up to the file's content.  `fd` is the
    open file (None: the file does not exist).  Returns (fid, generations written).
    `progress`, when given, is called with the number of bytes read since its last call.

    A large read commits every CHUNK_LINES lines, the file's row then saying exactly
    how far it is indexed (and, with no trusted stat, that it must be looked at
    again): a process killed in between, or another one waiting for the lock, carries
    on from there instead of starting over, and the write lock is never held long."""
    st = os.fstat(fd) if fd is not None else None
    row = load_row(con, path)
    if row is not None and unchanged(row, st):
        return row.fid, []
    con.execute("BEGIN IMMEDIATE")
    try:
        # Lock, look again, act: another process may have indexed the file while we
        # waited for the lock, past the size we saw before it (an append since): a
        # stat from before the lock would take that for a truncation and read it all.
        st = os.fstat(fd) if fd is not None else None
        row = load_row(con, path)
        if row is not None and unchanged(row, st):
            con.execute("COMMIT")
            return row.fid, []
        gens = [_next_gen(con)]
        if row is None:
            cur = con.execute("INSERT INTO files (path) VALUES (?)", (path_key(path),))
            row = FileRow(cur.lastrowid, -1, -1, -1, -1, 0, 0, [], None, 0)
        removed = _Removed(con, row.fid, gens[0])
        if st is None:
            _forget(con, row.fid, gens[0], removed)
        else:
            _index(con, row, fd, st, gens, removed, secret_check, progress)
        removed.collect()
        con.execute("COMMIT")
        return row.fid, gens
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def _forget(con, fid: int, gen: int, removed: _Removed) -> None:
    """The file is gone: none of its lines is in the model any more."""
    removed.take("1", ())
    con.execute("DELETE FROM malformed WHERE fid = ?", (fid,))
    con.execute(
        "UPDATE files SET dev = -1, ino = -1, size = 0, mtime_ns = -1, offset = 0, lines = 0, hashes = '[]',"
        " tail_line = NULL, gen = ? WHERE fid = ?", (gen, fid))


def _index(con, row: FileRow, fd: int, st, gens: list[int], removed: _Removed, secret_check, progress) -> None:
    """Index the file's new lines: those past what is indexed when it only grew, else
    all of them; its row then records how far it was read, and the stat to trust.
    `gens`: the generations written, the last one current (a read that commits as it
    goes takes a new one after each commit)."""
    fid = row.fid
    grew = (
        (st.st_dev, st.st_ino) == (row.dev, row.ino) and st.st_size >= row.offset
        and same_bytes(fd, row.offset, row.hashes)
    )
    if not grew:
        removed.take("1", ())
        con.execute("DELETE FROM malformed WHERE fid = ?", (fid,))
        row.offset, row.lines, row.hashes = 0, 0, []
    else:
        removed.take("line > ?", (row.lines,))  # a last line that may have grown
        con.execute("DELETE FROM malformed WHERE fid = ? AND line > ?", (fid, row.lines))
    _set_row(con, fid, st, row.offset, row.lines, row.hashes, None, gens[-1])
    # Into a model with no letters yet (a first build), asking which lines are
    # known costs a lookup per line and finds none: every line is parsed and
    # inserted (INSERT OR IGNORE keeps the first of a letter written twice).
    probe = con.execute("SELECT 1 FROM letters LIMIT 1").fetchone() is not None
    offset, lines, tail, read_to, hashes = _read(con, fid, fd, st, row.offset, row.lines, row.hashes, gens,
                                                 secret_check, probe, progress)
    after = os.fstat(fd)
    # Record the file's stat only when everything up to its end was read:
    # bytes appended while we read must make the next update look again.
    size, mtime = (after.st_size, after.st_mtime_ns) if after.st_size == read_to else (-1, -1)
    if mtime >= 0 and not settled(mtime, time.time_ns()):
        # Racy: a write in the same clock tick as this read would leave the
        # size and mtime as recorded (a same-size rewrite, say), so a stat
        # this fresh is not trusted: the next update verifies the content
        # (chunks.settled: the memo of checksums follows the same rule).
        mtime = -2
    _set_row(con, fid, after, offset, lines, hashes, tail, gens[-1], size, mtime)


def _read(con, fid: int, fd: int, st, offset: int, lines: int, hashes: list[str], gens: list[int], secret_check,
          probe: bool = True, progress=None):
    """Index the lines from `offset`, committing every CHUNK_LINES lines.  Returns
    (offset and line count of the terminated lines read, unfinished tail line or
    None, bytes read up to, hashes of [0, offset)).

    What each commit leaves is a generation of its own: what is kept by generation
    (the read model's counts, the server's answers) and was computed from the part
    committed so far is then told from the whole, whose later lines carry later
    generations."""
    gen = gens[-1]
    pending: list[tuple[int, int, int, bytes, bool]] = []  # (line, start, length, raw, terminated)
    tail = None
    read_to = offset
    n = lines
    done_offset, since = offset, 0
    told = offset
    pending_bytes = 0
    with os.fdopen(os.dup(fd), "rb") as fh:
        for start, end, raw, terminated in iter_raw(fh, offset):
            n += 1
            read_to = end
            if terminated:
                offset, lines = end, n
            since += 1
            if not raw or raw.isspace():
                continue
            pending.append((n, start, len(raw), raw, terminated))
            pending_bytes += len(raw)
            if len(pending) >= BATCH or pending_bytes >= BATCH_BYTES:
                tail = _flush(con, fid, pending, gen, secret_check, probe) or tail
                pending, pending_bytes = [], 0
                if progress is not None:
                    progress(read_to - told)
                    told = read_to
                if since >= CHUNK_LINES and terminated:
                    hashes = region_hashes(fd, offset, hashes, done_offset)
                    done_offset, since = offset, 0
                    _set_row(con, fid, st, offset, lines, hashes, None, gen)
                    con.execute("COMMIT")
                    con.execute("BEGIN IMMEDIATE")
                    gen = _next_gen(con)
                    gens.append(gen)
        if pending:
            tail = _flush(con, fid, pending, gen, secret_check, probe) or tail
    if progress is not None:
        progress(read_to - told)
    hashes = region_hashes(fd, offset, hashes, done_offset)
    return offset, lines, tail, read_to, hashes


def _flush(con, fid: int, batch, gen: int, secret_check, probe: bool = True) -> int | None:
    sha256 = hashlib.sha256
    digests = [sha256(item[3]).digest() for item in batch]
    if probe:
        marks = ",".join("?" * len(digests))
        known = {r[0] for r in con.execute(f"SELECT digest FROM letters WHERE digest IN ({marks})", digests)}
    else:
        known = set()
    new_letters = []
    new_raws = []
    copies = []
    malformed = []
    tail = None
    for (number, start, length, raw, terminated), digest in zip(batch, digests):
        if digest in known:
            copies.append((fid, number, digest, start, length, gen))
            continue
        obj = load(raw)
        if obj is None:
            conflict = raw.startswith(CONFLICT_MARKERS)
            if terminated:
                malformed.append((fid, number, 1 if conflict else 0))
            else:
                tail = number
                if conflict:  # a torn conflict marker line: a tail, and a conflict marker too
                    malformed.append((fid, number, 2))
            continue
        known.add(digest)
        new_letters.append((digest, obj))
        new_raws.append(raw)
        copies.append((fid, number, digest, start, length, gen))
    if new_letters:
        # secret_check: a batch detector (secrets.held_in_batch): index -> kind; "" = checked, none
        held = secret_check(new_raws) if secret_check else None
        con.executemany(INSERT_LETTER, [
            letter_row(digest, obj, gen, None if held is None else held.get(i, ""))
            for i, (digest, obj) in enumerate(new_letters)])
        # A generator: a batch of letters may name millions of answers (64 KB each).
        con.executemany("INSERT OR IGNORE INTO replies VALUES (?,?,?,?)", (
            (target, digest, pos, 1 if is_receipt_class(obj.get("class", "")) else 0)
            for digest, obj in new_letters if obj.get("answers") and obj.get("kind") != "mission"
            for pos, target in enumerate(obj["answers"])))
    if copies:
        con.executemany("INSERT OR REPLACE INTO copies VALUES (?,?,?,?,?,?)", copies)
    if malformed:
        con.executemany("INSERT OR REPLACE INTO malformed VALUES (?,?,?)", malformed)
    return tail
