"""Escalations travel by git (cases.md 2): real clones, real hooks, the real merge driver.

Two machines that saw different first pairs of one fingerprint each mint an
escalation; once their boxes meet there is still one fingerprint and never two
cases, and `m1nd cases` shows the earliest escalation and names the other.  A
post-checkout hook never escalates into a consented box; the pre-commit hook
installed with `--stage` does, and the escalation rides in the commit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import write_spool
from m1nd.letters import letter_id

FP = "fp:seek/false_absence"


def run(args, cwd, env=None, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def witness(ts: str, what: str) -> bytes:
    return orjson.dumps({"ts": ts, "agent": "agent-a", "class": "bug", "kind": "false_absence", "repo": "repo-a",
                         "tool": "seek (index)", "what": what})


class Machine:
    def __init__(self, name: str, base: Path, remote: Path) -> None:
        self.home = base / name / "home"
        self.clone = base / name / "repo-a"
        self.env = {**os.environ, "M1ND_HOME": str(self.home)}
        run(["git", "clone", "-q", str(remote), str(self.clone)], base, self.env)

    def git(self, *args, check=True):
        return run(["git", *args], self.clone, self.env, check)

    def m1nd(self, *args):
        return run([sys.executable, "-m", "m1nd", *args], self.clone, self.env)

    def write(self, *raws: bytes) -> None:
        write_spool(self.home / "field-reports.jsonl", list(raws))

    def engine(self) -> list[bytes]:
        box = (self.clone / ".m1nd" / "inbox.jsonl").read_bytes()
        return [l for l in box.split(b"\n") if b'"m1nd:engine"' in l]


@pytest.fixture
def remote(tmp_path):
    remote = tmp_path / "remote" / "repo-a.git"
    remote.parent.mkdir()
    run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], tmp_path)
    seed = tmp_path / "seed"
    run(["git", "clone", "-q", str(remote), str(seed)], tmp_path)
    (seed / "README.md").write_text("# repo-a\n")
    run(["git", "add", "README.md"], seed)
    run(["git", "commit", "-qm", "start"], seed)
    run(["git", "push", "-q", "origin", "HEAD:main"], seed)
    return remote


@pytest.mark.slow
def test_escalations_racing_between_two_clones_are_one_fingerprint_and_never_two_cases(tmp_path, remote):
    a, b = Machine("a", tmp_path, remote), Machine("b", tmp_path, remote)
    a.m1nd("init")
    a.git("add", ".m1nd", ".gitattributes")
    a.git("commit", "-qm", "consent")
    a.git("push", "-q", "origin", "HEAD:main")
    b.git("pull", "-q", "--no-rebase", "origin", "main")
    b.m1nd("init")  # configures this clone's merge driver

    a1, a2 = witness("2026-05-01T09:00:00Z", "seek found nothing"), witness("2026-05-01T10:00:00Z", "empty again")
    b1, b2 = witness("2026-05-01T08:00:00Z", "no results"), witness("2026-05-01T12:00:00Z", "nothing, once more")
    a.write(a1, a2)
    b.write(b1, b2)
    a.m1nd("distribute")
    b.m1nd("distribute")
    (ea,), (eb,) = a.engine(), b.engine()
    assert ea != eb  # different first pairs: each machine minted its own
    for m, msg in ((a, "a: letters"), (b, "b: letters")):
        m.git("add", ".m1nd")
        m.git("commit", "-qm", msg)
    a.git("push", "-q", "origin", "HEAD:main")
    b.git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    b.git("push", "-q", "origin", "HEAD:main")
    a.git("pull", "-q", "--no-rebase", "origin", "main")

    for m in (a, b):
        m.m1nd("distribute")  # an escalation exists: nothing new is minted
        assert sorted(m.engine()) == sorted([ea, eb])
        doc = orjson.loads(m.m1nd("cases", "--json").stdout)
        assert doc["fingerprints"] == [{
            "fingerprint": FP, "witnesses": sorted(letter_id(w) for w in (a1, a2, b1, b2)),
            "escalation": letter_id(ea),  # ts 10:00 (a's second witness) before 12:00 (b's)
            "case": None}]
        human = m.m1nd("cases").stdout
        assert f"escalation: {letter_id(ea)}" in human
        assert f"also escalated elsewhere (a different first pair): {letter_id(eb)}" in human

    # a receipt for the fingerprint: one case, whatever the number of escalations
    receipt = orjson.dumps({"ts": "2026-05-02T09:00:00Z", "agent": "agent-a", "class": "triage", "repo": "repo-a",
                            "what": "fixed", "answers": [letter_id(w) for w in (a1, a2, b1, b2)],
                            "disposition": "fixed", "fingerprint": FP})
    b.write(receipt)
    b.m1nd("distribute")
    doc = orjson.loads(b.m1nd("cases", "--json").stdout)
    assert len(doc["fingerprints"]) == 1
    assert doc["fingerprints"][0]["case"] == {"receipt": letter_id(receipt), "disposition": "fixed",
                                              "state": "answered", "sentinel": None}


@pytest.mark.slow
def test_post_checkout_never_escalates_the_stage_hook_does_and_commits_it(tmp_path, remote):
    a = Machine("a", tmp_path, remote)
    a.m1nd("init")
    a.git("add", ".m1nd", ".gitattributes")
    a.git("commit", "-qm", "consent")
    a.m1nd("hooks", "install", "--stage")
    w1, w2 = witness("2026-05-01T09:00:00Z", "one"), witness("2026-05-01T09:05:00Z", "two")
    a.write(w1, w2)
    # post-checkout never writes a consented box (git.md 3): the witnesses wait, nothing escalates
    a.git("checkout", "-q", "-b", "topic")
    box = (a.clone / ".m1nd" / "inbox.jsonl").read_bytes()
    assert witness("2026-05-01T09:05:00Z", "two") not in box and a.engine() == []
    (a.clone / "code.txt").write_text("v1\n")
    a.git("add", "code.txt")
    a.git("commit", "-qm", "code")  # pre-commit: distribute, escalate, stage
    (escalation,) = a.engine()
    committed = a.git("show", "HEAD:.m1nd/inbox.jsonl").stdout.encode()
    assert escalation in committed and w1 in committed and w2 in committed
    assert a.git("status", "--porcelain").stdout == ""
