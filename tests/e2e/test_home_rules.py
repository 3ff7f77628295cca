"""The home is never committable (mailbox.md section 1): a home directory kept in git
for its dotfiles never gets the spool, the medulla box, the roster or the state
committed, and a root whose box would be the medulla box or lie in the home is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitworld import git, m1nd, write_letters


@pytest.fixture
def dotfiles(tmp_path, monkeypatch) -> Path:
    home = Path(os.environ["HOME"])
    git(home, "init", "-q", "-b", "main")
    (home / ".bashrc").write_text("alias ll='ls -l'\n")
    git(home, "add", ".bashrc")
    git(home, "commit", "-qm", "dotfiles")
    monkeypatch.setenv("M1ND_HOME", str(home / ".m1nd"))
    return home


def test_nothing_of_the_home_can_be_committed_by_git_add(dotfiles):
    spool = dotfiles / ".m1nd" / "field-reports.jsonl"
    write_letters(spool, "projectless", repo="all")
    done = m1nd("distribute", cwd=dotfiles)
    assert done.returncode == 0, done.stderr
    assert (dotfiles / ".m1nd" / "inbox.jsonl").exists()
    assert (dotfiles / ".m1nd" / ".gitignore").read_bytes() == b"*\n"
    git(dotfiles, "add", "-A")
    assert git(dotfiles, "status", "--porcelain").stdout == "", "the home stays out of the dotfiles repository"


def test_init_in_a_dotfiles_home_is_refused_and_writes_nothing(dotfiles):
    before = sorted(p.name for p in dotfiles.iterdir())
    done = m1nd("init", cwd=dotfiles)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "is refused as a root" in done.stderr
    assert not (dotfiles / ".gitattributes").exists()
    assert git(dotfiles, "config", "--local", "--get", "merge.m1nd-inbox.driver", check=False).stdout == ""
    assert sorted(p.name for p in dotfiles.iterdir() if p.name != ".m1nd") == [n for n in before if n != ".m1nd"]
    roster = m1nd("roster", "add", str(dotfiles), cwd=dotfiles.parent)
    assert roster.returncode == 1 and "inside the m1nd home" in roster.stderr


def test_a_bound_root_whose_box_would_be_the_medulla_box_is_never_filed_into_and_doctor_names_it(dotfiles):
    label = dotfiles.name  # letters naming the home's own directory
    spool = dotfiles / ".m1nd" / "field-reports.jsonl"
    write_letters(spool, "names the home directory", repo=label)
    done = m1nd("distribute", cwd=dotfiles)
    assert done.returncode == 0, done.stderr
    assert not (dotfiles / ".m1nd" / "inbox.jsonl").exists(), "never filed into the medulla box by way of a root"
    assert not (dotfiles / ".m1nd" / ".m1nd").exists()
    doc = json.loads(m1nd("doctor", "--json", cwd=dotfiles).stdout)
    roster = next(c for c in doc["checks"] if c["name"] == "roster")
    assert roster["status"] == "warn" and f"{dotfiles} is refused" in roster["message"]


def test_a_root_inside_the_home_is_refused(dotfiles, tmp_path):
    inside = dotfiles / ".m1nd" / "state"
    inside.mkdir(parents=True)
    done = m1nd("roster", "add", str(inside), cwd=tmp_path)
    assert done.returncode == 1 and "inside the m1nd home" in done.stderr
