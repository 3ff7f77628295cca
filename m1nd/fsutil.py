"""Small file helpers: atomic rewrites, whole writes, advisory locks."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import tempfile
from contextlib import contextmanager
from typing import Iterator

from m1nd.paths import ensure_dir


class NotRegular(OSError):
    """A FIFO, a device, a socket or a directory where a regular file belongs (an
    OSError, so that every `except OSError` that names a path names this too)."""

    def __init__(self, path: str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({_kind_of(mode)})", path)


def check_regular(fd: int, path: str) -> None:
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegular(path, mode)


def open_fd(path: str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """os.open with O_NONBLOCK, then fstat: a FIFO or a device is NotRegular, never
    a hang (opening a FIFO blocks until a writer comes; reading one, until it writes)."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        check_regular(fd, path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str, what: str = "file"):
    """A regular file opened for reading (binary), or None when it does not exist;
    NotRegular for anything else in its place."""
    try:
        fd = open_fd(path)
    except FileNotFoundError:
        return None
    return os.fdopen(fd, "rb")


def read_regular(path: str) -> bytes:
    """The whole content of a regular file (FileNotFoundError when missing)."""
    fd = open_fd(path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


TEMP_PREFIX = ".m1nd-"  # temp files of atomic rewrites: `.m1nd-XXXX.tmp`


def atomic_write(path: str, data: bytes, mode: int = 0o600, sync: bool = True) -> None:
    """Temp file in the same directory, fsync, rename over, fsync the directory.

    `sync=False` keeps the atomic rename but skips the fsyncs (for caches).
    """
    atomic_write_parts(path, (data,), mode, sync)


def atomic_write_parts(path: str, parts, mode: int = 0o600, sync: bool = True) -> None:
    """atomic_write of the concatenation of `parts` (an iterable of bytes), never joined."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".tmp", dir=directory)
    try:
        for data in parts:
            write_all(fd, data)
        os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if sync:
        fsync_dir(directory)


@contextmanager
def lock_for(lock_dir: str, name: str, key: str) -> Iterator[None]:
    """An exclusive OS advisory lock (flock) named after `key`, under `lock_dir`.

    Lock files are never put in a repository and never deleted: the kernel
    releases the lock when its holder dies, so a crash never leaves it stuck.
    (fcntl directly rather than the filelock package: this is on the hook path,
    and importing filelock costs more than the whole nothing-new run.)
    """
    ensure_dir(lock_dir)
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    fd = os.open(os.path.join(lock_dir, f"{name}-{digest}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around a bulk read.

    Reading a large spool creates millions of small acyclic objects (freed by
    reference counting); the collector's repeated passes over them cost about a
    third of a sweep and find nothing.

    Only the main thread pauses it.  The collector is one switch for the process: in
    the server's request threads, overlapping pauses kept it off most of the time, and
    a thread that read "off" while another was about to turn it back on then turned it
    off for good, after which every request's cycles stayed in memory.
    """
    import gc
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
