"""No letter ends up in no box (spec/git.md section 3), under load: a distribution racing
a merge in real processes, and a seeded random loop of writes, distributions, commits,
checkouts, merges, rebases, pulls and pushes over two clones (two machines, two homes).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitworld import assert_each_letter_once, clean, commit_file, consent, git, m1nd, spool_ids, write_letters


def _clone(tmp_path: Path, origin: Path, where: str, env: dict) -> Path:
    repo = tmp_path / where / "repo-a"
    repo.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(origin), str(repo), env=env)
    return repo


def test_a_distribution_racing_a_merge_loses_no_letter(tmp_path, make_repo, spool_path):
    repo = make_repo("repo-a")
    commit_file(repo, "code.txt", "v1\n", "start")
    consent(repo)
    done = m1nd("hooks", "install", "--stage", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    arrived = []
    for round_ in range(6):
        git(repo, "checkout", "-q", "-b", f"side{round_}")
        line = f'{{"repo": "repo-a", "what": "from another machine {round_}"}}\n'
        with open(repo / ".m1nd" / "inbox.jsonl", "a") as fh:
            fh.write(line)
        arrived.append(line.rstrip("\n"))
        commit_file(repo, f"side{round_}.txt", "s\n", f"side {round_}")
        git(repo, "checkout", "-q", "main")
        write_letters(spool_path, *[f"race {round_}.{i}" for i in range(300)])
        distributor = subprocess.Popen([sys.executable, "-m", "m1nd", "distribute"], cwd=repo,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        merged = git(repo, "merge", "-q", "--no-edit", f"side{round_}", check=False)
        assert distributor.wait(timeout=120) == 0, distributor.stderr.read()
        if merged.returncode != 0:  # the distribution dirtied the box first, as any edit would
            assert "would be overwritten" in merged.stderr, merged.stderr
            git(repo, "commit", "-qam", f"box {round_}")
            git(repo, "merge", "-q", "--no-edit", f"side{round_}")
        git(repo, "commit", "-q", "--allow-empty", "-am", f"after round {round_}")  # a safe filing
    assert m1nd("distribute", cwd=repo).returncode == 0
    from m1nd.letters import letter_id

    assert_each_letter_once(repo, spool_ids(spool_path, "repo-a") + [letter_id(l.encode()) for l in arrived],
                            "after the race and a safe filing")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [7])
def test_a_random_loop_over_two_clones_ends_with_every_letter_in_its_box_on_both(tmp_path, seed):
    seed = int(os.environ.get("M1ND_LOOP_SEED", seed))  # to explore other interleavings by hand
    rng = random.Random(seed)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    envs = {name: {**os.environ, "M1ND_HOME": str(tmp_path / f"home-{name}")} for name in ("a", "b")}
    clones = {}
    first = _clone(tmp_path, origin, "a", envs["a"])
    git(first, "checkout", "-q", "-b", "main")
    commit_file(first, "code.txt", "v1\n", "start")
    consent(first, env=envs["a"])
    git(first, "push", "-q", "-u", "origin", "main")
    clones["a"] = first
    clones["b"] = _clone(tmp_path, origin, "b", envs["b"])
    for name, repo in clones.items():
        done = m1nd("hooks", "install", "--stage", str(repo), cwd=repo, env=envs[name])
        assert done.returncode == 0, done.stderr
    spools = {name: Path(envs[name]["M1ND_HOME"]) / "field-reports.jsonl" for name in clones}
    serial = [0]
    log: list[str] = []

    def run(name: str, *args: str, tidy: bool = True) -> subprocess.CompletedProcess:
        """A git command that must succeed and (`tidy`) leave the work tree clean."""
        done = git(clones[name], *args, env=envs[name], check=False)
        log.append(f"{name}: git {' '.join(args)} -> {done.returncode}")
        assert done.returncode == 0, "\n".join(log[-15:]) + "\n" + done.stdout + done.stderr
        if tidy:
            status = git(clones[name], "status", "--porcelain").stdout
            assert status == "", "\n".join(log[-15:]) + "\n" + status
        return done

    def branches(name: str) -> list[str]:
        out = git(clones[name], "for-each-ref", "--format=%(refname:short)", "refs/heads").stdout.split()
        return out or ["main"]

    def new_file(name: str) -> None:
        serial[0] += 1
        path = clones[name] / f"f{serial[0]}.txt"
        path.write_text(f"{serial[0]}\n")
        run(name, "add", path.name, tidy=False)
        run(name, "commit", "-qm", f"work {serial[0]}")  # the pre-commit hook: a safe filing

    deadline = time.monotonic() + 40
    steps = 0
    while time.monotonic() < deadline and steps < 400:
        steps += 1
        name = rng.choice(["a", "b"])
        repo = clones[name]
        op = rng.choice(["write", "write", "distribute", "commit", "commit", "branch", "checkout", "merge",
                         "rebase", "pull", "pull-rebase", "push", "amend"])
        current = git(repo, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
        if op == "write":
            write_letters(spools[name], *[f"{name} step {steps}.{i}" for i in range(rng.randint(1, 4))])
            log.append(f"{name}: wrote letters")
        elif op == "distribute":
            done = m1nd("distribute", cwd=repo, env=envs[name])
            assert done.returncode == 0, done.stderr
            log.append(f"{name}: m1nd distribute")
            if not clean(repo):  # a user commits the box they just filed (or git would refuse a switch)
                run(name, "commit", "-qam", f"box {steps}")
        elif op == "commit":
            new_file(name)
        elif op == "amend":
            if git(repo, "rev-list", "--count", "HEAD").stdout.strip() != "1":
                run(name, "commit", "-q", "--amend", "--no-edit")
        elif op == "branch" and len(branches(name)) < 4:
            run(name, "checkout", "-q", "-b", f"topic-{name}-{steps}")
        elif op == "checkout":
            run(name, "checkout", "-q", rng.choice(branches(name)))
        elif op == "merge":
            other = rng.choice(branches(name))
            if other != current:
                run(name, "merge", "-q", "--no-edit", other)
        elif op == "rebase":
            other = rng.choice(branches(name))
            if other != current:
                run(name, "rebase", "-q", other)
        elif op in ("pull", "pull-rebase") and current == "main":
            if git(repo, "ls-remote", "--heads", "origin", "main").stdout.strip():
                run(name, "pull", "-q", "--no-edit", "--rebase" if op == "pull-rebase" else "--no-rebase",
                    "origin", "main")
        elif op == "push" and current == "main":
            if git(repo, "ls-remote", "--heads", "origin", "main").stdout.strip():
                run(name, "pull", "-q", "--no-edit", "--no-rebase", "origin", "main")
            run(name, "push", "-q", "origin", "main")

    # Wind down: every branch into main, a safe filing, and both clones in sync.
    for _ in range(2):
        for name in ("a", "b"):
            run(name, "checkout", "-q", "main")
            for other in branches(name):
                if other != "main":
                    run(name, "merge", "-q", "--no-edit", other)
            run(name, "pull", "-q", "--no-edit", "--no-rebase", "origin", "main")
            new_file(name)  # the pre-commit hook files what waits
            run(name, "push", "-q", "origin", "main")
    run("a", "pull", "-q", "--no-edit", "--no-rebase", "origin", "main")
    every = spool_ids(spools["a"], "repo-a") + spool_ids(spools["b"], "repo-a")
    assert len(every) > 10, "the loop wrote letters"
    for name in ("a", "b"):
        assert_each_letter_once(clones[name], every, f"clone {name} after {steps} steps")
