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
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
import zlib
from dataclasses import dataclass

import orjson

from m1nd.boxes import Box, refusal
from m1nd.boxindex import region_hashes
from m1nd.cases import fingerprints as fps
from m1nd.cases.overlay import Witness
from m1nd.fates import is_receipt
from m1nd.fsutil import open_regular
from m1nd.letters import from_object, load
from m1nd.readmodel import store
from m1nd.readmodel.update import RACY_NS, path_key
from m1nd.run import Run

BLOCK = 4 << 20  # bytes read at a time: a block and its copy stay small beside what a filing holds
PRELOAD_BYTES = 4 << 20  # as distribute.py: new bytes worth compiling the secret rules for
WITNESS, ESCALATION = "w", "e"
# Every witness's line holds one of these bytes exactly: a `"kind"` key (the eight, and
# the misdelivery mapping, both need one), a backfill rule's marker, or a `\u` escape
# (which could spell any of them); every escalation's line a `"fingerprint"` key.
# (marker, words the lowercased line must also hold)
MARKERS = (
    (b'"kind"', ()),
    (b'"fingerprint"', ()),
    (b"\\u", ()),
    (b"Traceback (most recent call last)", ()),  # traceback-crash
    (b'"honesty"', (b"north", b"memor")),  # north-memory-emptiness
)
# meta: the next escalation step must decide even if it finds nothing new (a look
# before the filing saw new lines, or the last decision left an escalation waiting or failing)
UNDECIDED_KEY = "cases_undecided"


def _classify(raw: bytes) -> tuple[str, str, dict] | None:
    """(role, fingerprint, fields) of a line that may be a witness or an escalation, else
    None: the same decision as the fold (fold.py) makes over read-model rows, but for
    one step, left to the caller because it is cheaper over many lines at once: a
    witness must not be held (`secrets.held_in_batch`; source.py: WANTED)."""
    obj = load(raw)
    if obj is None or obj.get("kind") == "mission":
        return None
    letter = from_object(raw, obj, "")  # the id is not needed here
    if is_receipt(letter):
        fingerprint = obj.get("fingerprint")
        if type(fingerprint) is not str or fps.split(fingerprint) is None:
            return None
        if obj.get("disposition") is None and letter.agent == fps.ENGINE_AGENT:
            return ESCALATION, fingerprint, obj
        return None
    fingerprint = fps.derive(letter).fingerprint
    if fingerprint is None:
        return None
    return WITNESS, fingerprint, obj


class Looked:
    """What one process already knows about lines, by their sha256 digest, so that a
    line seen twice (in the spool, then in the box a filing appended it to) is parsed
    once.  `rows`: the classification of each marked line judged (None: neither a
    witness nor an escalation), a pure function of its bytes; `observed`: letters the
    coverage ledger is known to hold (the filing just recorded them)."""

    def __init__(self, observed=None, appended=None, read=None) -> None:
        self.rows: dict[bytes, tuple | None] = {}
        self.observed = observed if observed is not None else {}
        # {box path: [(offset, length, crc32, digests)]}: what the filing appended
        self.appended = appended or {}
        self.read = read  # (dev, ino, start, end) of the spool stretch the filing read
        self.spool: tuple | None = None  # the same of the stretch this process looked at

    def covered(self) -> bool:
        """Whether every letter the filing read was on a spool line looked at here, so
        that one not classified here holds no marker."""
        if self.read is None or self.spool is None:
            return False
        return self.read[:2] == self.spool[:2] and self.spool[2] <= self.read[2] and self.read[3] <= self.spool[3]


def _marked_lines(block: bytes) -> list[tuple[int, bytes]]:
    """(start, raw) of every line of the block holding a marker, by marker order."""
    lines: list[tuple[int, bytes]] = []
    seen: set[int] = set()
    for marker, also in MARKERS:
        at = block.find(marker)
        while at >= 0:
            start = block.rfind(b"\n", 0, at) + 1
            end = block.find(b"\n", at)
            end = len(block) if end < 0 else end
            if start not in seen:
                seen.add(start)
                line = block[start:end]
                raw = line[:-1] if line.endswith(b"\r") else line  # letters.py: one `\r` goes
                if (not also or all(w in line.lower() for w in also)) and raw.strip():
                    lines.append((start, raw))
            at = block.find(marker, end)
    return lines


def _rows_in_block(block: bytes, base: int, rows: "_Rows") -> None:
    sha256 = hashlib.sha256
    rows.add([(start, raw, sha256(raw).digest()) for start, raw in _marked_lines(block)], base)


class _Rows:
    """The rows of one file's lines that may be a witness or an escalation, gathered
    block by block; the witnesses among them are judged for secrets at the end, in one
    batch (a held letter is never a witness)."""

    def __init__(self, path: bytes, looked: Looked | None) -> None:
        self.path = path
        self.looked = looked
        self.found: list[tuple[int, bytes, tuple | None]] = []  # (offset, digest, classification)
        self.judge: list[int] = []  # positions in `found` of witnesses whose bytes are not judged yet
        self.raws: list[bytes] = []

    def add(self, lines: list[tuple[int, bytes, bytes]], base: int) -> None:
        """These (start, raw, digest) lines, whose starts are relative to `base`."""
        known = self.looked.rows if self.looked is not None else {}
        found = self.found
        for start, raw, digest in lines:
            if digest in known:
                found.append((base + start, digest, known[digest]))
                continue
            kind = _classify(raw)
            if kind is not None:
                role, fingerprint, obj = kind
                get = obj.get
                kind = (role, fingerprint, get("ts", ""), get("tool", ""), get("repo", ""), get("brain", ""))
                if role == WITNESS:
                    self.judge.append(len(found))
                    self.raws.append(raw)
            found.append((base + start, digest, kind))

    def done(self) -> list[tuple]:
        from m1nd.secrets import compiling, held_in_batch, likely_secret

        found, raws = self.found, self.raws
        if raws:  # one batch, or one by one while the compiled rules still compile (never waiting)
            held = {i for i, raw in enumerate(raws) if likely_secret(raw)} if compiling() else held_in_batch(raws)
            for j, i in enumerate(self.judge):
                if j in held:
                    offset, digest, _ = found[i]
                    found[i] = (offset, digest, None)
        if self.looked is not None:
            self.looked.rows.update((digest, kind) for _, digest, kind in found)
        path = self.path
        return [(path, offset, digest, *kind) for offset, digest, kind in found if kind is not None]


def _marked(line: bytes) -> bool:
    """Whether _marked_lines would pick this line (without its `\\n`)."""
    return any(marker in line and (not also or all(w in line.lower() for w in also)) for marker, also in MARKERS)


def _appended_rows(data: bytes, base: int, digests: list[bytes], rows: _Rows, every: list[str] | None,
                   looked: Looked) -> bool:
    """Rows (and letters for `every`) of lines this process appended to a box: `data`,
    at byte `base`, one line per digest in `digests` (sha256 of each line).  A line is
    judged from what `looked` knows of its digest where it can: a line classified
    before takes that classification, a letter the filing recorded is not parsed for
    the ledger, and a letter the filing read from a stretch of the spool this process
    looked at whole is unmarked when it was not classified.  None when `data` is not
    those lines (then it is scanned as any bytes are, and nothing was taken)."""
    from m1nd.letters import load

    lines = data.split(b"\n")
    if lines.pop() != b"" or len(lines) != len(digests):
        return False
    sha256 = hashlib.sha256
    known, observed, covered = looked.rows, looked.observed, looked.covered()
    marked: list[tuple[int, bytes, bytes]] = []
    at = 0
    for line, digest in zip(lines, digests):
        start, at = at, at + len(line) + 1
        raw = line
        if raw.endswith(b"\r"):  # letters.py: one `\r` goes, so the box line is another letter
            raw = raw[:-1]
            digest = sha256(raw).digest()
        if not raw.strip():
            continue
        if digest in known or not (covered and digest in observed) and _marked(line):
            marked.append((start, raw, digest))
        if every is not None and digest not in observed:
            obj = load(raw)
            if obj is not None and obj.get("kind") != "mission":
                every.append(digest.hex())
    rows.add(marked, base)
    return True


def _letters_in_block(block: bytes, every: list[str], observed=()) -> None:
    """The digests of the letters among these whole lines, for the coverage ledger, as
    a filing records its spool lines: malformed and blank lines and missions left out.
    A line whose digest is in `observed` is a letter the ledger holds: not parsed again."""
    from m1nd.letters import load

    sha256 = hashlib.sha256
    for line in block.split(b"\n"):
        raw = line[:-1] if line.endswith(b"\r") else line
        if raw.strip():
            digest = sha256(raw).digest()
            if digest in observed:
                continue
            obj = load(raw)
            if obj is not None and obj.get("kind") != "mission":
                every.append(digest.hex())


def _scan(fd: int, start: int, size: int, path: bytes, every: list[str] | None = None,
          looked: Looked | None = None, appended=()) -> tuple[list[tuple], int]:
    """Rows of the lines in [start, size), and the offset after the last `\\n` (a final
    unterminated line is looked at, but read again next time: it may still grow).  With
    `every`, the digest of each letter on a whole line is appended to it too (but for
    letters `looked` says the ledger holds).  `appended`: (offset, length, crc32,
    digests) of stretches this process appended, whose lines are judged from their
    digests when the bytes there are still the ones written (_appended_rows)."""
    if looked is not None and size - start >= PRELOAD_BYTES:
        from m1nd.secrets import preload

        preload()  # many lines: their witnesses are judged in batches, by the compiled rules
    rows = _Rows(path, looked)
    at = start
    for offset, length, crc, digests in appended:
        if offset < at or offset + length > size:
            continue
        at = _scan_bytes(fd, at, offset, rows, every, looked, tail=False)
        if at != offset:
            break
        data = os.pread(fd, length, offset)
        if zlib.crc32(data) != crc or not _appended_rows(data, offset, digests, rows, every, looked):
            break
        at = offset + length
    end = _scan_bytes(fd, at, size, rows, every, looked)
    return rows.done(), end


def _scan_bytes(fd: int, start: int, size: int, rows: _Rows, every: list[str] | None, looked: Looked | None,
                tail: bool = True) -> int:
    """_scan over bytes that are only bytes; `tail`: look at a final unterminated line.
    Returns the offset after the last `\\n`."""
    at, carry_at, carry = start, start, b""
    observed = looked.observed if looked is not None else ()
    while at < size:
        chunk = os.pread(fd, min(BLOCK, size - at), at)
        if not chunk:
            break
        at += len(chunk)
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            _rows_in_block(data[:cut], carry_at, rows)
            if every is not None:
                _letters_in_block(data[:cut], every, observed)
        carry, carry_at = data[cut:], carry_at + cut
    if carry and tail:
        _rows_in_block(carry, carry_at, rows)
    return carry_at


def _update_file(con: sqlite3.Connection, path: str, every: list[str] | None = None,
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
            hashes = orjson.loads(row[5]) if row is not None else []
            grew = (row is not None and (row[0], row[1]) == (st.st_dev, st.st_ino) and st.st_size >= row[4]
                    and region_hashes(fd, row[4]) == hashes)
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
            if mtime >= time.time_ns() - RACY_NS:
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
        self.con, self.persistent, _ = store.open_db(run.paths.state)
        self.boxes: list[Box] = []  # the run's boxes whose letters are in the union, in run order
        self.changed = False
        self.arrived: list[str] = []  # digests of the letters on the boxes' lines looked at for the first time

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
