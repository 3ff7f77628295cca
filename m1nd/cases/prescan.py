"""A cheap look at the bytes that arrived since the last escalation pass: could any
of them be a witness?  If not, there is nothing new to escalate and the pass needs no
read model at all, which keeps every filing (the hook path, a first distribution of
a large spool) as cheap as it was.

It is a superset test on raw bytes: a line is parsed only when it holds a marker that
every witness's line must hold (see MARKERS), and a parsed line counts only when
`fingerprints.derive` gives it a fingerprint.  A new backfill rule adds its marker.  What was looked at is remembered per
file (device, inode, size) under `<home>/state/cases/`; a file replaced or shrunk is
looked at again from its start.  A cache: deleting it only makes the next look longer.
"""

from __future__ import annotations

import os

import orjson

from m1nd.cases import fingerprints as fps
from m1nd.fates import is_receipt
from m1nd.fsutil import atomic_write
from m1nd.jsonout import record, utf8_safe
from m1nd.letters import parse
from m1nd.paths import ensure_dir
from m1nd.run import Run

BLOCK = 16 << 20
# Every witness's line holds one of these bytes exactly: a `"kind"` key (the eight, and
# the misdelivery mapping, both need one), a backfill rule's marker, or a `\u` escape
# (which could spell any of them).  (marker, words the lowercased line must also hold)
MARKERS = (
    (b'"kind"', ()),
    (b"\\u", ()),
    (b"Traceback (most recent call last)", ()),  # traceback-crash
    (b'"honesty"', (b"north", b"memor")),  # north-memory-emptiness
)


def _path(run: Run) -> str:
    return os.path.join(run.paths.state, "cases", "looked.json")


def load(run: Run) -> dict:
    try:
        with open(_path(run), "rb") as fh:
            doc = orjson.loads(fh.read())
        return doc if type(doc) is dict else {}
    except (OSError, orjson.JSONDecodeError):
        return {}


def files(run: Run) -> list[str]:
    return [run.paths.spool] + [b.path for b in run.boxes()]


def now(run: Run) -> dict:
    found = {}
    for path in files(run):
        try:
            st = os.stat(path)
        except OSError:
            continue
        found[path] = [st.st_dev, st.st_ino, st.st_size]
    return found


def save(run: Run, looked: dict) -> None:
    try:
        ensure_dir(os.path.dirname(_path(run)))
        atomic_write(_path(run), record(looked), sync=False)  # a box path may not be UTF-8
    except OSError:
        pass


def _line_at(block: bytes, at: int) -> tuple[int, int]:
    start = block.rfind(b"\n", 0, at) + 1
    end = block.find(b"\n", at)
    return start, (len(block) if end < 0 else end)


def _witness_in_block(block: bytes) -> bool:
    seen: set[int] = set()
    for marker, also in MARKERS:
        at = block.find(marker)
        while at >= 0:
            start, end = _line_at(block, at)
            if start not in seen:
                seen.add(start)
                line = block[start:end]
                if not also or all(w in line.lower() for w in also):
                    raw = line.rstrip(b"\r")
                    letter = parse(raw) if raw.strip() else None
                    if (letter is not None and not letter.is_mission and not is_receipt(letter)
                            and fps.derive(letter).fingerprint is not None):
                        return True
            at = block.find(marker, end)
    return False


def witness_in(path: str, start: int, end: int) -> bool:
    """Could a line of `path` in [start, end) be a witness?  Reads whole lines, in blocks."""
    try:
        fh = open(path, "rb")
    except OSError:
        return False
    with fh:
        fh.seek(start)
        at, carry = start, b""
        while at < end:
            chunk = fh.read(min(BLOCK, end - at))
            if not chunk:
                break
            at += len(chunk)
            data = carry + chunk
            cut = data.rfind(b"\n") + 1 if at < end else len(data)
            block, carry = data[:cut], data[cut:]
            if block and _witness_in_block(block):
                return True
        return bool(carry) and _witness_in_block(carry)


def _lines_between(path: str, start: int, end: int) -> int | None:
    """How many `\n` the file has in [start, end), or None when the range does not
    start at a line boundary (a torn line was completed: not bytes of our own)."""
    try:
        with open(path, "rb") as fh:
            if start:
                fh.seek(start - 1)
                if fh.read(1) != b"\n":
                    return None
            fh.seek(start)
            n, at = 0, start
            while at < end:
                chunk = fh.read(min(BLOCK, end - at))
                if not chunk:
                    break
                n += chunk.count(b"\n")
                at += len(chunk)
            return n
    except OSError:
        return None


def anything_new(run: Run, looked: dict, current: dict, appended: dict | None = None) -> bool:
    """True when a file of the union holds bytes not looked at yet that may be a witness.

    `appended` is {box path: letters this distribution appended}: when a box's new bytes
    are exactly those lines, they are spool letters, looked at in the spool already."""
    appended = appended or {}
    spool = run.paths.spool
    ordered = sorted(current.items(), key=lambda kv: kv[0] != spool)  # the spool first
    for path, (dev, ino, size) in ordered:
        old = looked.get(path) or looked.get(utf8_safe(path))  # as saved (jsonout.record)
        start = old[2] if old and old[:2] == [dev, ino] and size >= old[2] else 0
        if start >= size:
            continue
        own = appended.get(path, 0)
        if path != spool and own and (old is None or start > 0) and _lines_between(path, start, size) == own:
            continue  # only the lines this distribution appended: spool letters, looked at there
        if witness_in(path, start, size):
            return True
    return False


def look_at_spool(run: Run, looked: dict) -> tuple[bool, dict]:
    """Look at the spool's bytes not looked at yet (before a distribution files them):
    (a witness may be among them, `looked` with the spool's entry moved to what was seen)."""
    looked = dict(looked)
    path = run.paths.spool
    try:
        st = os.stat(path)
    except OSError:
        return False, looked
    old = looked.get(path)
    start = old[2] if old and old[:2] == [st.st_dev, st.st_ino] and st.st_size >= old[2] else 0
    found = start < st.st_size and witness_in(path, start, st.st_size)
    looked[path] = [st.st_dev, st.st_ino, st.st_size]
    return found, looked
