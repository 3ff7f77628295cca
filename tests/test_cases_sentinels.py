"""Absence sentinels (cases.md 4): a probe runs only when allowed, exactly as allowed,
without a shell, in the box's repository, with a minimal environment and a timeout."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson
import pytest

from conftest import run_cli, write_spool
from m1nd.letters import letter_id

FP = "fp:seek/false_absence"


def letter(**fields) -> bytes:
    if "klass" in fields:
        fields["class"] = fields.pop("klass")
    return orjson.dumps(fields)


@pytest.fixture
def repo(tmp_path):
    path = Path(os.environ["HOME"]) / "src" / "repo-a"
    path.mkdir(parents=True)
    os.system(f"git init -q {path}")
    assert run_cli("roster", "add", str(path)).code == 0
    return path


def guarded(spool_path, probe: str, ts="2026-05-02T09:00:00Z", expect="absent") -> str:
    """A witness and a fixed receipt guarding it with `probe`; returns the receipt id."""
    w = letter(ts="2026-05-01T09:00:00Z", klass="bug", kind="false_absence", repo="repo-a", tool="seek", what="gone")
    r = letter(ts=ts, klass="triage", repo="repo-a", what="fixed", answers=[letter_id(w)], disposition="fixed",
               fingerprint=FP, sentinel={"probe": probe, "expect": expect})
    write_spool(spool_path, [w, r])
    assert run_cli("distribute").code == 0
    return letter_id(r)


def regressions(repo: Path) -> list[dict]:
    box = repo / ".m1nd" / "inbox.jsonl"
    return [o for o in map(orjson.loads, filter(None, box.read_bytes().split(b"\n")))
            if o.get("what", "").startswith("sentinel regression")]


def test_an_unallowed_probe_never_runs(repo, spool_path):
    guarded(spool_path, "touch created-by-probe")
    r = run_cli("sentinels", "run", "--json")
    assert r.code == 0
    assert r.json == {"guarded": 1, "green": 0, "red": 0, "not_allowed": 1,
                      "results": [{"receipt": r.json["results"][0]["receipt"], "probe": "touch created-by-probe",
                                   "status": "not_allowed"}]}
    assert not (repo / "created-by-probe").exists()
    assert run_cli("cases", "--json").json["fingerprints"][0]["case"]["sentinel"] == "not_allowed"


def test_an_allowed_probe_runs_in_the_box_repository(repo, spool_path, m1nd_home):
    rid = guarded(spool_path, "touch created-by-probe")
    r = run_cli("sentinels", "allow", rid[:6])
    assert r.code == 0 and "touch created-by-probe" in r.stdout
    allow = orjson.loads((m1nd_home / "records" / "sentinel-allow.json").read_bytes())
    assert [v["probe"] for v in allow["allowed"].values()] == ["touch created-by-probe"]
    assert not list(repo.glob(".m1nd/*allow*"))  # recorded under the home, never in a repository
    r = run_cli("sentinels", "run", "--json")
    assert r.json["green"] == 1 and (repo / "created-by-probe").exists()


def test_a_probe_changed_since_it_was_allowed_is_not_allowed(repo, spool_path, m1nd_home):
    rid = guarded(spool_path, "touch first")
    assert run_cli("sentinels", "allow", rid).code == 0
    # a later receipt for the same case carries another command: the grant does not carry over
    write_spool(spool_path, [letter(ts="2026-05-03T09:00:00Z", klass="triage", repo="repo-a", what="fixed again",
                                    disposition="fixed", fingerprint=FP,
                                    sentinel={"probe": "touch second", "expect": "absent"})])
    assert run_cli("distribute").code == 0
    r = run_cli("sentinels", "run", "--json")
    assert r.json["not_allowed"] == 1 and r.json["results"][0]["probe"] == "touch second"
    assert not (repo / "second").exists() and not (repo / "first").exists()


def test_an_allowlist_edited_to_another_command_runs_nothing(repo, spool_path, m1nd_home):
    rid = guarded(spool_path, "touch made")
    assert run_cli("sentinels", "allow", rid).code == 0
    path = m1nd_home / "records" / "sentinel-allow.json"
    path.write_bytes(path.read_bytes().replace(b"touch made", b"touch other"))
    r = run_cli("sentinels", "run", "--json")
    assert r.json["not_allowed"] == 1
    assert not (repo / "made").exists() and not (repo / "other").exists()


def test_an_unreadable_allowlist_fails_closed(repo, spool_path, m1nd_home):
    guarded(spool_path, "touch made")
    (m1nd_home / "records").mkdir(parents=True)
    (m1nd_home / "records" / "sentinel-allow.json").write_bytes(b"{broken")
    r = run_cli("sentinels", "run")
    assert r.code == 1 and "does not parse" in r.stderr and "Traceback" not in r.stderr
    assert not (repo / "made").exists()


def test_no_shell_unless_the_command_starts_one(repo, spool_path):
    rid = guarded(spool_path, "echo $HOME > shell-redirect")
    assert run_cli("sentinels", "allow", rid).code == 0
    assert run_cli("sentinels", "run", "--json").json["green"] == 1
    assert not (repo / "shell-redirect").exists()  # `>` was an argument of echo, not a redirection


def test_the_probe_gets_a_minimal_environment(repo, spool_path, monkeypatch):
    monkeypatch.setenv("M1ND_TEST_SECRET", "made-up-" + "value")
    rid = guarded(spool_path, "sh -c 'env > env.txt'")
    assert run_cli("sentinels", "allow", rid).code == 0
    assert run_cli("sentinels", "run").code == 0
    names = {l.split("=", 1)[0] for l in (repo / "env.txt").read_text().splitlines()}
    assert {"PATH", "HOME", "LANG", "LC_ALL", "TZ"} <= names
    assert not names & {"M1ND_TEST_SECRET", "M1ND_HOME", "NO_COLOR", "GIT_AUTHOR_NAME"}


@pytest.mark.slow
def test_a_hanging_probe_is_killed_with_its_group_at_the_timeout(repo, spool_path):
    rid = guarded(spool_path, "sh -c 'sleep 60 & echo $! > child.pid; sleep 60'")
    assert run_cli("sentinels", "allow", rid).code == 0
    started = time.monotonic()
    r = run_cli("sentinels", "run", "--timeout", "1", "--json")
    assert time.monotonic() - started < 15
    assert r.code == 1 and r.json["red"] == 1
    child = int((repo / "child.pid").read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the probe's background child outlived the timeout")


def test_red_files_one_regression_per_fingerprint_per_day(repo, spool_path, monkeypatch):
    rid = guarded(spool_path, "test ! -e ghost.txt")
    assert run_cli("sentinels", "allow", rid).code == 0
    r = run_cli("sentinels", "run")
    assert r.code == 0 and "1 guarded · 1 green · 0 red" in r.stdout
    assert run_cli("cases", "--json").json["fingerprints"][0]["case"]["state"] == "closed·guarded"
    (repo / "ghost.txt").write_text("it came back\n")
    r = run_cli("sentinels", "run", "--json")
    assert r.code == 1 and r.json["red"] == 1
    assert run_cli("sentinels", "run").code == 1
    found = regressions(repo)
    assert len(found) == 1
    assert found[0] == {"ts": "2026-05-03", "agent": "m1nd:engine", "class": "bug", "kind": "false_absence",
                        "repo": "repo-a", "tool": "seek", "what": f"sentinel regression: {FP} resurfaced",
                        "fingerprint": FP, "sentinel": rid}
    doc = run_cli("cases", "--json").json["fingerprints"]
    assert len(doc) == 1 and len(doc[0]["witnesses"]) == 2  # one more witness of the same case
    assert doc[0]["case"]["state"] == "open" and doc[0]["case"]["sentinel"] == "red"
    monkeypatch.setenv("M1ND_NOW", "2026-05-04T09:00:00Z")
    assert run_cli("sentinels", "run").code == 1
    assert [f["ts"] for f in regressions(repo)] == ["2026-05-03", "2026-05-04"]


def test_only_fixed_receipts_expecting_absence_guard(repo, spool_path):
    w = letter(ts="2026-05-01T09:00:00Z", klass="bug", kind="crash", repo="repo-a", tool="seek", what="x")
    write_spool(spool_path, [w, letter(ts="2026-05-02T09:00:00Z", klass="triage", repo="repo-a", what="no",
                                       answers=[letter_id(w)], disposition="declined", fingerprint="fp:seek/crash",
                                       sentinel={"probe": "touch nope", "expect": "absent"})])
    assert run_cli("distribute").code == 0
    assert run_cli("sentinels", "run", "--json").json["guarded"] == 0
    assert run_cli("sentinels", "allow", letter_id(spool_path.read_bytes().split(b"\n")[1])).code == 3


def test_allow_usage_errors(repo, spool_path):
    guarded(spool_path, "touch x")
    assert run_cli("sentinels", "allow", "zz").code == 2
    assert run_cli("sentinels", "allow", "ffffffffffff").code == 3
    rid = guarded(spool_path, "sh -c 'unterminated", ts="2026-05-05T09:00:00Z")
    r = run_cli("sentinels", "allow", rid)
    assert r.code == 2 and "does not split" in r.stderr
