"""A letter a git hook files at 08:50 is in the 09:00 report: real git runs the shim,
which distributes and records the coverage ledger."""

from __future__ import annotations

import os
import subprocess

from conftest import write_spool


def git(repo, *args, env=None):
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_a_letter_a_hook_files_at_0850_is_in_the_0900_report(make_repo, cli, spool_path, m1nd_home):
    repo = make_repo("repo-a")
    (repo / "code.txt").write_text("v1\n")
    git(repo, "add", "code.txt")
    git(repo, "commit", "-qm", "start")
    assert cli("hooks", "install", str(repo)).code == 0
    write_spool(spool_path, [{"ts": "2026-05-01T12:40:00Z", "agent": "agent-a", "class": "bug",
                              "repo": "repo-a", "what": "the depth limit is ignored"}])
    git(repo, "checkout", "-q", "-b", "feature", env=dict(os.environ, M1ND_NOW="2026-05-01T12:50:00Z"))
    assert (repo / ".m1nd" / "inbox.jsonl").exists(), "the hook distributed"

    r = cli("report", "--now", "2026-05-01T13:02:00Z")  # the 09:00 New York boundary is 13:00Z
    assert r.code == 0, r.stderr
    assert "the depth limit is ignored" in r.stdout
    assert "2026-05-01T12:50:00Z → 2026-05-01T13:00:00Z" in r.stdout
