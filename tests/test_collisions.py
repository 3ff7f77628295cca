"""Id collisions and oversized letters (mailbox contract section 2).

The two letters below are different lines whose sha256 digests share their first 48
bits, so they have one 12-hex id.  The pair was found once by a birthday search over
40 million numbered letters (a small C program, about 45 s); computing one is too slow
for a test run, so it is shipped here.  Dedup compares raw bytes: both letters are
filed, listed wherever letters are listed, kept by the merge driver, and doctor's `ids`
check names the shared id.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys

import orjson
import pytest

from conftest import write_spool
from m1nd.gitops.merge import union

_TEMPLATE = '{"ts":"2026-05-01T10:00:00Z","agent":"agent-a","repo":"repo-a","what":"collision probe %d"}'
ONE = (_TEMPLATE % 3588373).encode()
TWO = (_TEMPLATE % 22485052).encode()
SHARED_ID = "0fbb75a29a8f"


def test_the_fixture_pair_really_shares_an_id_and_differs():
    assert ONE != TWO
    assert hashlib.sha256(ONE).hexdigest()[:12] == hashlib.sha256(TWO).hexdigest()[:12] == SHARED_ID
    assert hashlib.sha256(ONE).digest() != hashlib.sha256(TWO).digest()


@pytest.fixture
def repo_a(tmp_path):
    root = tmp_path / "repo-a"
    root.mkdir()
    return root


def box_lines(root) -> list[bytes]:
    return (root / ".m1nd" / "inbox.jsonl").read_bytes().splitlines()


def test_distribution_files_both_letters_and_then_neither_again(cli, spool_path, repo_a):
    write_spool(spool_path, [ONE, TWO, ONE])
    receipt = cli("distribute", "--json", "--root", str(repo_a)).json
    assert receipt["appended"] == 2 and receipt["to_project"] == 3
    assert box_lines(repo_a) == [ONE, TWO]
    assert cli("distribute", "--json", "--root", str(repo_a)).json["appended"] == 0
    assert box_lines(repo_a) == [ONE, TWO]


def test_a_box_that_has_one_of_them_by_git_still_gets_the_other(cli, spool_path, repo_a):
    (repo_a / ".m1nd").mkdir()
    (repo_a / ".m1nd" / "inbox.jsonl").write_bytes(ONE + b"\n")
    write_spool(spool_path, [TWO, ONE])
    assert cli("distribute", "--json", "--root", str(repo_a)).json["appended"] == 1
    assert box_lines(repo_a) == [ONE, TWO]


def test_the_sweep_lists_both_with_the_same_id(cli, spool_path, repo_a):
    write_spool(spool_path, [ONE])
    (repo_a / ".m1nd").mkdir()
    (repo_a / ".m1nd" / "inbox.jsonl").write_bytes(TWO + b"\n")
    for args in (["sweep", "--json", "--no-distribute"], ["sweep", "--json"]):
        doc = cli(*args, "--root", str(repo_a)).json
        mine = [l for l in doc["letters"] if l["id"] == SHARED_ID]
        assert sorted(l["what"] for l in mine) == ["collision probe 22485052", "collision probe 3588373"]
        assert doc["total"] == 2


def test_the_box_view_lists_both_lines(cli, spool_path, repo_a):
    write_spool(spool_path, [ONE, TWO])
    cli("distribute", "--root", str(repo_a))
    view = cli("box", str(repo_a), "--json", "--root", str(repo_a)).json
    assert [l["id"] for l in view["letters"]] == [SHARED_ID, SHARED_ID]
    assert view["counts"]["wet_ink"] == 2


def test_doctor_names_the_shared_id_as_a_warning(cli, spool_path, repo_a):
    write_spool(spool_path, [ONE])
    check = lambda: next(c for c in cli("doctor", "--json", "--root", str(repo_a)).json["checks"] if c["name"] == "ids")
    assert check()["status"] == "ok"
    (repo_a / ".m1nd").mkdir()
    (repo_a / ".m1nd" / "inbox.jsonl").write_bytes(ONE + b"\n" + TWO + b"\n")
    found = check()
    assert found["status"] == "warn" and SHARED_ID in found["message"]
    assert "inbox.jsonl:2" in found["message"]


def test_the_merge_driver_keeps_both():
    assert union(ONE + b"\n", TWO + b"\n", b"") == ONE + b"\n" + TWO + b"\n"
    assert union(ONE + b"\n" + TWO + b"\n", TWO + b"\n", ONE + b"\n") == ONE + b"\n" + TWO + b"\n"


def test_the_merge_driver_keeps_both_in_a_real_git_merge(make_repo, tmp_path):
    repo = make_repo("repo-a")
    git = lambda *a: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True).stdout
    (repo / ".m1nd").mkdir()
    box = repo / ".m1nd" / "inbox.jsonl"
    box.write_bytes(b"")
    (repo / ".gitattributes").write_text(".m1nd/inbox.jsonl merge=m1nd-inbox\n")
    git("config", "merge.m1nd-inbox.driver", f"{sys.executable} -m m1nd merge-driver %O %A %B")
    git("add", "-A")
    git("commit", "-qm", "box")
    git("checkout", "-qb", "other")
    box.write_bytes(TWO + b"\n")
    git("commit", "-qam", "two")
    git("checkout", "-q", "main")
    box.write_bytes(ONE + b"\n")
    git("commit", "-qam", "one")
    git("merge", "-q", "--no-edit", "other")
    assert box.read_bytes() == ONE + b"\n" + TWO + b"\n"


# --- oversized letters ------------------------------------------------------------------


def big_letter(size: int, repo: str = "repo-a") -> bytes:
    head = orjson.dumps({"repo": repo, "what": ""})[:-2]
    pad = size - len(head) - 2
    return head + b"a" * pad + b'"}'


def test_a_letter_over_64_kib_is_held_and_doctor_names_it_oversized(cli, spool_path, repo_a):
    at_limit, over = big_letter(64 * 1024), big_letter(64 * 1024 + 1)
    assert len(at_limit) == 65536 and len(over) == 65537
    write_spool(spool_path, [at_limit, over])
    receipt = cli("distribute", "--json", "--root", str(repo_a)).json
    assert receipt == {"spool_total": 2, "appended": 1, "to_project": 1, "to_medulla": 0, "pending": []}
    assert box_lines(repo_a) == [at_limit]
    held = next(c for c in cli("doctor", "--json", "--root", str(repo_a)).json["checks"] if c["name"] == "held")
    assert held["status"] == "warn" and "line 2" in held["message"] and "oversized" in held["message"]


def test_an_oversized_letter_for_the_medulla_box_is_filed_there(cli, spool_path, m1nd_home):
    over = big_letter(70_000, repo="all")
    write_spool(spool_path, [over])
    assert cli("distribute", "--json").json["to_medulla"] == 1
    assert (m1nd_home / "inbox.jsonl").read_bytes() == over + b"\n"


def test_write_refuses_an_oversized_letter(cli, spool_path, m1nd_home):
    result = cli("write", "--repo", "repo-a", "--what", "x" * 70_000)
    assert result.code == 1
    assert "64 KiB" in result.stderr and result.stderr.count("\n") == 1
    assert not spool_path.exists()
    assert cli("write", "--repo", "repo-a", "--what", "x" * 60_000).code == 0
