"""Checksums of a file's bytes in fixed chunks, and what one process already knows.

Every index kept over an append-only file (the cursor over the spool, each box's id
index, the read model, the witnesses) checks that the bytes it indexed are still the
same before it trusts them: the chunk hashes it stored against the file's bytes now.
XXH3 (64 bits, from the xxhash package): this detects changes made under the index, it
does not resist forgery.  Its speed is the point: a read right after an append checks
every byte filed before it (and a busy server at every turn), and XXH3 runs at about
20 GB/s where CRC-32 ran at 4 (85 ms of each such read at a million letters).  Hashes
stored by earlier releases (CRC-32, 8 hex digits) are still verified as what they are,
and replaced by XXH3 ones the next time the index is kept (same_bytes).

What one process checksummed of a settled file is also kept for the next ones, in
`<home>/state/chunk-memo` (keep_in): a read right after a distribution that checked
the grown spool does not read its 365 MB again.  The memo holds only what the rule of
`settled` lets one process remember, keyed by the file's device, inode, size and mtime.
"""

from __future__ import annotations

import marshal
import os
import zlib
from _thread import allocate_lock

CHUNK = 1 << 18
_HEX = 16  # digits of a chunk hash (XXH3-64); CRC-32 ones, from earlier releases, have 8


def _hash_chunk(data: bytes) -> str:
    from xxhash import xxh3_64_intdigest  # cached after the first call; 1 ms to import

    return f"{xxh3_64_intdigest(data):016x}"


def _digits(hashes) -> int | None:
    """The hex digits of every hash in `hashes`: 16 for XXH3, 8 for an earlier release's
    CRC-32 (an empty list counts as current); None for anything else (a damaged state)."""
    if not isinstance(hashes, list) or not all(type(h) is str for h in hashes):
        return None
    sizes = {len(h) for h in hashes}
    return _HEX if not sizes else sizes.pop() if len(sizes) == 1 else None


def current(hashes: list[str]) -> bool:
    """Whether `hashes` were taken by this release's hash (not CRC-32, before it)."""
    return _digits(hashes) == _HEX


def same_bytes(fd: int, offset: int, hashes: list[str]) -> bool:
    """Whether [0, offset) still holds the bytes `hashes` were taken of, in the hash
    they were taken with (anything else stored there, a damaged state, is no match)."""
    digits = _digits(hashes)
    if digits == _HEX:
        return region_hashes(fd, offset) == hashes
    return digits == 8 and _crc32_hashes(fd, offset) == hashes


def _crc32_hashes(fd: int, offset: int) -> list[str]:
    """Chunk checksums as releases before XXH3 took them (only to verify theirs)."""
    return [f"{zlib.crc32(os.pread(fd, min(CHUNK, offset - at), at)):08x}" for at in range(0, offset, CHUNK)]


def region_hashes(fd: int, offset: int, known: list[str] | None = None, known_offset: int = 0) -> list[str]:
    """Checksums of [0, offset) in CHUNK-sized pieces (the last one may be partial).

    The hashes of chunks that lay wholly below `known_offset` are taken from `known`
    instead of read again, so keeping them current after an append reads only the
    appended bytes and the chunk they started in.  `known` taken by an earlier
    release's hash is not reused: the region is hashed again, once.
    """
    if known and not current(known):
        known = None
    reuse = min(known_offset, offset) // CHUNK if known else 0
    hashes = list(known[:reuse]) if known else []
    seen = _seen_chunks(fd)
    kept = len(seen)
    at = reuse * CHUNK
    while at < offset:
        size = min(CHUNK, offset - at)
        index = at // CHUNK
        if size == CHUNK and index < len(seen):
            hashes.append(seen[index])
        else:
            hashes.append(_hash_chunk(os.pread(fd, size, at)))
            if size == CHUNK and index == len(seen):
                seen.append(hashes[-1])
        at += size
    if len(seen) > kept:  # checksums of a settled file this process is the first to take
        _MEMO.changed.add(_file_key(fd))
        _MEMO.save()
    return hashes


# The whole chunks this process already checksummed, per file (device, inode) as it
# stands (size, mtime): one command checks a grown file for several indexes (the
# cursor, the read model, the witnesses) and reads its bytes once.  Only the file's
# latest state is kept, so a server that runs for days holds one list per file.
#
# A file changed very recently is not remembered: a rewrite of the same size within
# the same tick of the file system's clock would keep its stat.  "Recently" is 50 ms
# where the file's time has a sub-second part (the file system keeps fine times, whose
# tick is a few milliseconds at most), and 2 s where it is a whole second (file systems
# that keep seconds, or two of them).
_SEEN: dict[tuple[int, int], tuple[tuple[int, int], list[str]]] = {}
_RECENT_NS = 2_000_000_000
_RECENT_FINE_NS = 50_000_000


def settled(mtime_ns: int, now_ns: int) -> bool:
    """Whether a file last changed at `mtime_ns` can no longer be rewritten unseen
    with its size and mtime kept (the one rule of every index that trusts a stat)."""
    recent = _RECENT_FINE_NS if mtime_ns % 1_000_000_000 else _RECENT_NS
    return mtime_ns < now_ns - recent


def _file_key(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _seen_chunks(fd: int) -> list[str]:
    import time

    st = os.fstat(fd)
    if not settled(st.st_mtime_ns, time.time_ns()):
        return []
    state = (st.st_size, st.st_mtime_ns)
    kept = _SEEN.get((st.st_dev, st.st_ino))
    if kept is None or kept[0] != state:
        if len(_SEEN) >= 4096:
            _SEEN.clear()
        kept = _SEEN[(st.st_dev, st.st_ino)] = (state, _MEMO.known(st.st_dev, st.st_ino, state))
    return kept[1]


def _memo_sum(body: bytes) -> bytes:
    """The memo's own checksum, before its body: XXH3-64 where releases that kept CRC-32
    chunk hashes put a CRC-32 of 4 bytes, so that neither reads the other's memo (an
    earlier release would take these hashes for its own and mix them into its lists)."""
    from xxhash import xxh3_64_digest

    return xxh3_64_digest(body)


class _Memo:
    """The part of _SEEN kept on disk between processes: {(dev, ino): (size, mtime_ns,
    hashes)} marshalled behind its checksum (_memo_sum), at most KEEP files.  A memo that
    cannot be read or written is no memo: every failure here only means reading the bytes."""

    KEEP = 256

    def __init__(self) -> None:
        self.path: str | None = None
        self.entries: dict | None = None  # loaded on first use
        self.changed: set[tuple[int, int]] = set()  # files whose chunks this process added

    def keep_in(self, state_dir: str | None) -> None:
        path = os.path.join(state_dir, MEMO_NAME) if state_dir else None
        if path != self.path:
            self.path, self.entries = path, None
            self.changed.clear()

    def _load(self) -> dict:
        if self.entries is None:
            self.entries = {}
            data = _read_small_regular(self.path) if self.path is not None else None
            if data is not None and data[:8] == _memo_sum(data[8:]):
                try:
                    loaded = marshal.loads(data[8:])
                except (ValueError, EOFError, TypeError):
                    loaded = None
                if isinstance(loaded, dict):
                    self.entries = loaded
        return self.entries

    def known(self, dev: int, ino: int, state: tuple[int, int]) -> list[str]:
        """The whole chunks kept for the file as it stands (a copy), else []."""
        if self.path is None:
            return []
        entry = self._load().get((dev, ino))
        try:
            if entry[0] == state[0] and entry[1] == state[1] and current(entry[2]):  # CRC-32 ones are no help
                return list(entry[2])
        except (TypeError, IndexError):
            pass
        return []

    def save(self) -> None:
        """Write what _SEEN holds of settled files into the memo (one small file,
        replaced whole: a process killed mid-write leaves the old one or a temp)."""
        with _SAVING:  # a server's threads may save at once
            changed, self.changed = self.changed, set()
            if self.path is None or not os.path.isdir(os.path.dirname(self.path)):
                return
            entries = self._load()
            for key in changed:
                kept = _SEEN.get(key)
                if kept is not None and kept[1]:
                    entries.pop(key, None)
                    entries[key] = (kept[0][0], kept[0][1], list(kept[1]))  # newest last
            while len(entries) > self.KEEP:
                entries.pop(next(iter(entries)), None)
            body = marshal.dumps(entries)
        from m1nd.fsutil import atomic_write

        try:  # a cache: renamed into place, not synced
            atomic_write(self.path, _memo_sum(body) + body, sync=False)
        except OSError:
            pass


_SAVING = allocate_lock()
MEMO_NAME = "chunk-memo"
MEMO_MAX_BYTES = 32 << 20  # 256 files of 100 GB each would fit
_MEMO = _Memo()


def _read_small_regular(path: str) -> bytes | None:
    """The bytes of a regular file of at most MEMO_MAX_BYTES, else None: a FIFO, a
    device, a symlink or a huge file in the memo's place is no memo (never a hang)."""
    from m1nd.fsutil import open_fd

    try:
        fd = open_fd(path, os.O_RDONLY | os.O_NOFOLLOW)  # NotRegular for a FIFO, a device
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(MEMO_MAX_BYTES + 1)
        except OSError:
            return None
    return data if len(data) <= MEMO_MAX_BYTES else None


def keep_in(state_dir: str | None) -> None:
    """Keep this process's checksums of settled files in `state_dir` (None: nowhere),
    and use those other processes kept there."""
    _MEMO.keep_in(state_dir)
