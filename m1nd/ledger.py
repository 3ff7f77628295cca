"""The coverage ledger (reports contract section 2): when each letter was first seen.

`<home>/records/ledger.jsonl` holds one line per distinct letter, in the order they
were first seen: `{"id": …, "digest": …, "observed_at": …}`.  Letters are keyed by the
full sha256 of their raw bytes, so two letters whose 12-hex ids collide stay two
entries.  The file is durable (under `records/`, not `state/`): deleting the state
never makes a letter new again.  It only grows; recording is idempotent.

The file is read whole and fails closed: a line that does not parse is an error,
never taken as absent.  The one exception is an unterminated last line, which is an
append cut short by a crash (nothing was recorded by it): readers skip it and the next
writer, holding the lock, cuts it off before appending.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable

import orjson

from m1nd.errors import M1ndError
from m1nd.fsutil import fsync_dir, lock_for, write_all
from m1nd.paths import Paths, ensure_dir, ensure_home

LEDGER_NAME = "ledger.jsonl"
_PREFIX = b'{"id":"'
_LINE_LEN = len(b'{"id":"","digest":"","observed_at":""}') + 12 + 64 + 20
_STAMP = re.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
_HEX = re.compile(rb"^[0-9a-f]+$")


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    digest: str
    observed_at: str  # YYYY-MM-DDTHH:MM:SSZ


def records_dir(paths: Paths) -> str:
    return os.path.join(paths.home, "records")


def ledger_path(paths: Paths) -> str:
    return os.path.join(records_dir(paths), LEDGER_NAME)


def _line(entry: Entry) -> bytes:
    return b'{"id":"%s","digest":"%s","observed_at":"%s"}\n' % (
        entry.id.encode(), entry.digest.encode(), entry.observed_at.encode())


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
    number = 0
    for raw in data[:whole].split(b"\n")[:-1]:
        number += 1
        entry = _parse(raw, path, number)
        entries.setdefault(entry.digest, entry)
    return entries, whole


def load(paths: Paths) -> dict[str, Entry]:
    return _read(ledger_path(paths))[0]


def record(paths: Paths, letters: Iterable[tuple[str, str]], observed_at: str) -> list[Entry]:
    """Record `(id, digest)` pairs first seen now; return the entries added.

    Lock, re-read, append: concurrent readers of the same letters add each once.
    """
    wanted = list(letters)
    path = ledger_path(paths)
    known = _read(path)[0] if wanted else {}
    if all(digest in known for _, digest in wanted):
        return []
    ensure_home(paths)
    ensure_dir(records_dir(paths))
    with lock_for(paths.locks, "ledger", path):
        known, whole = _read(path)
        added: list[Entry] = []
        fresh: set[str] = set()
        for lid, digest in wanted:
            if digest not in known and digest not in fresh:
                fresh.add(digest)
                added.append(Entry(lid, digest, observed_at))
        if not added:
            return []
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            if os.fstat(fd).st_size != whole:
                os.ftruncate(fd, whole)  # an append cut short by a crash: it recorded nothing
            write_all(fd, b"".join(_line(e) for e in added))
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(records_dir(paths))
        return added
