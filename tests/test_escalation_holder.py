"""cases.md 2: when the second witness of a fingerprint is in no box on this machine,
the first later witness that is in a box takes the escalation (real processes)."""

from __future__ import annotations

import os
import sys

import orjson

from conftest import run_script, write_spool
from m1nd.letters import letter_id


def crash(ts: str, repo: str, what: str) -> bytes:
    # no `tool`: the fingerprint is fp:/crash
    return orjson.dumps({"ts": ts, "agent": "agent-a", "class": "bug", "kind": "crash", "repo": repo, "what": what})


def engine_lines(box):
    if not box.exists():
        return []
    return [o for o in map(orjson.loads, box.read_bytes().splitlines()) if o.get("agent") == "m1nd:engine"]


def m1nd(*args):
    proc = run_script(*args, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stderr.decode()
    return proc


def test_a_second_witness_waiting_for_a_missing_repository_escalates_into_the_next_witness_box(
        make_repo, spool_path):
    repo_a = make_repo("repo-a")
    m1nd("roster", "add", str(repo_a))
    w1 = crash("2026-05-04T09:00:00Z", "repo-a", "crashed at start")
    w2 = crash("2026-05-04T09:05:00Z", "repo-elsewhere", "crashed again")  # this machine lacks repo-elsewhere
    w3 = crash("2026-05-04T09:10:00Z", "repo-a", "crashed a third time")
    write_spool(spool_path, [w1, w2, w3])

    m1nd("distribute")
    m1nd("distribute")  # exactly once

    box = repo_a / ".m1nd" / "inbox.jsonl"
    escalations = [e for e in engine_lines(box) if e.get("fingerprint") == "fp:/crash"]
    assert len(escalations) == 1
    e = escalations[0]
    # filed with the third witness (its ts and repo), naming the first two witnesses
    assert (e["ts"], e["repo"], e["class"], e["kind"]) == ("2026-05-04T09:10:00Z", "repo-a", "triage", "crash")
    assert letter_id(w1) in e["what"] and letter_id(w2) in e["what"] and letter_id(w3) not in e["what"]
    assert spool_path.read_bytes().count(b"\n") == 3  # never into the spool
    doc = orjson.loads(m1nd("cases", "--json").stdout)
    entry = next(f for f in doc["fingerprints"] if f["fingerprint"] == "fp:/crash")
    assert entry["escalation"] is not None and len(entry["witnesses"]) == 3


def test_with_no_later_witness_in_a_box_the_escalation_waits(make_repo, spool_path):
    repo_a = make_repo("repo-a")
    m1nd("roster", "add", str(repo_a))
    write_spool(spool_path, [crash("2026-05-04T09:00:00Z", "repo-a", "one"),
                             crash("2026-05-04T09:05:00Z", "repo-elsewhere", "two")])
    m1nd("distribute")
    assert engine_lines(repo_a / ".m1nd" / "inbox.jsonl") == []  # the first witness's box never takes it
