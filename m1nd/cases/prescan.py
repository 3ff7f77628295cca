"""A cheap look at the bytes that arrived since the last escalation pass: could any
of them be a witness?  If not, there is nothing new to escalate and the pass needs no
read model at all, which keeps every filing (the hook path, a first distribution of
a large spool) as cheap as it was.

It is a superset test on raw bytes: a line is parsed only when its lowercased bytes
hold a marker that every witness's line must hold (a kind of the eight, a mapped
misdelivery kind with `memory_misdelivery`, each backfill rule's words, or a `\\u`
escape, which could spell any of them), and a parsed line counts only when
`fingerprints.derive` gives it a fingerprint.  What was looked at is remembered per
file (device, inode, size) under `<home>/state/cases/`; a file replaced or shrunk is
looked at again from its start.  A cache: deleting it only makes the next look longer.
"""

from __future__ import annotations

import os

import orjson

from m1nd.cases import fingerprints as fps
from m1nd.fates import is_receipt
from m1nd.fsutil import atomic_write
from m1nd.letters import parse
from m1nd.paths import ensure_dir
from m1nd.run import Run

BLOCK = 16 << 20
_ALWAYS = tuple(k.encode() for k in fps.VOCABULARY) + (b"traceback (most recent call last)", b"\\u")
# (marker, words the same line must also hold)
_WITH = tuple((k.encode(), (b"memory_misdelivery",)) for k in fps.MISDELIVERY_KINDS) + (
    (b"north", (b"honesty", b"memor")),
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
        atomic_write(_path(run), orjson.dumps(looked), sync=False)
    except OSError:
        pass


def _line_at(block: bytes, at: int) -> tuple[int, int]:
    start = block.rfind(b"\n", 0, at) + 1
    end = block.find(b"\n", at)
    return start, (len(block) if end < 0 else end)


def _witness_in_block(block: bytes) -> bool:
    lowered = block.lower()
    seen: set[int] = set()

    def check(start: int, end: int) -> bool:
        if start in seen:
            return False
        seen.add(start)
        raw = block[start:end].rstrip(b"\r")
        letter = parse(raw) if raw.strip() else None
        return (letter is not None and not letter.is_mission and not is_receipt(letter)
                and fps.derive(letter).fingerprint is not None)

    for marker in _ALWAYS:
        at = lowered.find(marker)
        while at >= 0:
            start, end = _line_at(lowered, at)
            if check(start, end):
                return True
            at = lowered.find(marker, end)
    for marker, also in _WITH:
        at = lowered.find(marker)
        while at >= 0:
            start, end = _line_at(lowered, at)
            line = lowered[start:end]
            if all(w in line for w in also) and check(start, end):
                return True
            at = lowered.find(marker, end)
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


def anything_new(run: Run, looked: dict, current: dict) -> bool:
    """True when a file of the union holds bytes not looked at yet that may be a witness."""
    for path, (dev, ino, size) in current.items():
        old = looked.get(path)
        start = old[2] if old and old[:2] == [dev, ino] and size >= old[2] else 0
        if start < size and witness_in(path, start, size):
            return True
    return False
