"""`m1nd roster add` says what is wrong with a path (mailbox contract section 1,
roster row): a path that does not exist yet is added with a warning; a path that is
not a directory, the home or its parent is refused; a new root that makes a label
ambiguous is added with a warning naming the label."""

from __future__ import annotations

import orjson


def roster_roots(m1nd_home) -> list[str]:
    return orjson.loads((m1nd_home / "roster.json").read_bytes())["roots"]


def test_a_path_that_does_not_exist_yet_is_added_with_a_warning(cli, tmp_path, m1nd_home):
    later = tmp_path / "later"
    result = cli("roster", "add", str(later))
    assert result.code == 0
    assert "warning" in result.stderr and "does not exist" in result.stderr and str(later) in result.stderr
    assert roster_roots(m1nd_home) == [str(later)]


def test_a_regular_file_is_refused(cli, tmp_path, m1nd_home):
    f = tmp_path / "file.txt"
    f.write_text("x")
    for args in (["roster", "add", str(f)], ["roster", "add", str(f), "--json"]):
        result = cli(*args)
        assert result.code == 1
    assert "not a directory" in cli("roster", "add", str(f)).stderr
    assert not (m1nd_home / "roster.json").exists()


def test_an_empty_path_is_a_usage_error(cli, m1nd_home):
    result = cli("roster", "add", "")
    assert result.code == 2 and "empty" in result.stderr
    assert not m1nd_home.exists()


def test_the_home_and_its_parent_are_refused(cli, m1nd_home):
    m1nd_home.mkdir()
    for path in (m1nd_home.parent, m1nd_home, m1nd_home / "state"):
        result = cli("roster", "add", str(path))
        assert result.code == 1, path
        assert "refused" in result.stderr and str(path) in result.stderr
    assert not (m1nd_home / "roster.json").exists()


def test_a_root_that_makes_a_label_ambiguous_is_added_with_a_warning(cli, tmp_path, m1nd_home):
    one, two = tmp_path / "a" / "repo-a", tmp_path / "b" / "Repo-A"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    assert cli("roster", "add", str(one)).stderr == ""
    result = cli("roster", "add", str(two))
    assert result.code == 0
    assert "ambiguous" in result.stderr and "Repo-A" in result.stderr
    assert str(one) in result.stderr and str(two) in result.stderr
    assert roster_roots(m1nd_home) == [str(one), str(two)]
