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

The file's format, its readers and its append are ledgerfile.py's (each name is also
asked of this module); recording, and the membership index that answers which letters
are known without reading the whole ledger, are here.
"""

from __future__ import annotations

import os
from typing import Iterable

from m1nd.errors import M1ndError
from m1nd.fsutil import lock_for, open_regular
from m1nd.ledgerfile import (  # noqa: F401  (the ledger's readers, asked of this module)
    LEDGER_NAME, _LINE, _LINE_LEN, Entry, _append, _line, _parse_block, _read, _tail, _tail_digests, first_entry,
    ledger_path, load, read_from, records_dir, tail_lines)
from m1nd.paths import Paths, ensure_dir, ensure_home

# -- the membership index (derived, under <home>/state/; deleting it loses nothing) --

_INDEX_MAGIC = b"M1NDLIX1"
_HEAD = 8 + 8 + 32  # magic, covered length, sha256 of the last indexed line


def _index_path(paths: Paths) -> str:
    return os.path.join(paths.state, "ledger-index")


def _last_line_hash(data_end: bytes) -> bytes:
    import hashlib

    return hashlib.sha256(data_end).digest()


_REBUILD_CHUNK = 1 << 23  # bytes of ledger parsed at a time when the index is rebuilt


def _rebuild_index(paths: Paths) -> list[bytes]:
    """Write the membership index from the whole ledger and return its sorted keys.

    The ledger is parsed a chunk at a time and only each entry's digest (32 bytes) is
    kept, so a million-entry ledger costs tens of MB, not a dict of entries.  A chunk
    that fails to parse is parsed again with everything before it, for the error's
    true line number (fails closed, as every read of the ledger does)."""
    path = ledger_path(paths)
    keys: list[bytes] = []
    end = 0
    try:
        with open(path, "rb") as fh:
            carry = b""
            while True:
                chunk = fh.read(_REBUILD_CHUNK)
                data = carry + chunk
                whole = data.rfind(b"\n") + 1
                if whole:
                    try:
                        block = _parse_block(data[:whole], path, end)
                    except M1ndError:
                        _read(path)  # raises with the line number counted from the start
                        raise
                    keys.extend(bytes.fromhex(e.digest) for _, e in block)
                    end += whole
                    del block
                carry = data[whole:]
                if not chunk:
                    break
            fh.seek(max(end - _LINE_LEN - 1, 0))
            last = fh.read(end - max(end - _LINE_LEN - 1, 0))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise M1ndError(f"cannot read the coverage ledger {path}: {exc.strerror}") from None
    keys.sort()
    if keys:
        _build_sorted_index(paths, keys, end, last)
    return keys


def _build_sorted_index(paths: Paths, keys: list[bytes], covered: int, last_line: bytes) -> None:
    from itertools import chain

    from m1nd.fsutil import atomic_write_parts

    head = _INDEX_MAGIC + covered.to_bytes(8, "little") + _last_line_hash(last_line)
    parts = chain((head,), (b"".join(keys[at:at + SEEN_BLOCK]) for at in range(0, len(keys), SEEN_BLOCK)))
    try:
        ensure_dir(paths.state)
        atomic_write_parts(_index_path(paths), parts, sync=False)
    except OSError:
        pass  # a cache: the next reader rebuilds it


MERGE_TAIL = 16_384  # ledger lines past the index that are merged into it (each check parses at most about this many)


def _known(paths: Paths, digests: list[str]) -> set[str]:
    """Which of these digests the ledger already holds, without reading all of it
    when the index is current: binary search in the sorted index, then the lines
    appended since it was built."""
    covered, table = _open_index(paths)
    n = (len(table) - _HEAD) // 32 if table is not None else 0
    if not covered:
        if table is not None:
            table.close()
        return _in_sorted(_rebuild_index(paths), digests)
    if tail_lines(paths, covered) > MERGE_TAIL and table is not None and _merge_tail(paths, table, n, covered):
        table.close()
        covered, table = _open_index(paths)
        n = (len(table) - _HEAD) // 32 if table is not None else 0
    fresh = _tail_digests(paths, covered)
    found = {d for d in digests if d.encode() in fresh}
    if table is not None:
        found |= _in_table(table, n, [d for d in digests if d not in found])
        table.close()
    return found


def _merge_tail(paths: Paths, table, n: int, covered: int) -> bool:
    """Write the index again with the ledger's tail past `covered` merged in: the
    index's runs between the tail's keys are copied as they are (no parse of the
    ledger, one pass over the index), so the tail a check reads stays short while
    letters keep arriving.  False when it could not be written (a cache: the tail
    is then read as it is)."""
    from bisect import bisect_left
    from binascii import unhexlify

    from m1nd.fsutil import atomic_write_parts

    fresh, end = _tail(paths, covered)
    try:
        with open(ledger_path(paths), "rb") as lf:
            lf.seek(max(end - _LINE_LEN - 1, 0))
            last = lf.read(end - max(end - _LINE_LEN - 1, 0))
    except OSError:
        return False
    if not last.endswith(b"\n"):
        return False

    class View:
        def __len__(self):
            return n

        def __getitem__(self, i):
            return table[_HEAD + 32 * i:_HEAD + 32 * i + 32]

    def parts():
        out = bytearray(_INDEX_MAGIC + end.to_bytes(8, "little") + _last_line_hash(last))
        view, at = View(), 0
        for key in sorted(map(unhexlify, fresh)):
            # sha256 digests are uniform: a key's place is near its share of the range
            guess = min(max((int.from_bytes(key[:8], "big") * n) >> 64, at), n)
            lo, hi = max(guess - 1024, at), min(guess + 1024, n)
            if lo > at and view[lo - 1] >= key:
                lo, hi = at, lo
            elif hi < n and view[hi] < key:
                lo, hi = hi, n
            i = bisect_left(view, key, lo, hi)
            out += table[_HEAD + 32 * at:_HEAD + 32 * i]
            out += key
            at = i
            if len(out) >= 1 << 20:
                yield bytes(out)
                out.clear()
        out += table[_HEAD + 32 * at:]
        yield bytes(out)

    try:
        ensure_dir(paths.state)
        atomic_write_parts(_index_path(paths), parts(), sync=False)
    except OSError:
        return False
    return True


def _open_index(paths: Paths):
    """(ledger bytes the index covers, its keys mapped in); (0, None) when there is no
    index, or it is not the current ledger's (that is then read whole)."""
    import mmap

    try:
        fh = open_regular(_index_path(paths))  # a FIFO in its place: no index, never a hang
    except OSError:
        return 0, None
    if fh is None:
        return 0, None
    covered = 0
    table = None
    with fh:
        head = fh.read(_HEAD)
        size = os.fstat(fh.fileno()).st_size
        if head[:8] == _INDEX_MAGIC and (size - _HEAD) % 32 == 0 and len(head) == _HEAD:
            covered = int.from_bytes(head[8:16], "little")
            try:
                with open(ledger_path(paths), "rb") as lf:
                    lf.seek(max(covered - _LINE_LEN - 1, 0))
                    before = lf.read(covered - max(covered - _LINE_LEN - 1, 0))
            except OSError:
                before = b""
            if covered and (not before.endswith(b"\n") or _last_line_hash(before) != head[16:48]):
                covered = 0  # the ledger is not the one indexed: read it whole
            elif covered and size > _HEAD:
                table = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    return covered, table


def _in_sorted(keys: list[bytes], digests: list[str]) -> set[str]:
    """Those of these digests among the sorted keys."""
    from bisect import bisect_left

    found = set()
    for d in digests:
        key = bytes.fromhex(d)
        i = bisect_left(keys, key)
        if i < len(keys) and keys[i] == key:
            found.add(d)
    return found


def _in_table(table, n: int, digests: list[str]) -> set[str]:
    """Those of these digests among the `n` sorted keys of the mapped index."""
    from bisect import bisect_left, bisect_right

    class View:
        def __len__(self):
            return n

        def __getitem__(self, i):
            return table[_HEAD + 32 * i:_HEAD + 32 * i + 32]

    found: set[str] = set()
    view = View()
    pending = sorted(bytes.fromhex(d) for d in digests)
    if pending:
        lo, hi = bisect_left(view, pending[0]), bisect_right(view, pending[-1])
        if hi - lo <= 32 * len(pending):
            # many keys in a narrow stretch (a block of sorted keys, _known_of): that
            # stretch as a list, searched at C speed, costs one slice per entry
            stretch = [table[_HEAD + 32 * i:_HEAD + 32 * i + 32] for i in range(lo, hi)]
            for key in pending:
                i = bisect_left(stretch, key)
                if i < len(stretch) and stretch[i] == key:
                    found.add(key.hex())
        else:
            for key in pending:
                i = bisect_left(view, key, lo, hi)
                if i < n and view[i] == key:
                    found.add(key.hex())
    return found


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


SEEN_BLOCK = 1 << 13  # entries per write (and per membership check) when a filing records what it read


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
