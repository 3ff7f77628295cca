"""A run that files into its bound root's box adds that root to the roster, so a
sweep run anywhere else finds the box (instead of calling its letters unknown)."""

from __future__ import annotations

import json

from conftest import run_cli


def test_filing_inside_an_unlisted_repository_adds_it_to_the_roster_once(make_repo, m1nd_home, tmp_path):
    repo = make_repo("myproj")
    assert run_cli("write", "--what", "a letter written here", cwd=repo).code == 0
    first = run_cli("distribute", cwd=repo)
    assert first.code == 0
    assert first.stderr == f"m1nd: added {repo} to the roster: its box now holds letters " \
                           f"(m1nd roster remove {repo} undoes it)\n"
    assert json.loads((m1nd_home / "roster.json").read_text())["roots"] == [str(repo)]
    again = run_cli("distribute", cwd=repo)
    assert again.code == 0 and again.stderr == ""

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sweep = run_cli("sweep", "--no-pager", cwd=elsewhere)
    assert sweep.code == 0 and "unknown repositories" not in sweep.stderr
    assert "a letter written here" in sweep.stdout
    box = run_cli("box", "myproj", cwd=elsewhere)
    assert box.code == 0 and "a letter written here" in box.stdout


def test_a_read_only_run_or_one_that_files_nothing_there_leaves_the_roster_alone(make_repo, m1nd_home):
    repo = make_repo("repo-b")
    run_cli("write", "--brain", "medulla", "--what", "for no project", cwd=repo)
    assert run_cli("sweep", "--no-distribute", cwd=repo).code == 0
    assert run_cli("distribute", cwd=repo).stderr == ""
    assert not (m1nd_home / "roster.json").exists()


def test_an_ambiguous_label_names_both_paths_and_the_fix_that_is_right(tmp_path, m1nd_home):
    a, b = tmp_path / "a" / "dup", tmp_path / "b" / "dup"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    run_cli("roster", "add", str(a))
    run_cli("roster", "add", str(b))
    run_cli("write", "--repo", "dup", "--what", "for dup")
    sweep = run_cli("sweep", "--no-pager")
    assert "unknown repositories" not in sweep.stderr and "roster add" not in sweep.stderr
    assert f"it is the label of {a} and {b}" in sweep.stderr and "rename one directory" in sweep.stderr
    doctor = run_cli("doctor", "--json")
    checks = {c["name"]: c for c in doctor.json["checks"]}
    assert "roster add" not in checks["pending"]["fix"]
    assert str(b) in checks["pending"]["fix"] and "rename" in checks["pending"]["fix"]
    assert str(a) in checks["pending"]["message"] and str(b) in checks["pending"]["message"]
