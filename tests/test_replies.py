"""Replies reach their letter (mailbox contract section 9): `pickup` and `answer`
check and expand ids over the union of spool and boxes, and copy the answered
letter's `repo` and `brain` so the reply is filed into the same box."""

from __future__ import annotations

import hashlib
import itertools

import orjson

from conftest import write_spool


def lid(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


def letter(what: str, repo: str, **extra) -> bytes:
    return orjson.dumps({"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "repo": repo, "what": what, **extra})


def last_line(path) -> dict:
    return orjson.loads(path.read_bytes().splitlines()[-1])


def test_an_answer_given_in_another_repository_is_filed_into_the_answered_letter_s_box(cli, make_repo, spool_path):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    write_spool(spool_path, [letter("seek returned a deleted node", str(a))])
    target = lid(spool_path.read_bytes().splitlines()[0])
    assert cli("roster", "add", str(a)).code == 0
    result = cli("answer", target, "--what", "fixed in repo-a", "--disposition", "fixed", cwd=b)
    assert result.code == 0, result.stderr
    reply = last_line(spool_path)
    assert reply["repo"] == str(a) and reply["answers"] == [target]
    assert cli("distribute", "--json", cwd=b).code == 0
    box_a = (a / ".m1nd" / "inbox.jsonl").read_bytes()
    assert box_a.count(b"\n") == 2
    assert not (b / ".m1nd" / "inbox.jsonl").exists()
    view = cli("box", str(a), "--json").json
    assert {l["id"]: l["state"] for l in view["letters"]}[target] == "fired_clay"


def test_a_pickup_copies_the_brain_of_the_first_id(cli, spool_path):
    one = letter("a", "repo-x", brain="project:repo-a")
    two = letter("b", "repo-b")
    write_spool(spool_path, [one, two])
    assert cli("pickup", lid(one), lid(two), "--what", "on it").code == 0
    reply = last_line(spool_path)
    assert (reply["repo"], reply["brain"], reply["class"]) == ("repo-x", "project:repo-a", "pickup")
    assert reply["answers"] == [lid(one), lid(two)]


def test_an_explicit_repo_is_kept(cli, spool_path):
    one = letter("a", "repo-x", brain="medulla")
    write_spool(spool_path, [one])
    assert cli("pickup", lid(one), "--what", "on it", "--repo", "repo-z").code == 0
    reply = last_line(spool_path)
    assert reply["repo"] == "repo-z" and "brain" not in reply


def test_a_unique_prefix_is_written_out_in_full(cli, spool_path):
    one = letter("a", "repo-a")
    write_spool(spool_path, [one])
    for n in (4, 7, 12):
        result = cli("answer", lid(one)[:n], "--what", f"done {n}")
        assert result.code == 0, result.stderr
        assert last_line(spool_path)["answers"] == [lid(one)]


def test_a_prefix_found_only_in_a_box_is_expanded(cli, tmp_path, spool_path):
    root = tmp_path / "repo-a"
    (root / ".m1nd").mkdir(parents=True)
    one = letter("from another machine", "repo-a")
    (root / ".m1nd" / "inbox.jsonl").write_bytes(one + b"\n")
    assert cli("roster", "add", str(root)).code == 0
    assert cli("pickup", lid(one)[:6], "--what", "on it").code == 0
    assert last_line(spool_path)["answers"] == [lid(one)]
    assert last_line(spool_path)["repo"] == "repo-a"


def _two_sharing_a_prefix() -> tuple[bytes, bytes]:
    seen: dict[str, bytes] = {}
    for i in itertools.count():
        raw = letter(f"letter {i}", "repo-a")
        key = lid(raw)[:4]
        if key in seen:
            return seen[key], raw
        seen[key] = raw


def test_an_ambiguous_prefix_is_a_usage_error_listing_the_candidates(cli, spool_path):
    one, two = _two_sharing_a_prefix()
    write_spool(spool_path, [one, two])
    before = spool_path.read_bytes()
    result = cli("answer", lid(one)[:4], "--what", "done")
    assert result.code == 2
    assert lid(one) in result.stderr and lid(two) in result.stderr
    as_json = cli("answer", lid(one)[:4], "--what", "done", "--json")
    assert as_json.code == 2 and as_json.json["error"]["code"] == 2
    assert spool_path.read_bytes() == before


def test_an_unknown_id_is_not_found_and_writes_nothing_unless_forced(cli, spool_path):
    write_spool(spool_path, [letter("a", "repo-a")])
    before = spool_path.read_bytes()
    for command in ("pickup", "answer"):
        result = cli(command, "0123456789ab", "--what", "on it")
        assert result.code == 3, result.stderr
        assert "0123456789ab" in result.stderr and result.stderr.count("\n") == 1
        assert cli(command, "01234", "--what", "on it", "--force").code == 3  # a prefix cannot be forced
    assert spool_path.read_bytes() == before
    forced = cli("answer", "0123456789ab", "--what", "done", "--force")
    assert forced.code == 0
    assert last_line(spool_path)["answers"] == ["0123456789ab"]
    assert last_line(spool_path)["repo"] == "all"


def test_a_mistyped_id_among_good_ones_writes_nothing(cli, spool_path):
    one = letter("a", "repo-a")
    write_spool(spool_path, [one])
    before = spool_path.read_bytes()
    assert cli("answer", lid(one), "fedcba987654", "--what", "done").code == 3
    assert spool_path.read_bytes() == before
