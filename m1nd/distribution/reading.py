"""Reading: the spool bytes that are new since the cursor (cursor.py), letters read
back from their logged spool locations, and the unfinished last line.

Each letter read is counted to its (brain, repo) pair, its location logged, its
digest kept for the coverage ledger, and handed to the filer; letters bound for no
box yet are only checked for secrets (held letters are counted apart).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Callable

from m1nd.cursor import LOCATION, Pair, State, Store
from m1nd.distribution.filing import Filer
from m1nd.distribution.routing_pass import Router, route_key
from m1nd.letters import iter_raw, load
from m1nd.routing import MEDULLA, PROJECT
from m1nd.secrets import compiling, held_in_batch, likely_secret, preload

PRELOAD_BYTES = 4 << 20  # a read this large compiles the secret rules in a thread meanwhile
PENDING_BATCH = 4096  # letters bound for no box yet, checked for secrets in one batch
PROGRESS_EVERY = 1 << 16  # lines between progress callbacks

Progress = Callable[[int, int], None]


@dataclass
class Found:
    """What reading collects besides the letters it hands to the filer."""

    records: bytearray = field(default_factory=bytearray)  # a LOCATION record of each letter read
    seen: dict[bytes, None] = field(default_factory=dict)  # sha256 of each letter read this run, once each (the coverage ledger)
    malformed: list[int] = field(default_factory=list)  # malformed spool lines read this run


@dataclass(frozen=True)
class Stretch:
    """The stretch of the spool a read went over."""

    first: int  # where it started
    offset: int  # the end of its last whole line
    lines: int  # lines up to `offset`
    size: int  # the spool's size when it started
    tail: tuple[bytes, int] | None  # a final line without `\n`, and its number


class _Unrouted:
    """Letters bound for no box yet: their held ones are counted in batches (a flush
    counts those of boxes)."""

    def __init__(self, pairs: list[Pair]) -> None:
        self.pairs = pairs
        self.letters: list[tuple[int, bytes]] = []  # (pair, raw)

    def add(self, i: int, raw: bytes) -> None:
        self.letters.append((i, raw))
        if len(self.letters) >= PENDING_BATCH and (len(self.letters) >= 8 * PENDING_BATCH or not compiling()):
            self.count_held()

    def count_held(self) -> None:
        for j in held_in_batch([r for _, r in self.letters]):
            self.pairs[self.letters[j][0]].held += 1
        self.letters.clear()


def read_new(fh, fd: int, state: State, router: Router, filer: Filer, found: Found,
             progress: Progress | None) -> Stretch:
    """Read the spool from the state's mark on, filing each letter as it comes."""
    pairs = state.pairs
    index = state.index()
    routes = [router.route_of(p) for p in pairs]
    resolve = router.run.roots.resolve
    records, seen, malformed = found.records, found.seen, found.malformed
    pack = LOCATION.pack
    sha256 = hashlib.sha256
    first = offset = state.mark.offset if state.mark else 0
    n = lines = state.mark.lines if state.mark else 0
    size = os.fstat(fd).st_size
    tail = None
    if size - offset >= PRELOAD_BYTES:
        preload()
    unrouted = _Unrouted(pairs)
    for start, end, raw, terminated in iter_raw(fh, offset):
        n += 1
        if not terminated:
            tail = (raw, n)
            break
        if not raw or raw.isspace():
            offset, lines = end, n
            continue
        obj = load(raw)
        if obj is None:  # malformed: never filed (doctor names it)
            malformed.append(n)
            offset, lines = end, n
            continue
        key = (obj.get("brain", ""), obj.get("repo", ""))
        i = index.get(key)
        if i is None:
            i = index[key] = len(pairs)
            pair = Pair(key[0], key[1], route_key(resolve(*key)))
            pairs.append(pair)
            routes.append(router.route_of(pair))
        pairs[i].count += 1
        kind, box = routes[i]
        records += pack(i, start, len(raw))
        digest = sha256(raw).digest()
        if obj.get("kind") != "mission":
            seen[digest] = None
        if kind == MEDULLA:
            filer.add(box, digest, raw, -1)
        elif kind == PROJECT:
            filer.add(box, digest, raw, i)
        else:
            unrouted.add(i, raw)
        offset, lines = end, n
        if progress is not None and n % PROGRESS_EVERY == 0:
            progress(end, size)
    if unrouted.letters:
        unrouted.count_held()
    return Stretch(first, offset, lines, size, tail)


def file_tail(tail: tuple[bytes, int], filer: Filer, router: Router) -> tuple[str, bool, str] | None:
    """A final line without `\\n`: a letter if it parses (filed and counted, but
    not recorded in the state, since a writer may still be appending), else an
    unfinished tail.  Returns (route kind, held, pending name) for a letter."""
    raw, _ = tail
    if not raw or raw.isspace():
        return None
    obj = load(raw)
    if obj is None:
        return None
    route = router.run.roots.resolve(obj.get("brain", ""), obj.get("repo", ""))
    lid = hashlib.sha256(raw).digest()
    if route.kind == MEDULLA:
        filer.add(router.medulla, lid, raw, -1)
        return MEDULLA, False, ""
    held = likely_secret(raw) is not None
    if route.kind == PROJECT and not held:
        filer.add(router.root_box(route.root.path), lid, raw, -1)
    return route.kind, held, route.name


def read_back(fd: int, store: Store, state: State, moved: set[int], kept: int,
              notes: list[str]) -> list[tuple[int, bytes]] | None:
    """Read back the letters of the moved pairs from their logged locations: (pair, raw).

    The location log carries no checksum, so each record is checked against the
    spool before anything is filed: it must point at one whole line that is a
    letter of its own pair.  A record that does not (a log corrupted or left by
    another state) would file garbage, or another pair's letter, into a box: the
    log is reported (in `notes`) and the spool rescanned instead.  None means: rescan.
    """
    size = os.fstat(fd).st_size
    try:
        records = store.locations_of(moved, kept)
    except OSError as exc:
        notes.append(f"distribution state {store.log} unreadable ({exc.strerror}): rescanned the spool")
        return None
    pairs = state.pairs
    refile = []
    for i, start, length in records:
        before = 1 if start else 0
        data = os.pread(fd, length + before + 2, start - before) if start + length < size else b""
        raw = data[before:before + length]
        end = data[before + length:]
        obj = load(raw) if len(raw) == length and raw.strip() else None
        whole = (not before or data[:1] == b"\n") and (end[:1] == b"\n" or end[:2] == b"\r\n")
        if obj is None or not whole or (obj.get("brain", ""), obj.get("repo", "")) != (pairs[i].brain, pairs[i].repo):
            notes.append(f"distribution state {store.log} does not match the spool: rescanned the spool")
            return None
        refile.append((i, raw))
    return refile
