"""Scenarios where m1nd's hooks used to get in git's way, or a letter ended in no box,
each with real git and m1nd's shims (`hooks install --stage`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitworld import (assert_each_letter_once, box_ids, clean, commit_file, consent, git, install_hooks, m1nd,
                      other_home_env, write_letters)


@pytest.fixture
def a(tmp_path) -> Path:
    repo = tmp_path / "src" / "repo-a"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commit_file(repo, "code.txt", "v1\n", "start")
    consent(repo)
    install_hooks(repo, "--stage")
    return repo


@pytest.fixture
def a1(a, spool_path) -> Path:
    """`a` whose committed box already holds a letter (an empty box is always re-checked)."""
    write_letters(spool_path, "an earlier letter")
    commit_file(a, "code.txt", "v1.1\n", "a commit that carries a letter")
    assert len(box_ids(a)) == 1 and clean(a)
    return a


def distribute(repo: Path) -> None:
    done = m1nd("distribute", cwd=repo)
    assert done.returncode == 0, done.stderr


def in_no_box(repo: Path) -> str:
    doctor = m1nd("doctor", "--json", cwd=repo)
    return [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "git"][0]["message"]


def test_a_letter_left_to_a_dropped_stash_is_filed_again_though_the_box_did_not_change(a1, spool_path):
    ids = write_letters(spool_path, "held by a stash")
    distribute(a1)
    git(a1, "stash", "-q")
    commit_file(a1, "code.txt", "v2\n", "while the stash holds it")  # the safe filing skips it
    assert not set(ids) & set(box_ids(a1))
    git(a1, "stash", "drop", "-q")
    commit_file(a1, "code.txt", "v3\n", "after the drop")  # pre-commit: a safe filing
    assert_each_letter_once(a1, ids, "the pre-commit hook after stash drop")
    assert clean(a1)
    distribute(a1)
    assert_each_letter_once(a1, ids, "and never twice")


def test_a_letter_left_to_a_deleted_branch_is_filed_again_by_distribute(a1, spool_path):
    ids = write_letters(spool_path, "held by a branch")
    git(a1, "switch", "-q", "-c", "x")
    commit_file(a1, "x.txt", "x\n", "x work")  # files and stages the letter on x
    git(a1, "switch", "-q", "main")
    distribute(a1)
    assert not set(ids) & set(box_ids(a1)), "it comes back by merge while x holds it"
    git(a1, "branch", "-q", "-D", "x")
    distribute(a1)
    assert_each_letter_once(a1, ids, "after branch -D")
    assert "in no box" not in in_no_box(a1)


def test_merge_no_commit_then_distribute_then_merge_abort_succeeds(a1, spool_path):
    git(a1, "switch", "-q", "-c", "side")
    commit_file(a1, "side.txt", "s\n", "side work")
    git(a1, "switch", "-q", "main")
    commit_file(a1, "main.txt", "m\n", "main work")
    assert git(a1, "merge", "--no-commit", "--no-ff", "side", check=False).returncode == 0
    ids = write_letters(spool_path, "during a merge without conflicts")
    done = m1nd("distribute", cwd=a1)
    assert done.returncode == 0, done.stderr
    assert "until git is done" in done.stdout + done.stderr
    assert not set(ids) & set(box_ids(a1))
    aborted = git(a1, "merge", "--abort", check=False)
    assert aborted.returncode == 0, aborted.stderr
    assert clean(a1)
    distribute(a1)
    assert_each_letter_once(a1, ids, "filed once git is done")


def test_the_commit_that_concludes_a_merge_files_and_stages_the_box(a1, spool_path):
    git(a1, "switch", "-q", "-c", "side")
    commit_file(a1, "side.txt", "s\n", "side work")
    git(a1, "switch", "-q", "main")
    commit_file(a1, "main.txt", "m\n", "main work")
    assert git(a1, "merge", "--no-commit", "--no-ff", "side", check=False).returncode == 0
    ids = write_letters(spool_path, "carried by the merge commit")
    assert git(a1, "commit", "-q", "--no-edit", check=False).returncode == 0
    assert_each_letter_once(a1, ids)
    assert clean(a1)


@pytest.mark.parametrize("where", ["global-excludes", "top-gitignore"])
def test_a_tracked_box_matched_by_an_ignore_rule_is_filed_and_staged(a1, spool_path, tmp_path, where):
    if where == "global-excludes":
        excludes = tmp_path / "excludes"
        excludes.write_text(".m1nd/\n")
        git(a1, "config", "core.excludesFile", str(excludes))
    else:
        commit_file(a1, ".gitignore", ".m1nd/\n", "ignore .m1nd")
    ids = write_letters(spool_path, "into an ignored yet tracked box")
    commit_file(a1, "code.txt", "v2\n", "code")
    assert_each_letter_once(a1, ids)
    assert clean(a1), git(a1, "status", "--porcelain").stdout
    git(a1, "switch", "-q", "-c", "other", "HEAD~1")
    assert git(a1, "switch", "-q", "main", check=False).returncode == 0


def test_a_partial_clone_never_fetches_a_box_blob_it_lacks(a1, spool_path, tmp_path):
    git(a1, "switch", "-q", "-c", "x")
    write_letters(spool_path, "only on branch x")
    commit_file(a1, "x.txt", "x\n", "x carries a letter")  # x's box blob differs from main's
    git(a1, "switch", "-q", "main")
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(a1), str(origin))
    git(origin, "config", "uploadpack.allowFilter", "true")
    env = other_home_env(tmp_path, "partial")
    clone = tmp_path / "p" / "repo-a"
    clone.parent.mkdir()
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{origin}", str(clone))
    git(clone, "branch", "-q", "x", "origin/x")  # a local branch whose box blob the clone lacks
    done = m1nd("hooks", "install", "--stage", str(clone), cwd=clone, env=env)
    assert done.returncode == 0, done.stderr
    origin.rename(tmp_path / "origin-gone.git")  # the promisor remote is gone
    ids = write_letters(Path(env["M1ND_HOME"]) / "field-reports.jsonl", "in the partial clone")
    assert m1nd("distribute", cwd=clone, env=env).returncode == 0
    git(clone, "checkout", "-q", "--", ".m1nd")  # dropped: the next safe filing asks what branches hold
    trace = tmp_path / "trace"
    traced = {**env, "GIT_TRACE": str(trace)}
    committed = git(clone, "commit", "-q", "--allow-empty", "-m", "in a partial clone", env=traced, check=False)
    assert committed.returncode == 0, committed.stderr
    assert_each_letter_once(clone, ids, "filed again in the partial clone")
    assert clean(clone)
    assert "cat-file" in trace.read_text(), "the hook asked git what the branches hold"
    fetches = [l for l in trace.read_text().splitlines() if " fetch " in l or "upload-pack" in l]
    assert not fetches, fetches


def test_under_the_pre_commit_framework_a_commit_with_unstaged_box_letters_succeeds(tmp_path, make_repo, spool_path):
    from tools import pre_commit_bin

    pre_commit = pre_commit_bin()
    repo = make_repo("repo-a")
    commit_file(repo, "code.txt", "v1\n", "start")
    consent(repo)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: m1nd-stage\n    name: m1nd-stage\n"
        f"    entry: {sys.executable} -m m1nd hook run pre-commit\n"
        "    language: system\n    always_run: true\n    pass_filenames: false\n")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "the framework")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    done = subprocess.run([pre_commit, "install"], cwd=repo, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    earlier = write_letters(spool_path, "filed by hand, not staged")
    distribute(repo)  # the box now has unstaged letters
    later = write_letters(spool_path, "arrives before the commit")
    (repo / "code.txt").write_text("v2\n")
    git(repo, "add", "code.txt")
    committed = git(repo, "commit", "-qm", "code", env=env, check=False)
    assert committed.returncode == 0, committed.stdout + committed.stderr
    assert git(repo, "status", "--porcelain", "--", "code.txt").stdout == ""
    assert_each_letter_once(repo, earlier, "the framework's patch applied back")
    distribute(repo)
    assert_each_letter_once(repo, earlier + later, "the waiting letter is filed by the next filing")


def wait_for_hook_children(repo: Path, limit: float = 120) -> None:
    """Until no `m1nd hook run` process works in `repo` (a hook's detached child)."""
    import time

    give_up = time.monotonic() + limit
    while time.monotonic() < give_up:
        busy = False
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            busy |= b"hook\0run\0" in cmd and Path(cwd) == repo
        if not busy:
            return
        time.sleep(0.2)
    raise AssertionError("a hook's child kept running")


def test_a_pre_commit_hook_past_its_budget_never_writes_the_tracked_box_afterwards(a1, spool_path):
    ids = write_letters(spool_path, *[f"a letter the hook has no time for {n}" for n in range(200)])
    before = (a1 / ".m1nd" / "inbox.jsonl").read_bytes()
    (a1 / "code.txt").write_text("v2\n")
    env = {**os.environ, "M1ND_HOOK_TIMEOUT": "0.05"}
    committed = git(a1, "commit", "-qam", "code", env=env, check=False)
    assert committed.returncode == 0, committed.stderr
    assert "gave up waiting" in committed.stderr
    wait_for_hook_children(a1)
    assert (a1 / ".m1nd" / "inbox.jsonl").read_bytes() == before, "the tracked box is written only in time"
    assert clean(a1)
    assert git(a1, "switch", "-q", "-c", "next", check=False).returncode == 0
    distribute(a1)
    assert_each_letter_once(a1, ids, "the letters waited for the next safe filing")


def test_a_commit_refused_by_commit_msg_leaves_the_box_staged(a1, spool_path):
    hooks = Path(git(a1, "rev-parse", "--git-path", "hooks").stdout.strip())
    refuse = (a1 / hooks if not hooks.is_absolute() else hooks) / "commit-msg"
    refuse.write_text("#!/bin/sh\nexit 1\n")
    refuse.chmod(0o755)
    ids = write_letters(spool_path, "staged by an aborted commit")
    (a1 / "code.txt").write_text("v2\n")
    git(a1, "add", "code.txt")
    assert git(a1, "commit", "-qm", "refused", check=False).returncode == 1
    assert git(a1, "status", "--porcelain", "--", ".m1nd/inbox.jsonl").stdout.startswith("M  ")
    assert_each_letter_once(a1, ids)
    refuse.unlink()
    assert git(a1, "commit", "-qm", "carried", check=False).returncode == 0
    assert clean(a1)
    assert git(a1, "diff", "--quiet", "HEAD~1", "HEAD", "--", ".m1nd/inbox.jsonl", check=False).returncode == 1


def test_a_first_filing_too_big_for_the_hooks_budget_runs_in_the_background_and_never_touches_the_tracked_box(
        a1, spool_path, m1nd_home):
    """A cursor gone (a new home, a state rebuilt) and a spool that would take more than
    half the budget to read for the first time: the pre-commit hook does not keep git
    waiting; its background child files only what git ignores (the medulla box here),
    and the committed box waits for the next safe filing."""
    import shutil

    ours = write_letters(spool_path, *[f"a letter for the committed box, padded {'x' * 400}" for _ in range(3000)])
    private = write_letters(spool_path, *[f"a note for the home alone {'y' * 400}" for _ in range(3000)], repo="")
    assert spool_path.stat().st_size > 2 * 1024 * 1024  # more than half of a 2 s budget at 2 MiB/s
    shutil.rmtree(m1nd_home / "state")
    before = (a1 / ".m1nd" / "inbox.jsonl").read_bytes()
    (a1 / "code.txt").write_text("v2\n")
    env = {**os.environ, "M1ND_HOOK_TIMEOUT": "2"}
    committed = git(a1, "commit", "-qam", "code", env=env, check=False)
    assert committed.returncode == 0, committed.stderr
    assert "of the spool not read yet: the pre-commit hook files it in the background; letters for committed " \
           "boxes wait for the next commit or m1nd distribute" in committed.stderr
    assert "gave up waiting" not in committed.stderr, "git was not kept waiting for the one-time cost"
    wait_for_hook_children(a1)
    assert (a1 / ".m1nd" / "inbox.jsonl").read_bytes() == before, "the tracked box is not written in the background"
    assert clean(a1)
    medulla = collections_of(m1nd_home / "inbox.jsonl")
    assert set(private) <= medulla, "the background child filed what git ignores"
    # the next commit is a safe filing again (the cursor exists now): the letters travel with it
    (a1 / "code.txt").write_text("v3\n")
    again = git(a1, "commit", "-qam", "more code", env=env, check=False)
    assert again.returncode == 0 and "background" not in again.stderr, again.stderr
    assert clean(a1)
    assert_each_letter_once(a1, ours, "the committed box's letters came with the next commit")


def collections_of(box: Path) -> set[str]:
    from m1nd.letters import letter_id

    return {letter_id(l) for l in box.read_bytes().split(b"\n") if l.strip()}


def test_a_pre_commit_hook_whose_write_outlasts_the_budget_is_waited_for_never_left_behind(a1, spool_path):
    """The child asks the hook to wait before it writes the tracked box (never a check
    then a write that the hook's giving up can fall between): a slow write makes the
    commit wait for it, and the letters go into that commit."""
    ids = write_letters(spool_path, "filed by a slow disk")
    (a1 / "code.txt").write_text("v2\n")
    env = {**os.environ, "M1ND_HOOK_TIMEOUT": "1", "M1ND_TEST_PAUSE": "consented-append:2.5"}
    committed = git(a1, "commit", "-qam", "code", env=env, check=False)
    assert committed.returncode == 0, committed.stderr
    assert "gave up waiting" not in committed.stderr, committed.stderr
    assert "staged .m1nd/inbox.jsonl (1 new letter)" in committed.stderr
    wait_for_hook_children(a1)
    assert clean(a1), git(a1, "status", "--porcelain").stdout
    assert_each_letter_once(a1, ids, "filed and committed")
