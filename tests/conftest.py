"""Hermetic test setup shared by every test.

Each test gets its own HOME, M1ND_HOME, clock, agent and git identity, runs in a
temporary working directory outside any git work tree, and fails if it touched the
real `~/.m1nd`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

REAL_M1ND = Path(os.path.expanduser("~")) / ".m1nd"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "spools"
FIXED_NOW = "2026-05-03T09:00:00Z"


def _tree_state(path: Path):
    if not path.exists() and not path.is_symlink():
        return None
    state = []
    for dirpath, dirnames, filenames in os.walk(path):
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            state.append((p, st.st_size, st.st_mtime_ns))
    return sorted(state)


@pytest.fixture(autouse=True)
def hermetic(tmp_path, tmp_path_factory, monkeypatch):
    """Isolated HOME / M1ND_HOME / clock / git identity; guard the real ~/.m1nd."""
    before = _tree_state(REAL_M1ND)
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    for key in list(os.environ):
        if key.startswith(("M1ND_", "GIT_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("M1ND_HOME", str(tmp_path / "m1nd-home"))
    monkeypatch.setenv("M1ND_NOW", FIXED_NOW)
    # one compiled secret-rule cache for the whole session (compiling costs seconds)
    monkeypatch.setenv("M1ND_RULE_CACHE", str(tmp_path_factory.getbasetemp() / "rule-cache"))
    monkeypatch.setenv("M1ND_AGENT", "agent-a")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "agent-a")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "agent-a@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "agent-a")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "agent-a@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.chdir(work)
    yield
    assert _tree_state(REAL_M1ND) == before, "a test touched the real ~/.m1nd"


@pytest.fixture
def m1nd_home(tmp_path) -> Path:
    return tmp_path / "m1nd-home"


@pytest.fixture
def spool_path(m1nd_home) -> Path:
    return m1nd_home / "field-reports.jsonl"


def git_init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    return path


@pytest.fixture
def make_repo(tmp_path):
    """Create a real git repository under the test's workspace: make_repo("repo-a")."""

    def make(name: str, parent: Path | None = None) -> Path:
        return git_init((parent or tmp_path / "src") / name)

    return make


def write_spool(path: Path, lines: list) -> None:
    """Write letters (dicts become compact JSON, bytes are written as they are)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        for line in lines:
            fh.write((orjson.dumps(line) if isinstance(line, dict) else line) + b"\n")


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return orjson.loads(self.stdout)


def read_terminal(fd: int) -> bytes:
    """All a pseudo-terminal's other side was given, read until its last writer closed
    it (Linux answers EIO then)."""
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    return out


def run_on_a_tty(args: list[str], env_changes: dict) -> tuple[int, bytes]:
    """(exit code, what reached the terminal) of `python -m m1nd ARGS` with stdout and
    stderr on a pseudo-terminal; `env_changes` sets variables, None removes one."""
    import pty

    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"}
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "m1nd", *args], stdout=slave, stderr=slave,
                                stdin=subprocess.DEVNULL, env=env)
        os.close(slave)
        out = read_terminal(master)
        code = proc.wait(timeout=60)
    finally:
        os.close(master)
    return code, out


def run_cli(*args: str, cwd: Path | str | None = None) -> Result:
    """Run `m1nd ARGS` in-process through the real entry point, stdout and stderr apart."""
    from typer.testing import CliRunner

    from m1nd.cli.main import main

    runner = CliRunner()
    old = os.getcwd()
    code = 0
    with runner.isolation() as (out, err, _):
        if cwd is not None:
            os.chdir(cwd)
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            os.chdir(old)
            # A real process flushes at exit; in-process, unflushed text would be lost.
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return Result(code, stdout, stderr)


@pytest.fixture
def cli():
    return run_cli


def run_script(*args: str, cwd=None, env=None, timeout=120) -> subprocess.CompletedProcess:
    """Run the installed `m1nd` entry point in a real subprocess."""
    return subprocess.run([sys.executable, "-m", "m1nd", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=timeout)
