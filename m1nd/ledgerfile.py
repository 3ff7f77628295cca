"""The coverage ledger's file (reports contract section 2): the format of its lines,
reading them, and appending whole lines.

One line per distinct letter, `{"id": …, "digest": …, "observed_at": …}`, in the order
first seen.  Every read fails closed: a line that does not parse is an error naming
its line number, never taken as absent; only an unterminated last line (an append cut
short by a crash) is skipped, and cut off by the next append.  Recording, and the membership index, are ledger.py's.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, NamedTuple

import orjson

from m1nd.errors import M1ndError
from m1nd.fsutil import fsync_dir, write_all
from m1nd.paths import Paths

LEDGER_NAME = "ledger.jsonl"
_PREFIX = b'{"id":"'
_LINE_LEN = len(b'{"id":"","digest":"","observed_at":""}') + 12 + 64 + 20
_STAMP = re.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
_HEX = re.compile(rb"^[0-9a-f]+$")
_LINE_RE = re.compile(rb'\{"id":"([0-9a-f]{12})","digest":"(([0-9a-f]{12})[0-9a-f]{52})",'
                      rb'"observed_at":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"\}\n')


class Entry(NamedTuple):
    id: str
    digest: str
    observed_at: str  # YYYY-MM-DDTHH:MM:SSZ


def records_dir(paths: Paths) -> str:
    return os.path.join(paths.home, "records")


def ledger_path(paths: Paths) -> str:
    return os.path.join(records_dir(paths), LEDGER_NAME)


_LINE = b'{"id":"%s","digest":"%s","observed_at":"%s"}\n'  # an entry, as `record` and `record_seen` write it


def _line(entry: Entry) -> bytes:
    return _LINE % (entry.id.encode(), entry.digest.encode(), entry.observed_at.encode())


def _parse(raw: bytes, path: str, number: int) -> Entry:
    if len(raw) == _LINE_LEN and raw.startswith(_PREFIX) and raw[19:31] == b'","digest":"':
        lid, digest, stamp = raw[7:19], raw[31:95], raw[112:132]
        if raw[95:112] == b'","observed_at":"' and raw[132:] == b'"}':
            ok = _HEX.match(lid) and _HEX.match(digest) and _STAMP.match(stamp)
            if ok and digest[:12] == lid:
                return Entry(lid.decode(), digest.decode(), stamp.decode())
    try:
        obj = orjson.loads(raw)
        entry = Entry(obj["id"], obj["digest"], obj["observed_at"])
        valid = (isinstance(entry.id, str) and isinstance(entry.digest, str) and isinstance(entry.observed_at, str)
                 and len(entry.digest) == 64 and entry.digest[:12] == entry.id
                 and _STAMP.match(entry.observed_at.encode()))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        valid = False
    if not valid:
        raise M1ndError(f"the coverage ledger {path} is damaged at line {number}: refusing to go on "
                        "(restore it from a backup; it is never rebuilt, so letters are never reported twice)")
    return entry


def _parse_block(data: bytes, path: str, base: int) -> list[tuple[int, Entry]]:
    """(offset after the line, entry) for every whole line of `data`, which starts at
    byte `base` of the ledger.  The usual line is matched in bulk; any other is parsed
    on its own, and one that is not an entry fails closed with its line number."""
    from m1nd.fsutil import gc_paused

    with gc_paused():  # a million small tuples: the cyclic collector would only slow this down
        return _parse_all(data, path, base)


def _parse_all(data: bytes, path: str, base: int) -> list[tuple[int, Entry]]:
    out: list[tuple[int, Entry]] = []
    append = out.append
    pos = 0
    end = len(data)
    while pos < end:
        for m in _LINE_RE.finditer(data, pos):
            if m.start() != pos:
                break
            lid, digest, prefix, stamp = m.groups()
            if prefix != lid:
                break
            pos = m.end()
            append((base + pos, Entry(lid.decode(), digest.decode(), stamp.decode())))
        if pos >= end:
            break
        stop = data.find(b"\n", pos)
        stop = end if stop < 0 else stop
        number = data.count(b"\n", 0, pos) + 1  # within this block; callers add what came before
        append((base + stop + 1, _parse(data[pos:stop], path, number)))
        pos = stop + 1
    return out


def _read(path: str) -> tuple[dict[str, Entry], int]:
    """Entries by digest, in ledger order, and the byte length of the whole lines."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return {}, 0
    except OSError as exc:
        raise M1ndError(f"cannot read the coverage ledger {path}: {exc.strerror}") from None
    entries: dict[str, Entry] = {}
    whole = data.rfind(b"\n") + 1
    for _, entry in _parse_block(data[:whole], path, 0):
        entries.setdefault(entry.digest, entry)
    return entries, whole


def load(paths: Paths) -> dict[str, Entry]:
    return _read(ledger_path(paths))[0]


def read_from(paths: Paths, offset: int) -> tuple[list[tuple[int, Entry]], int]:
    """(byte offset just after each line, entry) for every whole line from `offset`,
    and the offset after the last whole line.  `offset` must be a line boundary."""
    path = ledger_path(paths)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if offset > size:
                raise M1ndError(f"the coverage ledger {path} is shorter than a report cursor says: "
                                "refusing to go on (restore it from a backup)")
            if offset:
                fh.seek(offset - 1)
                if fh.read(1) != b"\n":
                    raise M1ndError(f"the coverage ledger {path} does not match a report cursor: refusing to go on")
            data = fh.read()
    except FileNotFoundError:
        if offset:
            raise M1ndError(f"the coverage ledger {path} is missing but reports were made from it: "
                            "refusing to go on (restore it from a backup)") from None
        return [], 0
    except OSError as exc:
        raise M1ndError(f"cannot read the coverage ledger {path}: {exc.strerror}") from None
    whole = data.rfind(b"\n") + 1
    return _parse_block(data[:whole], path, offset), offset + whole


# Whole lines exactly as m1nd writes them (the id is the digest's first 12 digits):
# checked at C speed, with no object made per line.
_LINES_RE = re.compile(rb'(?:\{"id":"([0-9a-f]{12})","digest":"\1[0-9a-f]{52}",'
                       rb'"observed_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"\}\n)*+')
# The digests of the ledger's tail past its index, and where its whole lines end, for
# the ledger as it stands (one filing asks twice: before taking the ledger's lock and
# again under it).
_TAIL: dict[tuple, tuple[set[bytes], int]] = {}


def _tail(paths: Paths, covered: int) -> tuple[set[bytes], int]:
    """The digests (hex, as bytes) of the ledger lines past `covered`, and the byte
    offset after the last whole line.

    Lines as m1nd writes them all have one length: once every line is checked to be
    one, their digests are sliced out at a fixed place (a tail of 100,000 lines costs
    tens of milliseconds, not a parse of each into an entry).  A tail with any other
    line is read line by line, and a damaged one fails closed as every read does."""
    path = ledger_path(paths)
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, covered)
            if key in _TAIL:
                return _TAIL[key]
            fh.seek(covered)
            data = fh.read()
    except OSError:
        data = None
    step = _LINE_LEN + 1
    if data is not None and len(data) % step == 0 and _LINES_RE.fullmatch(data):
        found = {data[at + 31:at + 95] for at in range(0, len(data), step)}, covered + len(data)
    else:
        entries, end = read_from(paths, covered)
        found = {e.digest.encode() for _, e in entries}, end
        key = None  # not kept: a ledger in an unusual state is read again
    _TAIL.clear()
    if key is not None:
        _TAIL[key] = found
    return found


def _tail_digests(paths: Paths, covered: int) -> set[bytes]:
    """The digests (hex, as bytes) of the ledger lines past `covered` (see _tail)."""
    return _tail(paths, covered)[0]


def tail_lines(paths: Paths, covered: int) -> int:
    """About how many ledger lines lie past the `covered` bytes (lines have one length)."""
    try:
        return max(0, os.stat(ledger_path(paths)).st_size - covered) // (_LINE_LEN + 1)
    except OSError:
        return 0


def first_entry(paths: Paths) -> Entry | None:
    path = ledger_path(paths)
    try:
        with open(path, "rb") as fh:
            line = fh.readline()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise M1ndError(f"cannot read the coverage ledger {path}: {exc.strerror}") from None
    return _parse(line[:-1], path, 1) if line.endswith(b"\n") else None


def _append(paths: Paths, blocks: Iterable[bytes]) -> int:
    """Append these blocks of whole lines to the ledger (call under its lock), after
    cutting off an append a crash left unfinished; fsynced.  Returns the size before."""
    path = ledger_path(paths)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        size = os.fstat(fd).st_size
        whole = size
        if size:
            # an append cut short by a crash recorded nothing: cut it off
            last = os.pread(fd, min(size, _LINE_LEN + 1), max(size - _LINE_LEN - 1, 0))
            if not last.endswith(b"\n"):
                whole = size - (len(last) - (last.rfind(b"\n") + 1))
                os.ftruncate(fd, whole)
        for block in blocks:
            write_all(fd, block)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(records_dir(paths))
    return whole
