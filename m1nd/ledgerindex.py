"""The coverage ledger's membership index: which letters the ledger already holds,
answered without reading the whole ledger.

`<home>/state/ledger-index` (derived: deleting it loses nothing) is a 56-byte head
(magic, the ledger bytes it covers, the number of keys, the sha256 of the last covered
line) and the sorted 32-byte digests of every covered line.  An index whose size is
not its head's count of keys (one cut short) is not used.  A check binary-searches it and reads
the lines appended since; past MERGE_TAIL such lines it merges them in.  An index
that is missing, damaged, or not the current ledger's is written again from the
whole ledger.  The ledger itself is ledgerfile.py's; recording is ledger.py's.
"""

from __future__ import annotations

import os

from m1nd.errors import M1ndError
from m1nd.fsutil import open_regular
from m1nd.ledgerfile import _LINE_LEN, _parse_block, _read, _tail, _tail_digests, ledger_path, tail_lines
from m1nd.paths import Paths, ensure_dir

SEEN_BLOCK = 1 << 13  # entries per write (and per membership check) when a filing records what it read

_INDEX_MAGIC = b"M1NDLIX2"  # 2: the head counts the keys (an index of format 1 is written again)
_HEAD = 8 + 8 + 8 + 32  # magic, covered length, number of keys, sha256 of the last indexed line


def _head(covered: int, keys: int, last_line: bytes) -> bytes:
    return _INDEX_MAGIC + covered.to_bytes(8, "little") + keys.to_bytes(8, "little") + _last_line_hash(last_line)


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

    head = _head(covered, len(keys), last_line)
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
    tail = tail_lines(paths, covered) if covered else 0
    # a tail longer than an eighth of the index (a large filing at once): reading the
    # whole ledger once costs less than placing each of its keys
    if not covered or tail > max(MERGE_TAIL, n // 8):
        if table is not None:
            table.close()
        return _in_sorted(_rebuild_index(paths), digests)
    if tail > MERGE_TAIL and table is not None and _merge_tail(paths, table, n, covered):
        table.close()
        covered, table = _open_index(paths)
        n = (len(table) - _HEAD) // 32 if table is not None else 0
    fresh = _tail_digests(paths, covered)
    found = {d for d in digests if d.encode() in fresh}
    if table is not None:
        found |= _in_table(table, n, [d for d in digests if d not in found])
        table.close()
    return found


class _Keys:
    """The `n` sorted keys of a mapped index, as a sequence bisect can search."""

    def __init__(self, table, n: int) -> None:
        self.table, self.n = table, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> bytes:
        return self.table[_HEAD + 32 * i:_HEAD + 32 * i + 32]


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
        keys = sorted(unhexlify(d) for d in fresh)
    except ValueError:  # a digest a person wrote that is not hex: left in the tail, read as it is
        return False
    if any(len(k) != 32 for k in keys):
        return False
    try:
        with open(ledger_path(paths), "rb") as lf:
            lf.seek(max(end - _LINE_LEN - 1, 0))
            last = lf.read(end - max(end - _LINE_LEN - 1, 0))
    except OSError:
        return False
    if not last.endswith(b"\n"):
        return False

    def parts():
        out = bytearray(_head(end, n + len(keys), last))
        view, at = _Keys(table, n), 0
        for key in keys:
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
        keys = int.from_bytes(head[16:24], "little")
        if head[:8] == _INDEX_MAGIC and len(head) == _HEAD and size == _HEAD + 32 * keys:
            covered = int.from_bytes(head[8:16], "little")
            before = b""
            try:
                with open(ledger_path(paths), "rb") as lf:
                    if covered <= os.fstat(lf.fileno()).st_size:  # past the ledger's end: not its index
                        lf.seek(max(covered - _LINE_LEN - 1, 0))
                        before = lf.read(covered - max(covered - _LINE_LEN - 1, 0))
            except OSError:
                pass
            if covered and (not before.endswith(b"\n") or _last_line_hash(before) != head[24:56]):
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

    found: set[str] = set()
    view = _Keys(table, n)
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
