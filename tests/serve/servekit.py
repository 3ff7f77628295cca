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

import pytest

from conftest import run_script

ARTIFACTS = Path(os.environ.get("M1ND_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "artifacts")


class Server:
    def __init__(self, *args: str, cwd=None, env=None, token: bool = False) -> None:
        # stderr goes to a file: a pipe nobody reads could fill and stall the server
        self.err = tempfile.TemporaryFile()
        if not token and "--allow-remote" not in args:
            args = ("--no-token", *args)  # these tests look at the mailbox, not at the token
        self.proc = subprocess.Popen([sys.executable, "-m", "m1nd", "serve", "--port", "0", *args],
                                     cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=self.err)
        self.line = self._first_line(timeout=30)
        self.url = self.line.split("?", 1)[0]
        self.token = self.line.split("?token=", 1)[1] if "?token=" in self.line else None
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


HOSTILE = ('<script>alert("x")</script><b>bold</b> <img src=x onerror=alert(1)> '
           "&amp; [bold]y[/bold] \x1b[31mred")


def m1nd(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return run_script(*args, cwd=cwd)


def write(*args: str) -> str:
    done = m1nd("write", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().strip()


@pytest.fixture
def mailbox(make_repo, tmp_path):
    """Two consenting-or-not repositories on the roster, letters of every fate, a
    reply thread, a medulla letter, a waiting letter and a hostile one, filed."""
    a, b = make_repo("repo-a"), make_repo("repo-b")
    for root in (a, b):
        assert m1nd("roster", "add", str(root)).returncode == 0
    ids = {
        "bug": write("--what", "seek returned a deleted node", "--repo", "repo-a", "--class", "bug",
                     "--tool", "seek", "--agent", "agent-a", "--ts", "2026-05-01T10:00:00Z"),
        "hostile": write("--what", HOSTILE, "--repo", "repo-a", "--class", "ux", "--agent", "agent-b",
                         "--snippet", "<svg onload=alert(2)>", "--ts", "2026-05-02T10:00:00Z"),
        "external": write("--what", "browser tool failed", "--repo", "repo-b", "--tool", "playwright",
                          "--ts", "2026-04-20T08:00:00Z"),
        "medulla": write("--what", "a thought for every project", "--brain", "medulla",
                         "--ts", "2026-05-02T12:00:00Z"),
        "waiting": write("--what", "for a repository not here", "--repo", "elsewhere",
                         "--ts", "2026-05-02T13:00:00Z"),
    }
    done = m1nd("pickup", ids["bug"], "--what", "looking at it")
    assert done.returncode == 0, done.stderr
    ids["pickup"] = done.stdout.decode().split()[0]
    done = m1nd("answer", ids["bug"], "--what", "fixed in abc123", "--disposition", "fixed")
    assert done.returncode == 0, done.stderr
    ids["receipt"] = done.stdout.decode().split()[0]
    assert m1nd("distribute").returncode == 0
    return {"a": a, "b": b, "ids": ids}
