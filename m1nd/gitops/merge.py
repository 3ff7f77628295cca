"""`m1nd merge-driver BASE OURS THEIRS`: a box merges as the union of its letters.

Git calls the driver with three temporary files and takes the result from OURS.  The
result holds each distinct line once: first OURS' lines in order, then THEIRS' lines
not yet present, in order, then BASE's lines not yet present (a box only grows, so a
line one side deleted comes back).  A letter is compared by its raw bytes (the full
sha256, not the 12-hex id two different letters can share); any other line
(malformed, a conflict marker, a torn tail) by its exact bytes.  Blank lines are
dropped.  The result ends with `\\n`, replaces OURS atomically, and the driver exits 0:
it never writes conflict markers.
"""

from __future__ import annotations

import hashlib
import os
from typing import Iterable

from m1nd.fsutil import atomic_write
from m1nd.letters import is_blank, parse


def _lines(data: bytes) -> Iterable[bytes]:
    """The lines of a file as they are stored (a trailing `\\r` kept), blanks dropped."""
    for chunk in data.split(b"\n"):
        raw = chunk[:-1] if chunk.endswith(b"\r") else chunk
        if not is_blank(raw):
            yield chunk


def _key(line: bytes) -> tuple[str, bytes | str]:
    raw = line[:-1] if line.endswith(b"\r") else line
    letter = parse(raw)
    if letter is not None:
        return ("letter", hashlib.sha256(raw).digest())
    return ("bytes", line)


def union(ours: bytes, theirs: bytes, base: bytes) -> bytes:
    """The merged box: OURS in order, then what THEIRS adds, then what BASE adds."""
    seen: set[tuple[str, bytes | str]] = set()
    out: list[bytes] = []
    for data in (ours, theirs, base):
        for line in _lines(data):
            key = _key(line)
            if key not in seen:
                seen.add(key)
                out.append(line)
    return b"".join(line + b"\n" for line in out)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:  # git gives an empty file, but be lenient
        return b""


def merge_files(base: str, ours: str, theirs: str) -> int:
    """Merge into OURS; returns the number of lines in the result."""
    result = union(_read(ours), _read(theirs), _read(base))
    try:
        mode = os.stat(ours).st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    atomic_write(ours, result, mode=mode)
    return result.count(b"\n")
