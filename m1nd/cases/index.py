"""The fold of every distinct letter, kept current incrementally under
`<home>/state/cases/` (a cache: delete it and the next run rebuilds the same fold).

Each file of the union (every reachable box, then the spool) is remembered by its
identity (device, inode), the offset scanned to, and checksums of its first and last
scanned bytes.  A file that only grew is read from that offset; a file untouched
since costs one `stat`; a file replaced, truncated, rewritten or gone (a checkout of
an older box, a roster change) means a rebuild from scratch, since the union may
have lost letters.  Which letters were already folded is a sorted blob of 16-byte
digest prefixes, so a letter present in the spool and in its box is folded once.

An unterminated last line is left for a later run: it becomes a letter for case
intelligence once its `\\n` arrives (a writer may be mid-append).
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass

import orjson

from m1nd.boxes import refusal
from m1nd.cases.fold import Fold
from m1nd.fsutil import atomic_write, gc_paused, lock_for
from m1nd.letters import iter_raw, parse
from m1nd.paths import ensure_dir
from m1nd.run import Run

VERSION = 1
KEY = 16  # bytes of digest kept per folded letter
EDGE = 4096  # bytes checked at each end of the scanned region


@dataclass(frozen=True)
class Folded:
    fold: Fold
    problems: tuple[str, ...]  # refused or unreadable boxes (their letters are left out)
    box_labels: dict[str, str]  # box path -> label


def _cache_dir(run: Run) -> str:
    return os.path.join(run.paths.state, "cases")


def _crc(fd: int, start: int, end: int) -> str:
    return f"{zlib.crc32(os.pread(fd, max(0, end - start), start)):08x}"


class _Seen:
    """Membership over the sorted blob plus this run's additions."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob
        self.added: set[bytes] = set()

    def _in_blob(self, key: bytes) -> bool:
        blob = self.blob
        lo, hi = 0, len(blob) // KEY
        while lo < hi:
            mid = (lo + hi) // 2
            probe = blob[mid * KEY:(mid + 1) * KEY]
            if probe < key:
                lo = mid + 1
            elif probe > key:
                hi = mid
            else:
                return True
        return False

    def check_add(self, key: bytes) -> bool:
        """True when the key was already seen; adds it otherwise."""
        if key in self.added or (self.blob and self._in_blob(key)):
            return True
        self.added.add(key)
        return False

    def merged(self) -> bytes:
        if not self.added:
            return self.blob
        if not self.blob:
            return b"".join(sorted(self.added))
        pieces, at, blob = [], 0, self.blob
        for key in sorted(self.added):
            lo, hi = at // KEY, len(blob) // KEY
            while lo < hi:
                mid = (lo + hi) // 2
                if blob[mid * KEY:(mid + 1) * KEY] < key:
                    lo = mid + 1
                else:
                    hi = mid
            pieces.append(blob[at:lo * KEY])
            pieces.append(key)
            at = lo * KEY
        pieces.append(blob[at:])
        return b"".join(pieces)


def _load_cache(run: Run):
    directory = _cache_dir(run)
    try:
        with open(os.path.join(directory, "fold.json"), "rb") as fh:
            doc = orjson.loads(fh.read())
        with open(os.path.join(directory, "seen.bin"), "rb") as fh:
            blob = fh.read()
        if doc.get("version") != VERSION or len(blob) % KEY or len(blob) // KEY != doc.get("seen"):
            return None
        return doc["files"], Fold.from_json(doc["fold"]), blob
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None


def _save_cache(run: Run, files: dict, fold: Fold, blob: bytes) -> None:
    directory = _cache_dir(run)
    try:
        ensure_dir(directory)
        atomic_write(os.path.join(directory, "seen.bin"), blob, sync=False)
        doc = {"version": VERSION, "files": files, "seen": len(blob) // KEY, "fold": fold.as_json()}
        atomic_write(os.path.join(directory, "fold.json"), orjson.dumps(doc), sync=False)
    except OSError:
        pass  # a cache that cannot be written only costs the next run a rebuild


def _scan(fd: int, start: int, box: str | None, fold: Fold, seen: _Seen, interesting: set[str], rank) -> int:
    """Fold the complete lines of an open file from `start`; returns the offset after the last one."""
    sha256 = hashlib.sha256
    offset = start
    with os.fdopen(os.dup(fd), "rb") as fh:
        for _, end, raw, terminated in iter_raw(fh, start):
            if not terminated:
                break
            offset = end
            if not raw or raw.isspace():
                continue
            h = sha256(raw)
            if seen.check_add(h.digest()[:KEY]):
                if box is not None and interesting:
                    hexd = h.hexdigest()
                    if hexd in interesting:
                        fold.seen_in_box(hexd, box, rank)
                continue
            letter = parse(raw, h.hexdigest()[:12])
            if letter is None:
                continue
            hexd = h.hexdigest()
            fold.add(letter, hexd, box)
            if box is not None:
                interesting.add(hexd)
    return offset


def fold_mailbox(run: Run, use_cache: bool = True, write: bool = True) -> Folded:
    """The fold over the union of every reachable box and the spool, brought up to date.

    `write=False` (doctor) reads the cache when there is one but writes nothing at all."""
    with gc_paused():
        if not use_cache:
            return _fold(run, None, save=write)
        if not write:
            return _fold(run, _load_cache(run), save=False)
        try:
            with lock_for(run.paths.locks, "cases", run.paths.state):
                return _fold(run, _load_cache(run))
        except OSError:  # no usable home for state: fold from scratch, keep nothing
            return _fold(run, None, save=False)


def _fold(run: Run, cache, save: bool = True) -> Folded:
    boxes = run.boxes()
    order = {b.path: i for i, b in enumerate(boxes)}
    rank = lambda path: order.get(path, len(order))  # noqa: E731
    labels = {b.path: b.label for b in boxes}
    problems: list[str] = []
    targets: list[tuple[str, str | None]] = []
    for box in boxes:
        reason = refusal(box)
        if reason:
            problems.append(f"box {box.label} refused: {reason}")
        else:
            targets.append((box.path, box.path))
    targets.append((run.paths.spool, None))

    opened = []
    try:
        for path, box in targets:
            try:
                fd = os.open(path, os.O_RDONLY | (os.O_NOFOLLOW if box else 0))
            except FileNotFoundError:
                continue
            except OSError as exc:
                if box is None:
                    from m1nd.errors import M1ndError

                    raise M1ndError(f"cannot read spool {path}: {exc.strerror}") from None
                problems.append(f"cannot read box {path}: {exc.strerror}")
                continue
            opened.append((path, box, fd, os.fstat(fd)))
        return _fold_opened(run, cache, save, opened, rank, labels, problems)
    finally:
        for _, _, fd, _ in opened:
            os.close(fd)


def _fold_opened(run, cache, save, opened, rank, labels, problems) -> Folded:
    import stat as stat_mod

    starts: dict[str, int] = {}
    rebuild = cache is None
    saved_files = cache[0] if cache else {}
    current = {path for path, _, _, _ in opened}
    if not rebuild and any(p not in current for p in saved_files):
        rebuild = True
    for path, box, fd, st in opened:
        if not stat_mod.S_ISREG(st.st_mode):
            if box is None:
                from m1nd.errors import M1ndError

                raise M1ndError(f"cannot read spool {path}: not a regular file")
            problems.append(f"box {labels.get(box, path)} refused: {path} is not a regular file")
            continue
        if rebuild:
            starts[path] = 0
            continue
        old = saved_files.get(path)
        if old is None:
            starts[path] = 0
            continue
        dev, ino, offset, size, mtime, head, tail = old
        if [st.st_dev, st.st_ino] != [dev, ino] or st.st_size < offset:
            rebuild = True
            break
        if st.st_size == size and st.st_mtime_ns == mtime:
            starts[path] = offset
            continue
        if _crc(fd, 0, min(EDGE, offset)) != head or _crc(fd, max(0, offset - EDGE), offset) != tail:
            rebuild = True
            break
        starts[path] = offset
    if rebuild:
        fold, seen = Fold(), _Seen(b"")
        starts = {path: 0 for path, _, _, st in opened if stat_mod.S_ISREG(st.st_mode)}
    else:
        fold, seen = cache[1], _Seen(cache[2])
    interesting = fold.interesting()
    files = {}
    changed = rebuild
    for path, box, fd, st in opened:
        if path not in starts:
            continue
        start = starts[path]
        offset = start
        if start < st.st_size:
            offset = _scan(fd, start, box, fold, seen, interesting, rank)
            changed = True
        old = saved_files.get(path)
        if not changed and old is not None and old[3] == st.st_size and old[4] == st.st_mtime_ns:
            files[path] = old
        else:
            files[path] = [st.st_dev, st.st_ino, offset, st.st_size, st.st_mtime_ns,
                           _crc(fd, 0, min(EDGE, offset)), _crc(fd, max(0, offset - EDGE), offset)]
    if save and (changed or files != saved_files):
        _save_cache(run, files, fold, seen.merged())
    return Folded(fold, tuple(problems), labels)
