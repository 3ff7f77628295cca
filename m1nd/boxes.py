"""Boxes (contract section 4): birth, refusal, locked append-with-dedup, reads.

Only this module (and the spool writer) appends letters anywhere.  A box only ever
grows: it is opened with O_APPEND and never truncated or rewritten here.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from dataclasses import dataclass

from m1nd.boxindex import BoxIndex
from m1nd.fsutil import write_all
from m1nd.letters import FileRead, read_file
from m1nd.routing import Root

# The box and the ignore file itself are ignored: git does not see an unconsented `.m1nd/`.
BIRTH_GITIGNORE = b"inbox.jsonl\n.gitignore\n"
EARLIER_BIRTH_GITIGNORE = b"inbox.jsonl\n"  # what earlier versions wrote (upgraded, safety.py)
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
    if st.st_nlink > 1:  # a hard link: writing it would write a file outside every root too
        return f"{box.path} has {st.st_nlink} hard links"
    return None


APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _open_for_append(box: Box) -> int:
    """Open (creating) the box for appending, never through a symlink.

    For a project box, `.m1nd/` is opened first with O_NOFOLLOW and the box and its
    birth `.gitignore` are opened relative to that descriptor: a `.m1nd` swapped for
    a symlink after the refusal check is refused here, not followed.
    """
    if box.root is None:
        return _refusing_symlinks(box.path, lambda: os.open(box.path, APPEND_FLAGS, 0o644))
    try:
        os.mkdir(box.root.box_dir, 0o755)
    except FileExistsError:
        pass
    dir_fd = _refusing_symlinks(
        box.root.box_dir, lambda: os.open(box.root.box_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW))
    try:
        _birth_gitignore(dir_fd)
        return _refusing_symlinks(box.path, lambda: os.open("inbox.jsonl", APPEND_FLAGS, 0o644, dir_fd=dir_fd))
    finally:
        os.close(dir_fd)


def _refusing_symlinks(path: str, opener) -> int:
    try:
        return opener()
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # became a symlink (or a file) under us
            raise Refused(f"{path} is a symlink or not what it was") from None
        raise


def _birth_gitignore(dir_fd: int) -> None:
    """Write the birth `.gitignore` only when `.m1nd/` has none (of any kind)."""
    try:
        os.stat(".gitignore", dir_fd=dir_fd, follow_symlinks=False)
        return
    except FileNotFoundError:
        pass
    try:
        fd = os.open(".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dir_fd)
    except FileExistsError:
        return
    try:
        write_all(fd, BIRTH_GITIGNORE)
    finally:
        os.close(fd)


def ends_with_newline(fd: int) -> bool:
    """True for an empty file or one whose last byte is `\n`."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


def _locked_box(box: Box) -> int:
    """The box opened for appending and locked (flock on the box file itself, so
    writers from any home exclude each other; no lock file in a repository).

    After the lock is granted the path must still name the file locked: one replaced
    meanwhile (a checkout writes a new file) is opened again, else letters would go
    into an unlinked file."""
    for _ in range(100):
        reason = refusal(box)
        if reason:
            raise Refused(reason)
        fd = _open_for_append(box)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Refused(f"{box.path} is not a regular file")
            if st.st_nlink > 1:
                raise Refused(f"{box.path} has {st.st_nlink} hard links")
            os.set_blocking(fd, True)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                now = os.lstat(box.path)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise Refused(f"{box.path} keeps being replaced")


def append(box: Box, ids: list[bytes], raws: list[bytes], lock_dir: str, index: BoxIndex, exclude=None,
           appended: list | None = None, written: list | None = None) -> int:
    """Append every letter not yet in the box (by full sha256 digest, `ids`: two
    different lines sharing a 12-hex id are both appended), under the box's lock.

    Lock, re-check, act: the index is brought up to date under the lock, so letters
    that arrived by git or from another distributor (of this home or another) are
    never written twice.  The caller fsyncs (once per run, see `sync`).  Returns how
    many letters were appended; raises Refused for a refused box.  (`lock_dir` is
    no longer used: the lock is on the box itself.)  `exclude(new_digests)`, when
    given, names the new letters to leave out all the same (git holds them elsewhere).
    `appended`, when given, gets the digests of the letters appended; `written` gets
    (offset, bytes written there, their ids) for each write.
    """
    fd = _locked_box(box)
    try:
        index.refresh(fd)
        keep = index.take_new(ids)
        if keep and exclude is not None:
            skip = exclude([ids[i] for i in keep])
            if skip:
                index.added.difference_update(skip)
                keep = [i for i in keep if ids[i] not in skip]
        if not keep:
            return 0
        chosen = raws if len(keep) == len(raws) else [raws[i] for i in keep]
        data = b"\n".join(chosen) + b"\n"
        if not ends_with_newline(fd):
            data = b"\n" + data
        size_before = os.fstat(fd).st_size
        write_all(fd, data)
        index.appended(fd, size_before + len(data))
        if appended is not None:
            appended.extend(ids[i] for i in keep)
        if written is not None:
            written.append((size_before, data, [ids[i] for i in keep]))
        return len(keep)
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def sync(path: str) -> None:
    """fsync a box written this run (once, at the end, rather than per batch)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_box(box: Box, known: dict | None = None) -> FileRead:
    """Read a box; raises Refused for a refused box.  A missing box reads as empty."""
    reason = refusal(box)
    if reason:
        raise Refused(reason)
    return read_file(box.path, known)
