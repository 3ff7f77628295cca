"""The read model under real processes: kill -9 at many points of an update, then
the next command repairs it and prints what a fresh run prints; readers and writers
at once never fail, never block each other for good, never print a wrong document."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
PY = sys.executable


def _env(home: Path, spool: Path, workdir: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("M1ND_", "GIT_"))}
    env.update(M1ND_HOME=str(home), M1ND_SPOOL=str(spool), NO_COLOR="1", HOME=str(workdir), COLUMNS="80")
    return env


@pytest.fixture
def big(tmp_path):
    """A generated spool of 20,000 letters over 4 repositories, filed once."""
    roots = tmp_path / "roots"
    spool = tmp_path / "spool.jsonl"
    subprocess.run([PY, str(BENCH / "generate.py"), str(spool), "--letters", "20000", "--repos", "4",
                    "--roots-dir", str(roots), "--seed", "3"], check=True)
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    paths = []
    for i in range(4):
        root = roots / f"repo-{i:03d}"
        root.mkdir(parents=True, exist_ok=True)
        paths.append(str(root))
    (home / "roster.json").write_bytes(orjson.dumps({"roots": paths}))
    env = _env(home, spool, tmp_path)
    subprocess.run([PY, "-m", "m1nd", "distribute"], env=env, cwd=tmp_path, check=True, capture_output=True)
    return tmp_path, home, spool, env


def _run(env, cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "m1nd", *args], env=env, cwd=cwd, capture_output=True, timeout=300)


READS = (("--inbox-sweep", "--no-distribute"), ("sweep", "--no-distribute", "--state", "all"),
         ("box", "repo-001", "--json"), ("doctor", "--json", "--now", "2026-06-01T00:00:00Z"))


def _fresh(env, cwd, home) -> list[bytes]:
    shutil.rmtree(home / "state" / "readmodel.sqlite3", ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        (home / "state" / f"readmodel.sqlite3{suffix}").unlink(missing_ok=True)
    return [_run(env, cwd, *args).stdout for args in READS]


def _kill_at(env, cwd, delay: float) -> bool:
    """Start a read, kill -9 it after `delay` seconds; True when it was still running."""
    proc = subprocess.Popen([PY, "-m", "m1nd", "--inbox-sweep", "--no-distribute"], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return proc.wait() == -signal.SIGKILL


@pytest.mark.slow
def test_kill_9_at_many_points_of_an_update_then_the_next_command_prints_what_a_fresh_run_prints(big):
    cwd, home, spool, env = big
    expected = _fresh(env, cwd, home)
    for suffix in ("", "-wal", "-shm"):
        (home / "state" / f"readmodel.sqlite3{suffix}").unlink(missing_ok=True)
    start = time.monotonic()
    _run(env, cwd, "--inbox-sweep", "--no-distribute")
    full = time.monotonic() - start  # one rebuild, by the very command the kills hit
    points = [full * f / 10 for f in range(1, 10)] + [0.05, 0.15]
    killed = 0
    for i, delay in enumerate(points):
        if i % 2:  # half the kills hit a first build, half an incremental update
            for suffix in ("", "-wal", "-shm"):
                (home / "state" / f"readmodel.sqlite3{suffix}").unlink(missing_ok=True)
        else:
            subprocess.run([PY, str(BENCH / "generate.py"), str(spool), "--letters", "300", "--repos", "4",
                            "--roots-dir", str(cwd / "roots"), "--seed", str(100 + i), "--append"], check=True)
            expected = None
        killed += _kill_at(env, cwd, delay)
        after = [_run(env, cwd, *args) for args in READS]
        assert all(r.returncode == 0 for r in after), [r.stderr[-300:] for r in after]
        fresh = _fresh(env, cwd, home) if expected is None else expected
        assert [r.stdout for r in after] == fresh, f"after a kill at {delay:.2f}s"
        expected = fresh
    assert killed >= len(points) // 2, "most kills must land while the update runs"


@pytest.mark.slow
def test_readers_and_writers_at_once_all_succeed_and_agree(big):
    cwd, home, spool, env = big
    readers = [subprocess.Popen([PY, "-c", (
        "import subprocess, sys\n"
        "for _ in range(4):\n"
        "    r = subprocess.run([sys.executable, '-m', 'm1nd', '--inbox-sweep', '--no-distribute'], capture_output=True)\n"
        "    if r.returncode != 0: sys.stderr.buffer.write(r.stderr); sys.exit(1)\n"
        "    if not r.stdout.endswith(b'}\\n'): sys.exit('torn document')\n")], env=env, cwd=cwd,
        stderr=subprocess.PIPE) for _ in range(3)]
    writer = subprocess.Popen([PY, "-c", (
        "import subprocess, sys\n"
        "for i in range(6):\n"
        "    for args in (['write', '--repo', 'repo-002', '--what', f'concurrent {i}'], ['distribute'], ['box', 'repo-002']):\n"
        "        r = subprocess.run([sys.executable, '-m', 'm1nd', *args], capture_output=True)\n"
        "        if r.returncode != 0: sys.stderr.buffer.write(r.stderr); sys.exit(1)\n")], env=env, cwd=cwd,
        stderr=subprocess.PIPE)
    for proc in readers + [writer]:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-500:]
    settled = [_run(env, cwd, *args).stdout for args in READS]
    assert settled == _fresh(env, cwd, home)
    doc = orjson.loads(settled[0])
    assert sum(1 for l in doc["letters"] if l["what"].startswith("concurrent ")) == 6
