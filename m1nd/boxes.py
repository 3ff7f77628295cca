"""Boxes (contract section 4): birth, refusal, locked append-with-dedup, reads.

Only this module (and the spool writer) appends letters anywhere.  A box only ever
grows: it is opened with O_APPEND and never truncated or rewritten here.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from m1nd.fsutil import lock_for, write_all
from m1nd.letters import FileRead, letter_id, read_file
from m1nd.routing import Root

BIRTH_GITIGNORE = b"inbox.jsonl\n"
MEDULLA_LABEL = "medulla"


@dataclass(frozen=True)
class Box:
    label: str
    path: str  # the box file
    root: Root | None  # None for the medulla box

    @property
    def is_medulla(self) -> bool:
        return self.root is None


def project_box(root: Root) -> Box:
    return Box(root.label, root.box, root)


def medulla_box(path: str) -> Box:
    return Box(MEDULLA_LABEL, path, None)


class Refused(Exception):
    """A box that must not be written (or read) through: the reason is the message."""


def refusal(box: Box) -> str | None:
    """Why this box is refused, or None when it may be used."""
    if box.root is not None:
        try:
            st = os.lstat(box.root.box_dir)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                return f"{box.root.box_dir} is a symlink"
            if not stat.S_ISDIR(st.st_mode):
                return f"{box.root.box_dir} is not a directory"
    try:
        st = os.lstat(box.path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return f"{os.path.dirname(box.path)} is not a directory"
    if stat.S_ISLNK(st.st_mode):
        return f"{box.path} is a symlink"
    if not stat.S_ISREG(st.st_mode):
        return f"{box.path} is not a regular file"
    return None


def _birth(box: Box) -> None:
    """Make `<root>/.m1nd/` and, only when none exists, its consent-deferred .gitignore."""
    if box.root is None:
        return
    try:
        os.mkdir(box.root.box_dir, 0o755)
    except FileExistsError:
        pass
    gitignore = os.path.join(box.root.box_dir, ".gitignore")
    if os.path.lexists(gitignore):
        return
    try:
        fd = os.open(gitignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return
    try:
        write_all(fd, BIRTH_GITIGNORE)
    finally:
        os.close(fd)


def scan_ids(fd: int, start: int = 0) -> tuple[set[str], int]:
    """Ids of the lines of an open box from byte `start`, and the offset just after
    its last complete line (an unterminated last line is counted, not passed)."""
    ids: set[str] = set()
    with os.fdopen(os.dup(fd), "rb") as fh:
        fh.seek(start)
        offset = start
        for chunk in fh:
            if chunk.endswith(b"\n"):
                offset += len(chunk)
                raw = chunk[:-1]
            else:
                raw = chunk
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if raw.strip():
                ids.add(letter_id(raw))
    return ids, offset


def ends_with_newline(fd: int) -> bool:
    """True for an empty file or one whose last byte is `\n`."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


class BoxIndex:
    """The ids in one box file, kept current by reading only what was added since.

    A different file (new inode, as after a git checkout) or a shorter one is read
    again from the start.
    """

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.offset = 0
        self.ident: tuple[int, int] | None = None

    def refresh(self, fd: int) -> None:
        st = os.fstat(fd)
        ident = (st.st_dev, st.st_ino)
        if ident != self.ident or st.st_size < self.offset:
            self.ids, self.offset, self.ident = set(), 0, ident
        if st.st_size > self.offset:
            new, self.offset = scan_ids(fd, self.offset)
            self.ids |= new


def append(box: Box, raws: list[bytes], lock_dir: str, index: BoxIndex | None = None) -> int:
    """Append every letter whose id is not yet in the box, under the box's lock.

    Lock, re-check, act: the index is refreshed under the lock.  Returns how many
    letters were appended.  Raises Refused for a refused box.
    """
    index = index or BoxIndex()
    with lock_for(lock_dir, "box", os.path.realpath(box.path)):
        reason = refusal(box)
        if reason:
            raise Refused(reason)
        _birth(box)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
        try:
            fd = os.open(box.path, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # became a symlink under us
                raise Refused(f"{box.path} is a symlink") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(f"{box.path} is not a regular file")
            index.refresh(fd)
            present = index.ids
            out = []
            for raw in raws:
                lid = letter_id(raw)
                if lid not in present:
                    present.add(lid)
                    out.append(raw)
            if not out:
                return 0
            data = b"".join(raw + b"\n" for raw in out)
            if not ends_with_newline(fd):
                data = b"\n" + data
            size_before = os.fstat(fd).st_size
            write_all(fd, data)
            os.fsync(fd)
            # Everything before our write was scanned by refresh(): skip past it all.
            index.offset = size_before + len(data)
            return len(out)
        finally:
            os.close(fd)


def read_box(box: Box) -> FileRead:
    """Read a box; raises Refused for a refused box.  A missing box reads as empty."""
    reason = refusal(box)
    if reason:
        raise Refused(reason)
    return read_file(box.path)
