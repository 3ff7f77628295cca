"""The cases engine keeps a hook's budget: an escalation into a consented box is never
written once the pre-commit hook has no time left (it would change the tracked box
after git went on); it waits, and the next filing in time writes it."""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from conftest import write_spool
from gitworld import box_path, commit_file, consent, git
from m1nd.cases.escalation import escalate
from m1nd.distribute import distribute
from m1nd.gitops.safety import STAGE, Gate
from m1nd.run import open_run


def witness(ts: str, what: str) -> dict:
    return {"ts": ts, "agent": "agent-a", "class": "bug", "kind": "false_absence", "repo": "repo-a",
            "tool": "seek (index)", "what": what}


def engine_lines(repo: Path) -> list[bytes]:
    return [l for l in box_path(repo).read_bytes().split(b"\n") if b'"m1nd:engine"' in l]


def test_an_escalation_into_a_consented_box_waits_when_the_hook_has_no_time_left(tmp_path, spool_path):
    repo = tmp_path / "src" / "repo-a"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commit_file(repo, "code.txt", "v1\n", "start")
    consent(repo)
    write_spool(spool_path, [witness("2026-05-01T09:00:00Z", "one"), witness("2026-05-01T09:05:00Z", "two")])
    run = open_run(cwd=str(repo))
    receipt = distribute(run, gate=Gate(STAGE, str(repo)))
    assert receipt.appended == 2 and engine_lines(repo) == []
    late = Gate(STAGE, str(repo), deadline=time.monotonic() - 1)  # the hook's time is up
    escalated = escalate(run, receipt, gate=late)
    assert escalated.filed == () and escalated.waiting, escalated
    assert engine_lines(repo) == [], "nothing written after the budget"
    in_time = Gate(STAGE, str(repo), deadline=time.monotonic() + 60)
    escalated = escalate(run, None, gate=in_time)
    assert len(escalated.filed) == 1 and len(engine_lines(repo)) == 1
    assert orjson.loads(engine_lines(repo)[0])["kind"] == "false_absence"
