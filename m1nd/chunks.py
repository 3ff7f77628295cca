"""Checksums of a file's bytes in fixed chunks, and what one process already knows.

Every index kept over an append-only file (the cursor over the spool, each box's id
index, the read model, the witnesses) checks that the bytes it indexed are still the
same before it trusts them: the chunk hashes it stored against the file's bytes now.
CRC-32: this detects changes made under the index, it does not resist forgery, and it
runs at several GB/s, which matters since it covers every byte filed.
"""

from __future__ import annotations

import os
import zlib

CHUNK = 1 << 18


def region_hashes(fd: int, offset: int, known: list[str] | None = None, known_offset: int = 0) -> list[str]:
    """Checksums of [0, offset) in CHUNK-sized pieces (the last one may be partial).

    The hashes of chunks that lay wholly below `known_offset` are taken from `known`
    instead of read again, so keeping them current after an append reads only the
    appended bytes and the chunk they started in.
    """
    reuse = min(known_offset, offset) // CHUNK if known else 0
    hashes = list(known[:reuse]) if known else []
    seen = _seen_chunks(fd)
    at = reuse * CHUNK
    while at < offset:
        size = min(CHUNK, offset - at)
        index = at // CHUNK
        if size == CHUNK and index < len(seen):
            hashes.append(seen[index])
        else:
            hashes.append(f"{zlib.crc32(os.pread(fd, size, at)):08x}")
            if size == CHUNK and index == len(seen):
                seen.append(hashes[-1])
        at += size
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
        kept = _SEEN[(st.st_dev, st.st_ino)] = (state, [])
    return kept[1]
