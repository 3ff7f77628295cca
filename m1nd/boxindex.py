"""Per-box id indexes, kept under `<home>/state/boxes/` between runs.

Dedup needs "is this letter already in the box?", and "the same letter" means the
same raw bytes (contract section 2: two different lines may share a 12-hex id), so
the key is the full sha256 digest of a line.  Reading a whole box to answer that
costs as much as the box is large, so each box's keys are kept as a sorted blob of
32-byte digests on disk, plus the box's identity (device, inode, size, mtime) and
hashes of the indexed bytes in 256 KiB chunks (m1nd/chunks.py).  A box untouched since the index saw
it costs one fstat.  A box changed in place is checked against the chunk hashes: if
it only grew, only the new bytes are read; if it was replaced (a git pull writes a
new file), truncated or rewritten anywhere, it is read again from the start.

The index is a cache: deleting it loses nothing, and an index that does not verify
is reported and rebuilt, never trusted.
"""

from __future__ import annotations

import hashlib
import os

import orjson

from m1nd.chunks import region_hashes, same_bytes
from m1nd.fsutil import atomic_write, read_regular
from m1nd.paths import ensure_dir

ID_LEN = 32  # a key: the sha256 digest of a line's raw bytes
VERSION = 4


def letter_key(raw: bytes) -> bytes:
    """What dedup compares: the full sha256 of a line's raw bytes."""
    return hashlib.sha256(raw).digest()


def scan_ids(fd: int, start: int) -> tuple[list[bytes], int]:
    """Keys of the lines of an open box from byte `start`, and the offset just after
    its last complete line (an unterminated last line is counted, not passed)."""
    ids: list[bytes] = []
    offset = start
    with os.fdopen(os.dup(fd), "rb") as fh:
        fh.seek(start)
        for chunk in fh:
            if chunk.endswith(b"\n"):
                offset += len(chunk)
                raw = chunk[:-1]
            else:
                raw = chunk
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if raw.strip():
                ids.append(letter_key(raw))
    return ids, offset


def _position(blob: bytes | bytearray, key: bytes) -> int:
    """Where `key` is, or would go, in a sorted blob of fixed-width ids."""
    lo, hi = 0, len(blob) // ID_LEN
    while lo < hi:
        mid = (lo + hi) // 2
        if blob[mid * ID_LEN:(mid + 1) * ID_LEN] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _merge(blob: bytes, added: set[bytes]) -> bytes:
    """The sorted blob of the old keys and the added ones, each once."""
    n = len(blob) // ID_LEN
    if len(added) * 64 < n:  # a few new keys into a large index: insert in place
        out = bytearray(blob)
        for key in sorted(added):
            at = _position(out, key)
            if out[at * ID_LEN:(at + 1) * ID_LEN] != key:
                out[at * ID_LEN:at * ID_LEN] = key
        return bytes(out)
    keys = set(added)
    keys.update(blob[i:i + ID_LEN] for i in range(0, len(blob), ID_LEN))
    return b"".join(sorted(keys))


class BoxIndex:
    """The ids of one box file: a sorted on-disk blob plus this run's additions."""

    def __init__(self, box_path: str, state_dir: str | None) -> None:
        self.box_path = box_path
        self.file = None
        if state_dir is not None:
            key = hashlib.sha256(box_path.encode("utf-8", "surrogateescape")).hexdigest()[:16]
            self.file = os.path.join(state_dir, "boxes", f"{key}.idx")
        self.blob = b""
        self.added: set[bytes] = set()
        self.offset = 0
        self.ident: tuple[int, int] | None = None
        self.seen: tuple[int, int] = (-1, -1)  # (size, mtime_ns) when last brought current
        self.hashes: list[str] = []  # region_hashes of [0, offset)
        self.loaded = False
        self.dirty = False
        self.problem: str | None = None  # why a stored index was not trusted
        # When a filing left out letters the box lacks because a branch or a stash held
        # them: a fingerprint of those refs.  The box is "touched" once they change
        # (a stash dropped, a branch deleted), though the box file did not.
        self.lean: str | None = None

    # -- persistence -------------------------------------------------------------
    def _load(self) -> None:
        self.loaded = True
        if self.file is None:
            return
        try:
            data = read_regular(self.file)
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problem = f"box index {self.file} unreadable ({exc.strerror}): rebuilt"
            return
        try:
            head, blob = data.split(b"\n", 1)
            meta = orjson.loads(head)
            if meta.get("v") != VERSION:
                return  # an index of an earlier version: rebuilt, nothing to report
            ok = (
                meta["v"] == VERSION and meta["box"] == self.box_path
                and len(blob) == meta["count"] * ID_LEN
                and hashlib.sha256(blob).hexdigest()[:16] == meta["sum"]
            )
            if not ok:
                raise ValueError
            self.blob, self.offset = blob, int(meta["offset"])
            self.ident = (int(meta["dev"]), int(meta["ino"]))
            self.seen = (int(meta["size"]), int(meta["mtime_ns"]))
            self.hashes = [str(h) for h in meta["hashes"]]
            lean = meta.get("lean")
            self.lean = lean if isinstance(lean, str) else None
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            self.problem = f"box index {self.file} is corrupt: rebuilt from the box"

    def save(self) -> None:
        if self.file is None or not self.dirty:
            return
        if self.added:
            self.blob = _merge(self.blob, self.added)
            self.added = set()
        meta = {
            "v": VERSION, "box": self.box_path, "count": len(self.blob) // ID_LEN,
            "sum": hashlib.sha256(self.blob).hexdigest()[:16], "offset": self.offset,
            "dev": self.ident[0] if self.ident else 0, "ino": self.ident[1] if self.ident else 0,
            "size": self.seen[0], "mtime_ns": self.seen[1], "hashes": self.hashes,
        }
        if self.lean:
            meta["lean"] = self.lean
        ensure_dir(os.path.dirname(self.file))
        # A cache: atomic, but not worth an fsync (a lost index is rebuilt).
        atomic_write(self.file, orjson.dumps(meta) + b"\n" + self.blob, sync=False)
        self.dirty = False

    def untouched(self) -> bool:
        """True when the box file is the one this index last saw, unchanged or only
        grown since (no letter of it can have been dropped); False when it was
        replaced, rewritten or truncated, or when no saved index says."""
        self._load()
        if self.ident is None:
            return False
        try:
            fd = os.open(self.box_path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return False
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self.ident or st.st_size < self.offset:
                return False
            if (st.st_size, st.st_mtime_ns) == self.seen:
                return True
            return same_bytes(fd, self.offset, self.hashes)
        finally:
            os.close(fd)

    def forget(self) -> None:
        """Delete the stored index: the next run reads the box again and re-checks it."""
        if self.file is not None:
            try:
                os.unlink(self.file)
            except FileNotFoundError:
                pass
        self.dirty = False

    def set_lean(self, fingerprint: str | None) -> None:
        if not self.loaded:
            self._load()
        if fingerprint != self.lean:
            self.lean, self.dirty = fingerprint, True

    # -- the one query -----------------------------------------------------------
    def take_new(self, keys: list[bytes]) -> list[int]:
        """Positions of the keys not yet in the box (each key once); adds them."""
        added = self.added
        blob = self.blob
        keep = []
        for i, key in enumerate(keys):
            if key in added:
                continue
            if blob:
                at = _position(blob, key)
                if blob[at * ID_LEN:(at + 1) * ID_LEN] == key:
                    continue
            added.add(key)
            keep.append(i)
        if keep:
            self.dirty = True
        return keep

    # -- keeping current -------------------------------------------------------
    def refresh(self, fd: int) -> None:
        """Bring the index up to the box's current content (call under the box lock)."""
        if not self.loaded:
            self._load()
        st = os.fstat(fd)
        ident = (st.st_dev, st.st_ino)
        if ident == self.ident and (st.st_size, st.st_mtime_ns) == self.seen:
            return  # untouched since the index last saw it
        grew_only = (
            ident == self.ident and st.st_size >= self.offset
            and same_bytes(fd, self.offset, self.hashes)
        )
        if not grew_only:
            self.blob, self.added, self.offset, self.hashes, self.ident = b"", set(), 0, [], ident
            self.dirty = True
        if st.st_size > self.offset:
            ids, new_offset = scan_ids(fd, self.offset)
            self.added.update(ids)
            self._advance(fd, new_offset)
        self.seen = (st.st_size, st.st_mtime_ns)

    def appended(self, fd: int, new_size: int) -> None:
        """Everything up to `new_size` is now indexed (we wrote it ourselves)."""
        self._advance(fd, new_size)
        st = os.fstat(fd)
        self.seen = (st.st_size, st.st_mtime_ns)

    def _advance(self, fd: int, offset: int) -> None:
        self.hashes = region_hashes(fd, offset, self.hashes, self.offset)
        self.offset = offset
        self.dirty = True
