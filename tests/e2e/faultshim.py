"""Run m1nd with one fault injected at the operating-system call, as a real process.

    python faultshim.py ARGS...        (the same ARGS as `m1nd ARGS...`)

Nothing of m1nd is replaced: only `os.write`, `os.fsync`, `os.ftruncate` and
`os.replace` are wrapped, the way a full disk, a failing device or a kill -9 would
meet them.  Configured by the environment:

    FAULTSHIM_OP       write | fsync | ftruncate | replace   (default: write)
    FAULTSHIM_PATH     a file's path must contain this to be hit (required; for
                       replace, the destination path)
    FAULTSHIM_SKIP     let this many matching calls through first (default 0)
    FAULTSHIM_PARTIAL  write: bytes of the buffer that reach the file before the
                       fault (default: half the buffer; 0 = none)
    FAULTSHIM_ACTION   kill: SIGKILL this process at that point (nothing runs after)
                       ENOSPC, EIO, EDQUOT, ...: raise OSError with that errno, and
                       keep raising it for every later matching call (the disk
                       stays full)
    FAULTSHIM_MARK     if set, a file created when the fault fires (so a test can
                       tell "the fault point was reached" from "it never was")

A write fault is a short write: FAULTSHIM_PARTIAL bytes are written and their count
returned, as the kernel does when the disk fills up; the next call then fails (or
the process is killed right after the partial write).
"""

from __future__ import annotations

import errno
import os
import signal
import sys

_real = {name: getattr(os, name) for name in ("write", "fsync", "ftruncate", "replace")}


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


class Fault:
    def __init__(self, env) -> None:
        self.op = env.get("FAULTSHIM_OP", "write")
        self.path = env["FAULTSHIM_PATH"]
        self.skip = int(env.get("FAULTSHIM_SKIP", "0"))
        partial = env.get("FAULTSHIM_PARTIAL")
        self.partial = None if partial in (None, "") else int(partial)
        self.action = env.get("FAULTSHIM_ACTION", "ENOSPC")
        self.mark = env.get("FAULTSHIM_MARK")
        self.tripped = False
        self.pending_error = False  # a short write was returned; the next call fails

    def matches(self, path: str) -> bool:
        return self.path in path

    def fire(self) -> None:
        if self.mark and not self.tripped:
            with open(self.mark, "wb"):
                pass
        self.tripped = True
        if self.action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)

    def error(self, src: str | None = None, dst: str | None = None) -> OSError:
        """The error the kernel would give: calls on a descriptor name no file (as
        os.write, os.fsync and os.ftruncate really fail); os.replace names both."""
        code = getattr(errno, self.action)
        if src is None:
            return OSError(code, os.strerror(code))
        return OSError(code, os.strerror(code), src, None, dst)

    def due(self, path: str) -> bool:
        """True when this matching call is the one (or after the one) that fails."""
        if not self.matches(path):
            return False
        if self.tripped:
            return True
        if self.skip > 0:
            self.skip -= 1
            return False
        return True

    # -- wrappers ----------------------------------------------------------------
    def write(self, fd, data):
        if self.op != "write":
            return _real["write"](fd, data)
        path = _fd_path(fd)
        if not self.due(path):
            return _real["write"](fd, data)
        if self.tripped:  # the disk stays full
            raise self.error()
        view = memoryview(data)
        cut = len(view) // 2 if self.partial is None else min(self.partial, len(view))
        done = _real["write"](fd, view[:cut]) if cut else 0
        self.fire()  # a kill ends the process here, with the partial write on disk
        if done:
            return done  # a short write; the caller's next call raises
        raise self.error()

    def fsync(self, fd):
        path = _fd_path(fd)
        if self.op == "fsync" and self.due(path):
            self.fire()
            raise self.error()
        return _real["fsync"](fd)

    def ftruncate(self, fd, length):
        path = _fd_path(fd)
        if self.op == "ftruncate" and self.due(path):
            # The truncation itself happens; the fault comes right after it.
            _real["ftruncate"](fd, length)
            self.fire()
            raise self.error()
        return _real["ftruncate"](fd, length)

    def replace(self, src, dst, **kwargs):
        if self.op == "replace" and self.due(os.fspath(dst)):
            self.fire()
            raise self.error(os.fspath(src), os.fspath(dst))
        return _real["replace"](src, dst, **kwargs)


def install(env=os.environ) -> Fault:
    fault = Fault(env)
    os.write = fault.write
    os.fsync = fault.fsync
    os.ftruncate = fault.ftruncate
    os.replace = fault.replace
    return fault


if __name__ == "__main__":
    install()
    from m1nd.cli.main import main

    main(sys.argv[1:])
