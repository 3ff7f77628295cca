"""A real `m1nd serve` process for tests: started on 127.0.0.1 with a free port,
its URL read from the one line it prints, stopped with a signal."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARTIFACTS = Path(os.environ.get("M1ND_TEST_ARTIFACTS") or Path(__file__).resolve().parents[2] / "test-artifacts")


class Server:
    def __init__(self, *args: str, cwd=None, env=None) -> None:
        # stderr goes to a file: a pipe nobody reads could fill and stall the server
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "m1nd", "serve", "--port", "0", *args],
                                     cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=self.err)
        self.line = self._first_line(timeout=30)
        self.url = self.line.split("?", 1)[0]
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))

    def _first_line(self, timeout: float) -> str:
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        buf = b""
        deadline = time.monotonic() + timeout
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                self.proc.kill()
                raise AssertionError(f"no URL line within {timeout}s: {self.stderr()!r}")
            chunk = os.read(self.proc.stdout.fileno(), 1)
            if not chunk:
                raise AssertionError(f"server exited {self.proc.wait()}: {self.stderr()}")
            buf += chunk
        return buf.decode().rstrip("\n")

    def stop(self, sig=signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"server did not stop within {timeout}s of {sig!r}") from None
        finally:
            self.proc.stdout.close()

    def stderr(self) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        if self.proc.poll() is None:
            self.stop()
