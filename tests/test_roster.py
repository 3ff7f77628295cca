"""The roster: `m1nd roster add/remove/list`, stored as `<home>/roster.json`."""

from __future__ import annotations

import os

import orjson
import pytest

from conftest import write_spool


def listed(cli) -> list[dict]:
    result = cli("roster", "list", "--json")
    assert result.code == 0, result.stdout + result.stderr
    return result.json["roots"]


def test_add_registers_an_absolute_root_and_list_shows_its_label_and_reachability(cli, make_repo):
    a = make_repo("repo-a")
    result = cli("roster", "add", str(a), "--json")
    assert result.code == 0
    assert result.json == {"root": str(a), "added": True}
    assert listed(cli) == [{"path": str(a), "label": "repo-a", "reachable": True}]


def test_the_roster_is_stored_as_a_roots_list_in_the_home(cli, make_repo, m1nd_home):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    cli("roster", "add", str(a))
    cli("roster", "add", str(b))
    assert orjson.loads((m1nd_home / "roster.json").read_bytes()) == {"roots": [str(a), str(b)]}


def test_add_makes_relative_and_tilde_paths_absolute_without_trailing_slash(cli, tmp_path, monkeypatch):
    (tmp_path / "work" / "repo-c").mkdir()
    (tmp_path / "user-home" / "code" / "repo-d").mkdir(parents=True)
    assert cli("roster", "add", "repo-c/").code == 0
    assert cli("roster", "add", "~/code/repo-d/").code == 0
    assert [r["path"] for r in listed(cli)] == [str(tmp_path / "work" / "repo-c"),
                                                 str(tmp_path / "user-home" / "code" / "repo-d")]


def test_add_is_idempotent(cli, make_repo, m1nd_home):
    a = make_repo("repo-a")
    assert cli("roster", "add", str(a)).code == 0
    before = (m1nd_home / "roster.json").read_bytes()
    again = cli("roster", "add", str(a) + "/", "--json")
    assert again.code == 0
    assert again.json == {"root": str(a), "added": False}
    assert (m1nd_home / "roster.json").read_bytes() == before
    assert len(listed(cli)) == 1


def test_adding_a_symlink_to_a_registered_root_is_a_no_op(cli, make_repo, tmp_path):
    a = make_repo("repo-a")
    link = tmp_path / "alias-a"
    link.symlink_to(a)
    cli("roster", "add", str(a))
    assert cli("roster", "add", str(link), "--json").json["added"] is False
    assert [r["path"] for r in listed(cli)] == [str(a)]


def test_list_keeps_the_order_roots_were_added_in(cli, make_repo):
    names = ["repo-c", "repo-a", "repo-b"]
    for name in names:
        cli("roster", "add", str(make_repo(name)))
    assert [r["label"] for r in listed(cli)] == names


def test_an_empty_or_missing_roster_lists_nothing(cli, m1nd_home):
    assert listed(cli) == []
    assert not m1nd_home.exists()
    human = cli("roster", "list")
    assert human.code == 0 and "empty" in human.stdout


def test_list_marks_a_root_that_is_gone_as_unreachable(cli, make_repo):
    import shutil

    a = make_repo("repo-a")
    cli("roster", "add", str(a))
    shutil.rmtree(a)
    assert listed(cli) == [{"path": str(a), "label": "repo-a", "reachable": False}]
    assert "unreachable" in cli("roster", "list").stdout


def test_a_root_may_be_added_before_it_exists(cli, tmp_path):
    future = tmp_path / "src" / "repo-later"
    assert cli("roster", "add", str(future)).code == 0
    assert listed(cli) == [{"path": str(future), "label": "repo-later", "reachable": False}]


def test_remove_unregisters_a_root_and_leaves_its_box(cli, make_repo, spool_path):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    cli("roster", "add", str(a))
    cli("roster", "add", str(b))
    write_spool(spool_path, [{"repo": "repo-a", "what": "x"}])
    assert cli("distribute").code == 0
    result = cli("roster", "remove", str(a), "--json")
    assert result.code == 0
    assert result.json == {"root": str(a), "removed": True}
    assert [r["path"] for r in listed(cli)] == [str(b)]
    assert (a / ".m1nd" / "inbox.jsonl").read_bytes() == b'{"repo":"repo-a","what":"x"}\n'


def test_remove_by_a_symlink_to_the_registered_root_removes_it(cli, make_repo, tmp_path):
    a = make_repo("repo-a")
    link = tmp_path / "alias-a"
    link.symlink_to(a)
    cli("roster", "add", str(a))
    assert cli("roster", "remove", str(link)).code == 0
    assert listed(cli) == []


def test_removing_an_unknown_path_exits_3_and_changes_nothing(cli, make_repo, m1nd_home):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    cli("roster", "add", str(a))
    before = (m1nd_home / "roster.json").read_bytes()
    result = cli("roster", "remove", str(b))
    assert result.code == 3
    assert str(b) in result.stderr
    assert (m1nd_home / "roster.json").read_bytes() == before
    as_json = cli("roster", "remove", str(b), "--json")
    assert as_json.code == 3 and as_json.json["error"]["code"] == 3


def test_removing_from_a_roster_that_does_not_exist_exits_3_and_creates_nothing(cli, make_repo, m1nd_home):
    assert cli("roster", "remove", str(make_repo("repo-a"))).code == 3
    assert not m1nd_home.exists()


CORRUPT = {
    "not json": b"{roots: [",
    "empty file": b"",
    "a list": b'["/src/repo-a"]',
    "roots not a list": b'{"roots": "/src/repo-a"}',
    "a root not a string": b'{"roots": ["/src/repo-a", 7]}',
    "no roots key": b'{"paths": []}',
    "invalid utf-8": b'{"roots": ["\xff"]}',
}


@pytest.mark.parametrize("content", list(CORRUPT.values()), ids=list(CORRUPT))
def test_a_corrupt_roster_fails_closed_with_exit_1_and_a_one_line_error(cli, m1nd_home, spool_path, content):
    m1nd_home.mkdir()
    (m1nd_home / "roster.json").write_bytes(content)
    write_spool(spool_path, [{"repo": "all", "what": "x"}])
    for args in (("roster", "list"), ("roster", "add", "/src/repo-b"), ("distribute",), ("sweep",)):
        result = cli(*args)
        assert result.code == 1, args
        assert result.stderr.count("\n") == 1 and "roster" in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert (m1nd_home / "roster.json").read_bytes() == content
    assert not (m1nd_home / "inbox.jsonl").exists()


def test_a_corrupt_roster_with_json_gives_the_error_document(cli, m1nd_home):
    m1nd_home.mkdir()
    (m1nd_home / "roster.json").write_bytes(b"garbage")
    result = cli("--inbox-sweep")
    assert result.code == 1
    assert result.json["error"]["code"] == 1
    assert "roster" in result.json["error"]["message"]


def test_roster_roots_are_roots_of_every_run(cli, make_repo, spool_path):
    a = make_repo("repo-a")
    cli("roster", "add", str(a))
    write_spool(spool_path, [{"repo": "REPO-A (api)", "what": "x"}])
    receipt = cli("distribute", "--json").json
    assert receipt["to_project"] == 1
    assert (a / ".m1nd" / "inbox.jsonl").is_file()


def test_many_adds_keep_every_root_in_order_and_leave_no_temp_files(cli, make_repo):
    repos = [make_repo(f"repo-{i}") for i in range(8)]
    for repo in repos:
        assert cli("roster", "add", str(repo)).code == 0
    assert [r["path"] for r in listed(cli)] == [str(r) for r in repos]
    assert all(r["reachable"] for r in listed(cli))
    leftovers = [n for n in os.listdir(repos[0].parent.parent / "m1nd-home") if n.endswith(".tmp")]
    assert leftovers == []
