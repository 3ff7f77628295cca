"""Files that are not what they should be, and many homes at once, as real processes
(mailbox contract sections 1 and 4): a FIFO, a device or a directory where the spool,
a box or a state file belongs is a one-line error or a refusal, never a hang; a box
with more than one hard link is refused; an empty `.git` does not make a root; two
homes filing into one repository exclude each other on the box itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import git_init, write_spool

TIMEOUT = 20  # a hang fails the test instead of stalling the run


def m1nd(*args: str, cwd=None, env=None, timeout=TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "m1nd", *args], cwd=cwd, env=env or dict(os.environ),
                          capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line_error(proc, *names: str) -> None:
    err = proc.stderr.decode()
    assert b"Traceback" not in proc.stderr, err
    assert err.count("\n") == 1, err
    for name in names:
        assert name in err, err


def letter(what: str, repo: str = "repo-a") -> bytes:
    return orjson.dumps({"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "repo": repo, "what": what})


@pytest.fixture
def fifo_spool(spool_path) -> Path:
    spool_path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(spool_path)
    return spool_path


@pytest.mark.parametrize("args", [["distribute"], ["sweep"], ["sweep", "--json", "--no-distribute"], ["--inbox-sweep"],
                                  ["write", "--what", "hi"]])
def test_a_fifo_spool_is_a_one_line_error_never_a_hang(fifo_spool, args):
    proc = m1nd(*args)
    assert proc.returncode == 1, proc.stderr
    if "--json" in args or "--inbox-sweep" in args:  # the error document, on stdout
        message = orjson.loads(proc.stdout)["error"]["message"]
        assert str(fifo_spool) in message and "FIFO" in message and proc.stderr == b""
    else:
        one_line_error(proc, str(fifo_spool), "FIFO")


def test_doctor_with_a_fifo_spool_runs_and_says_why(fifo_spool):
    proc = m1nd("doctor", "--json")
    assert proc.returncode == 1
    doc = orjson.loads(proc.stdout)
    assert doc["mailbox"] is None
    spool = next(c for c in doc["checks"] if c["name"] == "spool")
    assert spool["status"] == "error" and "FIFO" in spool["message"]


def test_a_hook_with_a_fifo_spool_returns_at_once(fifo_spool, make_repo):
    repo = make_repo("repo-a")
    proc = m1nd("hook", "run", "post-checkout", cwd=repo)
    assert proc.returncode == 0
    assert b"Traceback" not in proc.stderr


def test_a_device_as_the_spool_is_an_error(tmp_path):
    proc = m1nd("distribute", "--spool", "/dev/zero")
    assert proc.returncode == 1
    one_line_error(proc, "/dev/zero", "device")


def test_a_directory_as_the_spool_is_an_error(spool_path):
    spool_path.mkdir(parents=True)
    proc = m1nd("distribute")
    assert proc.returncode == 1
    one_line_error(proc, str(spool_path), "directory")


def test_a_fifo_box_is_refused_and_the_rest_goes_on(spool_path, tmp_path):
    a, b = tmp_path / "repo-a", tmp_path / "repo-b"
    (a / ".m1nd").mkdir(parents=True)
    b.mkdir()
    os.mkfifo(a / ".m1nd" / "inbox.jsonl")
    write_spool(spool_path, [letter("to a"), letter("to b", "repo-b")])
    proc = m1nd("distribute", "--root", str(a), "--root", str(b))
    assert proc.returncode == 1
    assert b"refused" in proc.stderr and b"Traceback" not in proc.stderr
    assert (b / ".m1nd" / "inbox.jsonl").read_bytes() == letter("to b", "repo-b") + b"\n"
    sweep = m1nd("sweep", "--json", "--no-distribute", "--root", str(a), "--root", str(b))
    assert sweep.returncode == 1 and orjson.loads(sweep.stdout)["total"] == 2
    doctor = orjson.loads(m1nd("doctor", "--json", "--root", str(a)).stdout)
    assert next(c for c in doctor["checks"] if c["name"] == "boxes")["status"] == "error"


@pytest.mark.parametrize("name", ["distribute.json", "spool-locations.bin"])
def test_a_fifo_state_file_never_hangs(spool_path, m1nd_home, tmp_path, name):
    root = tmp_path / "repo-a"
    root.mkdir()
    write_spool(spool_path, [letter("one")])
    (m1nd_home / "state").mkdir(parents=True, exist_ok=True)
    os.mkfifo(m1nd_home / "state" / name)
    proc = m1nd("distribute", "--root", str(root))
    assert b"Traceback" not in proc.stderr
    if proc.returncode != 0:
        one_line_error(proc, name)
    else:
        assert (root / ".m1nd" / "inbox.jsonl").read_bytes() == letter("one") + b"\n"


def test_a_fifo_box_index_never_hangs(spool_path, m1nd_home, tmp_path):
    root = tmp_path / "repo-a"
    root.mkdir()
    write_spool(spool_path, [letter("one")])
    assert m1nd("distribute", "--root", str(root)).returncode == 0
    (index,) = (m1nd_home / "state" / "boxes").iterdir()
    index.unlink()
    os.mkfifo(index)
    write_spool(spool_path, [letter("two")])
    proc = m1nd("distribute", "--json", "--root", str(root))
    assert proc.returncode == 0, proc.stderr
    assert (root / ".m1nd" / "inbox.jsonl").read_bytes() == letter("one") + b"\n" + letter("two") + b"\n"


def test_a_box_with_a_second_hard_link_is_refused_and_the_outside_file_untouched(spool_path, tmp_path):
    root = tmp_path / "repo-a"
    (root / ".m1nd").mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious\n")
    os.link(outside, root / ".m1nd" / "inbox.jsonl")
    write_spool(spool_path, [letter("one")])
    proc = m1nd("distribute", "--root", str(root))
    assert proc.returncode == 1
    assert b"hard link" in proc.stderr and b"Traceback" not in proc.stderr
    assert outside.read_bytes() == b"precious\n"
    doctor = orjson.loads(m1nd("doctor", "--json", "--root", str(root)).stdout)
    boxes = next(c for c in doctor["checks"] if c["name"] == "boxes")
    assert boxes["status"] == "error" and "hard link" in boxes["message"]


def test_an_empty_git_file_planted_in_a_directory_does_not_make_it_a_root(tmp_path, spool_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".git").write_bytes(b"")
    write_spool(spool_path, [letter("one", "plain")])
    proc = m1nd("distribute", "--json", cwd=plain)
    assert proc.returncode == 0, proc.stderr
    assert orjson.loads(proc.stdout)["pending"] == ["plain"]
    assert not (plain / ".m1nd").exists()
    real = git_init(tmp_path / "real")
    sub = real / "sub"
    sub.mkdir()
    write_spool(spool_path, [letter("two", "real")])
    proc = m1nd("distribute", "--json", cwd=sub)
    assert orjson.loads(proc.stdout)["pending"] == ["plain"]
    assert (real / ".m1nd" / "inbox.jsonl").read_bytes() == letter("two", "real") + b"\n"


@pytest.mark.slow
def test_homes_filing_one_repository_at_once_file_every_letter_exactly_once(tmp_path):
    """Every home's spool holds the same letters (one agent's reports reaching several
    users' spools): distributors of all homes start together each round, and writers
    append more meanwhile.  Without a lock on the box itself, each home's distributor
    sees the box without the others' letters and appends them again."""
    repo = git_init(tmp_path / "repo-a")
    homes = [tmp_path / f"home-{i}" for i in range(4)]
    expected: set[bytes] = set()
    procs = []
    for round_ in range(4):
        batch = [letter(f"round {round_} letter {i} " + "x" * 400, str(repo)) for i in range(4000)]
        expected.update(batch)
        for home in homes:
            write_spool(home / "field-reports.jsonl", batch)
        started = [subprocess.Popen([sys.executable, "-m", "m1nd", "distribute", "--root", str(repo)],
                                    env=dict(os.environ, M1ND_HOME=str(home)), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE) for home in homes]
        # more writers join while the distributors run
        started += [subprocess.Popen([sys.executable, "-m", "m1nd", "write", "--repo", str(repo), "--what",
                                      f"late {home.name} {round_}"], env=dict(os.environ, M1ND_HOME=str(home)),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) for home in homes]
        for p in started:
            _, err = p.communicate(timeout=240)
            assert p.returncode == 0, err
        procs += started
    for home in homes:  # file the late letters too
        assert m1nd("distribute", "--root", str(repo), env=dict(os.environ, M1ND_HOME=str(home)),
                    timeout=240).returncode == 0
    lines = (repo / ".m1nd" / "inbox.jsonl").read_bytes().splitlines()
    assert len(lines) == len(set(lines)), f"{len(lines) - len(set(lines))} letters filed twice"
    late = {l for l in lines if b'"late ' in l}
    assert len(late) == len(homes) * 4
    assert set(lines) - late == expected
