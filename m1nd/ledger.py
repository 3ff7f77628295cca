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

The file's format, its readers and its append are ledgerfile.py's, the membership
index that answers which letters are known without reading the whole ledger is
ledgerindex.py's (each name is also asked of this module); recording is here.
"""

from __future__ import annotations

import os
from typing import Iterable

from m1nd.fsutil import lock_for
from m1nd.ledgerfile import (  # noqa: F401  (the ledger's readers, asked of this module)
    LEDGER_NAME, _LINE, _LINE_LEN, Entry, _append, _line, _parse_block, _read, _tail, _tail_digests, first_entry,
    ledger_path, load, read_from, records_dir, tail_lines)
from m1nd.ledgerindex import (  # noqa: F401  (the membership index, asked of this module)
    MERGE_TAIL, SEEN_BLOCK, _HEAD, _build_sorted_index, _known, _open_index)
from m1nd.paths import Paths, ensure_dir, ensure_home


def record(paths: Paths, letters: Iterable[tuple[str, str]], observed_at: str,
           create_home: bool = False) -> list[Entry]:
    """Record `(id, digest)` pairs first seen now; return the entries added.

    Lock, re-check, append: concurrent readers of the same letters add each once.
    A read never creates the home (a read-only sweep on a fresh machine leaves no
    trace): without one, nothing is recorded unless `create_home` (the report
    commands, which keep their records there anyway); the next recording read offers
    the same letters again.
    """
    wanted = list(dict.fromkeys(letters))
    if not wanted:
        return []
    if not create_home and not os.path.isdir(paths.home):
        return []
    if len(_known(paths, [d for _, d in wanted])) == len({d for _, d in wanted}):
        return []
    if create_home:
        ensure_home(paths)
    # A read of an existing home writes only under records/ and state/ (the read-only
    # sweep's promise): the home's .gitignore is left to the next filing write.
    ensure_dir(records_dir(paths))
    path = ledger_path(paths)
    with lock_for(paths.locks, "ledger", path):
        known = _known(paths, [d for _, d in wanted])
        added: list[Entry] = []
        fresh: set[str] = set()
        for lid, digest in wanted:
            if digest not in known and digest not in fresh:
                fresh.add(digest)
                added.append(Entry(lid, digest, observed_at))
        if not added:
            return []
        _append(paths, [b"".join(_line(e) for e in added)])
        return added




def _known_of(paths: Paths, digests: list[bytes]) -> set[bytes]:
    """`_known` for digests as bytes, asked in blocks (a million hex strings at once
    would be the largest thing a first filing holds); none without a ledger."""
    fresh = set(_fresh_of(paths, digests))
    return {d for d in digests if d not in fresh}


def _fresh_of(paths: Paths, digests: list[bytes]) -> list[bytes]:
    """Those of these distinct digests the ledger does not hold yet, in their order.
    Only the fresh ones are collected (a filing whose letters are all known again,
    after its state was deleted, holds no second set of a million digests)."""
    try:
        if os.stat(ledger_path(paths)).st_size == 0:
            return digests
    except FileNotFoundError:
        return digests
    fresh: set[bytes] = set()
    ordered = sorted(digests)  # each block then meets one narrow stretch of the sorted index
    for at in range(0, len(ordered), SEEN_BLOCK):
        block = ordered[at:at + SEEN_BLOCK]
        hexes = [d.hex() for d in block]
        known = _known(paths, hexes)
        fresh.update(d for d, h in zip(block, hexes) if h not in known)
    del ordered
    if len(fresh) == len(digests):
        return digests
    return [d for d in digests if d in fresh]


def record_seen(paths: Paths, digests: Iterable[bytes], observed_at: str) -> int:
    """`record` for a filing's letters, given as distinct sha256 digests (bytes) in the
    order read: the same lines `record` writes for them, built and written in blocks so
    that a large first filing holds no second copy of what it read.  Returns how many
    were added.  Into a ledger that was empty, the membership index is written at once
    (it is exactly the sorted digests), so the next check need not read the ledger back."""
    from binascii import hexlify

    wanted = list(digests if isinstance(digests, dict) else dict.fromkeys(digests))
    if not wanted or not os.path.isdir(paths.home):
        return 0
    if not _fresh_of(paths, wanted):
        return 0
    ensure_dir(records_dir(paths))
    path = ledger_path(paths)
    stamp = observed_at.encode()
    with lock_for(paths.locks, "ledger", path):
        fresh = _fresh_of(paths, wanted)  # again, under the lock
        if not fresh:
            return 0

        def blocks():
            for at in range(0, len(fresh), SEEN_BLOCK):
                yield b"".join(_LINE % (h[:12], h, stamp)
                               for h in map(hexlify, fresh[at:at + SEEN_BLOCK]))

        before = _append(paths, blocks())
        if before == 0:
            with open(path, "rb") as lf:
                end = os.fstat(lf.fileno()).st_size
                lf.seek(max(end - _LINE_LEN - 1, 0))
                _build_sorted_index(paths, sorted(fresh), end, lf.read())
        return len(fresh)
