"""A rebuild of the read model (a new home, or after `rm -rf <home>/state`) is a
one-time wait: on a terminal it shows a progress bar on stderr, elsewhere nothing,
and the output is the same either way."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import orjson

from conftest import read_terminal

GENERATE = Path(__file__).resolve().parents[2] / "bench" / "generate.py"
REPO_ROOT = str(Path(__file__).resolve().parents[2])


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("M1ND_", "GIT_"))}
    env.update(M1ND_HOME=str(tmp_path / "home"), M1ND_SPOOL=str(tmp_path / "spool.jsonl"), HOME=str(tmp_path),
               NO_COLOR="1", PYTHONPATH=REPO_ROOT, COLUMNS="100")
    return env


def _mailbox(tmp_path: Path) -> None:
    """A spool of about 2 MB (past the bar's threshold) for two repositories."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    roots = [str(tmp_path / "roots" / f"repo-{i:03d}") for i in range(2)]
    for root in roots:
        os.makedirs(root)
    (home / "roster.json").write_bytes(orjson.dumps({"roots": roots}))
    subprocess.run([sys.executable, str(GENERATE), str(tmp_path / "spool.jsonl"), "--letters", "6000",
                    "--repos", "2", "--roots-dir", str(tmp_path / "roots")], check=True)


def _read_on_terminal(argv: list[str], env: dict, out_path: Path) -> tuple[int, bytes]:
    """Run with stderr on a pseudo-terminal (stdout to a file): (exit code, what the terminal got)."""
    master, slave = pty.openpty()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=slave, stdin=subprocess.DEVNULL,
                                cwd=env["HOME"])
    os.close(slave)
    got = read_terminal(master)
    os.close(master)
    return proc.wait(timeout=300), got


def test_a_rebuild_on_a_terminal_shows_a_progress_bar_and_prints_what_a_rebuild_elsewhere_prints(tmp_path):
    _mailbox(tmp_path)
    env = _env(tmp_path)
    argv = [sys.executable, "-m", "m1nd", "--inbox-sweep", "--no-distribute"]
    state = tmp_path / "home" / "state"

    code, terminal = _read_on_terminal(argv, env, tmp_path / "tty.json")
    assert code == 0, terminal.decode(errors="replace")
    assert b"indexing the mailbox" in terminal

    shutil.rmtree(state)
    piped = subprocess.run(argv, env=env, capture_output=True, cwd=env["HOME"], timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert b"indexing the mailbox" not in piped.stderr
    assert piped.stdout == (tmp_path / "tty.json").read_bytes()

    # Brought current with nothing new: no bar, even on a terminal.
    code, terminal = _read_on_terminal(argv, env, tmp_path / "again.json")
    assert code == 0
    assert b"indexing the mailbox" not in terminal
    assert (tmp_path / "again.json").read_bytes() == piped.stdout
