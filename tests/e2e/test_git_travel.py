"""Boxes travel end to end (spec/git.md section 4).

A bare remote and three "machines", each with its own M1ND_HOME (so its own spool)
and its own clone.  Every m1nd and git command is a real process; git calls the
merge driver that `m1nd init` (or `m1nd hooks install`) configured.  After any
interleaving, once everyone has pulled everyone's last push, every clone holds the
same box, each letter once, no conflict markers, and `m1nd --inbox-sweep` prints the
same letters everywhere.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from m1nd.letters import letter_id

MARKERS = (b"<<<<<<< ", b"=======", b">>>>>>> ")


def run(args, cwd, env, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({done.returncode}) in {cwd}:\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


class Machine:
    def __init__(self, name: str, base: Path, remote: Path) -> None:
        self.name = name
        self.home = base / name / "home"
        self.clone = base / name / "repo-a"
        self.env = {**os.environ, "M1ND_HOME": str(self.home), "M1ND_AGENT": f"agent-{name}"}
        self.spool = self.home / "field-reports.jsonl"
        self.written: list[bytes] = []
        run(["git", "clone", "-q", str(remote), str(self.clone)], base, self.env)

    def git(self, *args, check=True):
        return run(["git", *args], self.clone, self.env, check)

    def m1nd(self, *args, check=True):
        return run([sys.executable, "-m", "m1nd", *args], self.clone, self.env, check)

    def write(self, what: str, **extra) -> str:
        """An agent on this machine files a letter into its own spool."""
        raw = orjson.dumps({"ts": "2026-05-01T10:00:00Z", "agent": f"agent-{self.name}", "class": "bug",
                            "repo": "repo-a", "what": what, **extra})
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.spool, "ab") as fh:
            fh.write(raw + b"\n")
        self.written.append(raw)
        return letter_id(raw)

    def distribute(self):
        self.m1nd("distribute")

    def commit(self, message: str) -> None:
        notes = self.clone / f"notes-{self.name}.txt"  # some code travels in the same commit
        with open(notes, "a") as fh:
            fh.write(message + "\n")
        self.git("add", notes.name, ".m1nd", ".gitattributes")
        if self.git("diff", "--cached", "--quiet", check=False).returncode:
            self.git("commit", "-qm", message)

    def pull(self, rebase: bool = False) -> None:
        self.git("pull", "-q", "--rebase" if rebase else "--no-rebase", "--no-edit", "origin", "main")

    def push(self, rebase: bool = False) -> None:
        if self.git("push", "-q", "origin", "HEAD:main", check=False).returncode != 0:
            self.pull(rebase)
            self.git("push", "-q", "origin", "HEAD:main")

    def box(self) -> bytes:
        return (self.clone / ".m1nd" / "inbox.jsonl").read_bytes()

    def sweep_letters(self) -> list[dict]:
        return orjson.loads(self.m1nd("--inbox-sweep").stdout)["letters"]


@pytest.fixture
def world(tmp_path):
    remote = tmp_path / "remote" / "repo-a.git"
    remote.parent.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    seed = tmp_path / "seed"
    subprocess.run(["git", "clone", "-q", str(remote), str(seed)], check=True, capture_output=True)
    (seed / "README.md").write_text("# repo-a\n")
    subprocess.run(["git", "add", "README.md"], cwd=seed, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=seed, check=True)
    subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=seed, check=True)

    def machines(*names):
        return [Machine(n, tmp_path, remote) for n in names]

    return machines


def assert_converged(machines) -> None:
    boxes = [m.box() for m in machines]
    written = {letter_id(raw) for m in machines for raw in m.written}
    for m, box in zip(machines, boxes):
        assert box.endswith(b"\n")
        lines = box[:-1].split(b"\n")
        assert not [l for l in lines if l.startswith(MARKERS)], f"conflict markers on {m.name}"
        ids = [letter_id(l) for l in lines]
        assert len(ids) == len(set(ids)), f"a letter twice on {m.name}"
        assert set(ids) == written, f"{m.name} lacks letters or has strangers"
        assert m.git("status", "--porcelain").stdout == "", f"{m.name} is not clean"
    assert len({frozenset(b.split(b"\n")) for b in boxes}) == 1, "every clone holds the same lines"
    sweeps = [m.sweep_letters() for m in machines]
    assert all(s == sweeps[0] for s in sweeps), "--inbox-sweep lists the same letters everywhere"
    assert {l["id"] for l in sweeps[0]} == written


def test_add_add_both_first_commits_carry_the_box(world):
    a, b = world("a", "b")
    for m in (a, b):  # both consent independently, before either has pushed
        m.m1nd("init")
        m.write(f"found on {m.name}")
        m.write(f"found on {m.name}, again")
        m.distribute()
        m.commit(f"{m.name}: consent and first letters")
    a.push()
    b.push()  # rejected first: pulls (add/add on the box, the driver merges), then pushes
    a.pull()
    assert_converged([a, b])
    assert b.git("log", "-1", "--format=%p").stdout.count(" ") == 1, "b made a merge commit"


@pytest.mark.parametrize("seed", [7, 11])
def test_interleaved_write_distribute_commit_push_pull(world, seed):
    a, b, c = machines = world("a", "b", "c")
    rng = random.Random(seed)
    a.m1nd("init")
    a.write("the first letter")
    a.distribute()
    a.commit("a: consent")
    a.push()
    b.pull()
    b.m1nd("init")  # a fresh clone of a consented repository: configures its driver
    c.pull()
    c.m1nd("hooks", "install")  # c never distributes by hand: its hooks do, on every pull
    n = 0
    for step in range(24):
        m = rng.choice(machines)
        action = rng.choice(["write", "write", "distribute", "commit", "push", "pull", "pull-rebase"])
        if action == "write":
            n += 1
            answers = {}
            if n % 5 == 0 and m.written:  # now and then a reply, so fates travel too
                answers = {"answers": [letter_id(m.written[0])]}
            m.write(f"letter {n} by {m.name}", **answers)
        elif action == "distribute" and m is not c:
            m.distribute()
        elif action == "commit":
            if m is not c:
                m.distribute()
            m.commit(f"{m.name}: step {step}")
        elif action == "push":
            m.push(rebase=rng.random() < 0.5)
        elif action == "pull":
            m.pull()
        elif action == "pull-rebase":
            if m.git("status", "--porcelain").stdout:
                m.commit(f"{m.name}: before rebase")
            m.pull(rebase=True)
    # settle: each distributes, commits and pushes its last letters, then all pull
    for m in machines:
        m.distribute()
        m.commit(f"{m.name}: last letters")
        m.push()
    for m in machines:
        m.pull()
    assert_converged(machines)


def test_a_box_merges_the_same_way_under_rebase(world):
    a, b = world("a", "b")
    a.m1nd("init")
    a.write("a1")
    a.distribute()
    a.commit("a: consent")
    a.push()
    b.pull()
    b.m1nd("init")
    for i in range(3):  # both sides keep appending to the same box
        a.write(f"a{i + 2}")
        a.distribute()
        a.commit(f"a {i}")
        b.write(f"b{i}")
        b.distribute()
        b.commit(f"b {i}")
    a.push()
    b.push(rebase=True)
    a.pull(rebase=True)
    assert_converged([a, b])
    assert b.git("log", "--merges", "--format=%h").stdout == "", "b rebased, no merge commit"
