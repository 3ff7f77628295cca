"""`m1nd answer … --fingerprint FP [--case-id A] [--sentinel PROBE]` writes the receipt a
case is born from, and its probe guards the fix once allowed."""

from __future__ import annotations

import orjson

from conftest import run_cli


def test_answer_with_a_fingerprint_case_id_and_sentinel_makes_a_guarded_case(spool_path, make_repo):
    # a probe runs in its repository's work tree (probes in the medulla box never run)
    repo = make_repo("repo-a")
    first = run_cli("write", "--repo", str(repo), "--tool", "north", "--kind", "false_absence", "--what", "empty").stdout.strip()
    receipt = run_cli("answer", first[:6], "--what", "fixed: north reads the live store", "--disposition", "fixed",
                      "--fingerprint", "fp:north/false_absence", "--case-id", "north-empty",
                      "--sentinel", "test ! -e ghost-node.txt")
    assert receipt.code == 0, receipt.stderr
    letter = orjson.loads(spool_path.read_bytes().splitlines()[-1])
    assert letter["class"] == "triage" and letter["answers"] == [first]
    assert (letter["fingerprint"], letter["case_id"], letter["sentinel"]) == (
        "fp:north/false_absence", "north-empty", {"probe": "test ! -e ghost-node.txt", "expect": "absent"})
    assert list(letter)[-4:] == ["disposition", "fingerprint", "case_id", "sentinel"]
    assert run_cli("distribute", "--root", str(repo)).code == 0
    allowed = run_cli("sentinels", "allow", receipt.stdout.strip(), "--root", str(repo))
    assert allowed.code == 0, allowed.stderr
    ran = run_cli("sentinels", "run", "--root", str(repo))
    assert ran.code == 0, ran.stdout + ran.stderr
    case = run_cli("cases", "--json", "--root", str(repo)).json["fingerprints"][0]["case"]
    assert case["receipt"] == receipt.stdout.strip() and case["disposition"] == "fixed" and case["sentinel"] == "green"


def test_case_fields_that_do_not_make_a_case_are_one_line_usage_errors(spool_path):
    first = run_cli("write", "--brain", "medulla", "--what", "x").stdout.strip()
    before = spool_path.read_bytes()
    for args, words in [
        (["--fingerprint", "fp:north/bogus", "--disposition", "fixed"], "not a fingerprint"),
        (["--fingerprint", "north/crash", "--disposition", "fixed"], "not a fingerprint"),
        (["--fingerprint", "fp:north/crash"], "needs --disposition"),
        (["--case-id", "a"], "need --fingerprint"),
        (["--sentinel", "true"], "need --fingerprint"),
        (["--fingerprint", "fp:north/crash", "--disposition", "moot", "--sentinel", "true"], "needs --disposition fixed"),
    ]:
        r = run_cli("answer", first, "--what", "w", *args)
        assert r.code == 2 and words in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)
    assert spool_path.read_bytes() == before, "nothing was written"
