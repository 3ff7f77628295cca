"""The distribution cursor: what the last run already read of the spool.

Kept under `<home>/state/` so that a run reads only what is new:
- `distribute.json`: the spool's identity (device, inode, and the size and mtime
  it had when last read), checksums of the bytes read so far in chunks, the offset
  and line count read so far, a digest of the roots it was routed against, and per
  (brain, repo) pair its letter count, held count and route;
- `spool-locations.bin`: where each letter sits in the spool (pair, offset,
  length), so that a roster change, or a box deleted outside m1nd, can have a
  pair's letters filed again without reading the whole spool.

A cache in the strict sense: deleting it loses nothing (the next run rescans), and
one that does not verify is reported and rebuilt, never taken as empty.
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass, field

import orjson

from m1nd.chunks import region_hashes, same_bytes
from m1nd.fsutil import TEMP_PREFIX, atomic_write, open_fd
from m1nd.paths import ensure_dir

VERSION = 4  # 2: distribute.json carries a checksum; 3: chunk checksums of the spool read; 4: no malformed list
LOCATION = struct.Struct("<IQI")  # pair index, offset, length


def _holds(path: str, data: bytes) -> bool:
    """Whether the file at `path` already holds exactly `data`."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(data) + 1) == data
    except OSError:
        return False


class StateCorrupt(Exception):
    pass


@dataclass
class Pair:
    brain: str
    repo: str
    route: str  # "p\0<root path>", "m", or "n\0<pending name>"
    count: int = 0
    held: int = 0


@dataclass
class SpoolMark:
    dev: int
    ino: int
    offset: int
    lines: int
    size: int  # the spool's size and mtime when this mark was taken
    mtime_ns: int
    hashes: list[str]  # region_hashes of [0, offset)


@dataclass
class State:
    mark: SpoolMark | None = None
    roots: str = ""
    pairs: list[Pair] = field(default_factory=list)
    locations: int = 0  # records in the location log that belong to this state
    refiling: list[int] = field(default_factory=list)  # pairs a run began to file again, not yet done
    waiting: dict[int, int] = field(default_factory=dict)  # pair -> letters waiting for a safe filing

    def index(self) -> dict[tuple[str, str], int]:
        return {(p.brain, p.repo): i for i, p in enumerate(self.pairs)}


def mark_spool(fd: int, offset: int, lines: int, previous: SpoolMark | None) -> SpoolMark:
    """The mark of a spool read up to `offset`; chunks `previous` already covered
    (it was verified at the start of this run) are not read again."""
    st = os.fstat(fd)
    known, known_offset = (previous.hashes, previous.offset) if previous else (None, 0)
    hashes = region_hashes(fd, offset, known, known_offset)
    return SpoolMark(st.st_dev, st.st_ino, offset, lines, st.st_size, st.st_mtime_ns, hashes)


def spool_unchanged(mark: SpoolMark, fd: int) -> bool:
    """True when the spool is the same file, only ever appended to since `mark`.

    Untouched since (same size and mtime): one fstat.  Otherwise every byte already
    read is checked against the chunk checksums: comparing only the first and last
    bytes before the offset missed a letter rewritten in place in between (a held
    letter's secret blotted out, same length), and the receipt then kept counting
    the old letter, unlike a first run.
    """
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (mark.dev, mark.ino) or st.st_size < mark.offset:
        return False
    if (st.st_size, st.st_mtime_ns) == (mark.size, mark.mtime_ns):
        return True
    return same_bytes(fd, mark.offset, mark.hashes)


def _checksum(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


class Store:
    """Reads and writes the cursor files in one state directory."""

    def __init__(self, state_dir: str) -> None:
        self.dir = state_dir
        self.json = os.path.join(state_dir, "distribute.json")
        self.log = os.path.join(state_dir, "spool-locations.bin")

    def load(self) -> State | None:
        """The saved state, None when there is none; StateCorrupt when it does not verify."""
        try:
            with os.fdopen(open_fd(self.json), "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateCorrupt(f"{self.json} unreadable: {exc.strerror}") from None
        try:
            doc = orjson.loads(data)
            if doc["v"] != VERSION:
                raise StateCorrupt(f"{self.json} was written by another version")
            # A file that still parses may have been changed all the same (an edit, a
            # flipped bit in a count): taken as it says, it would skew every receipt.
            if doc.pop("sum") != _checksum(orjson.dumps(doc)):
                raise ValueError("checksum mismatch")
            mark = SpoolMark(**doc["mark"]) if doc["mark"] is not None else None
            pairs = [Pair(b, r, route, int(c), int(h)) for b, r, route, c, h in doc["pairs"]]
            state = State(mark, str(doc["roots"]), pairs, int(doc["locations"]),
                          [int(i) for i in doc.get("refiling", [])],
                          {int(i): int(n) for i, n in doc.get("waiting", [])})
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise StateCorrupt(f"{self.json} is corrupt ({exc})") from None
        try:
            size = os.path.getsize(self.log)
        except OSError:
            size = 0
        if size < state.locations * LOCATION.size:
            raise StateCorrupt(f"{self.log} is shorter than {self.json} says")
        return state

    def save(self, state: State) -> None:
        ensure_dir(self.dir)
        doc = {
            "v": VERSION,
            "mark": vars(state.mark) if state.mark else None,
            "roots": state.roots,
            "pairs": [[p.brain, p.repo, p.route, p.count, p.held] for p in state.pairs],
            "locations": state.locations,
            "refiling": state.refiling,
        }
        if state.waiting:  # letters a hook (or git mid-operation) left for a safe filing
            doc["waiting"] = sorted([i, n] for i, n in state.waiting.items())
        doc["sum"] = _checksum(orjson.dumps(doc))
        data = orjson.dumps(doc)
        if _holds(self.json, data):  # a run that found nothing new: no write, no fsync
            return
        atomic_write(self.json, data)

    def append_locations(self, kept: int, records: bytearray) -> None:
        """Append records after the first `kept` (anything beyond is a crashed run's)."""
        ensure_dir(self.dir)
        if not records and kept:
            try:
                if os.stat(self.log).st_size == kept * LOCATION.size:
                    return  # nothing to append, nothing to cut off
            except FileNotFoundError:
                pass
        if kept == 0:
            # A rescan rewrites the log from the start, so the saved cursor stops
            # describing it: remove the cursor first.  A crash from here on then
            # leaves no state (rescanned quietly) rather than a cursor longer than
            # its log, which the next run would report as corrupt.
            try:
                os.unlink(self.json)
            except FileNotFoundError:
                pass
        fd = open_fd(self.log, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.ftruncate(fd, kept * LOCATION.size)
            os.lseek(fd, 0, os.SEEK_END)
            view = memoryview(records)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def locations_of(self, pairs: set[int], count: int) -> list[tuple[int, int, int]]:
        """(pair, offset, length) of every logged letter of these pairs, in spool order."""
        out = []
        with os.fdopen(open_fd(self.log), "rb") as fh:
            data = fh.read(count * LOCATION.size)
        for rec in LOCATION.iter_unpack(data):
            if rec[0] in pairs:
                out.append(rec)
        return out

    def sweep_temp_files(self) -> None:
        """Remove temp files that a run killed mid-rewrite left behind.  Called under
        the distribution lock, so no live writer of these directories owns them."""
        for directory in (self.dir, os.path.join(self.dir, "boxes")):
            try:
                names = os.listdir(directory)
            except OSError:
                continue
            for name in names:
                if name.startswith(TEMP_PREFIX) and name.endswith(".tmp"):
                    try:
                        os.unlink(os.path.join(directory, name))
                    except OSError:
                        pass
