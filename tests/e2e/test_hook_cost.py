"""The hook a checkout runs costs a few stats when nothing is new: it answers from
what the last hook found (m1nd/gitops/hookstamp.py) without loading the distribution,
and a box that git rewrote into a blob seen before is answered from that blob's id.
Whatever is new (a letter, a box unseen) still runs the hook in full."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from m1nd.gitops import hookstamp
from gitworld import letter, box_ids, box_path, commit_file, consent, git, install_hooks, write_letters

HEAVY = ("m1nd.distribute", "m1nd.readmodel", "m1nd.secret_rules")
# A budget no hook that loads the distribution meets: a hook that answers within it
# answered from what the last hook found, before it forked any work.
NO_TIME = "0.001"


@pytest.fixture
def a(tmp_path, spool_path) -> Path:
    repo = tmp_path / "src" / "repo-a"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    commit_file(repo, "code.txt", "v1\n", "start")
    consent(repo)
    install_hooks(repo, "--stage")
    write_letters(spool_path, "one open letter")
    commit_file(repo, "code.txt", "v2\n", "carries a letter")  # the pre-commit hook files it
    return repo


def switch(repo: Path, branch: str, budget: str | None = None) -> tuple[str, set[str]]:
    """`git switch BRANCH`: the hook's lines and the modules its process imported."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    if budget:
        env["M1ND_HOOK_TIMEOUT"] = budget
    done = git(repo, "switch", "-q", branch, env=env)
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    notice = "\n".join(line for line in done.stderr.splitlines() if line.startswith("m1nd:"))
    return notice, modules


def answered_at_once(repo: Path, branch: str) -> str:
    notice, modules = switch(repo, branch, NO_TIME)
    assert "gave up waiting" not in notice, "the hook went to work: it did not know the answer"
    assert not set(HEAVY) & modules, sorted(m for m in modules if m.startswith("m1nd"))
    return notice


def test_a_switch_with_nothing_new_answers_the_same_notice_at_once_without_loading_the_distribution(a):
    git(a, "branch", "x")
    first, modules = switch(a, "x")  # the first hook here runs in full (in its child)
    assert "repo-a has 1 open letter" in first
    assert answered_at_once(a, "main") == first
    assert answered_at_once(a, "x") == first


def test_a_box_git_rewrites_into_a_blob_seen_before_is_answered_from_that_blob(a, spool_path):
    git(a, "switch", "-q", "-c", "x")
    write_letters(spool_path, "a second letter, on x")
    commit_file(a, "x.txt", "x\n", "x carries a second letter")
    assert len(box_path(a).read_bytes().splitlines()) == 2
    learnt_main, _ = switch(a, "main")  # in full: git rewrote the box
    learnt_x, _ = switch(a, "x")  # both blobs seen now
    assert "repo-a has 2 open letters" in learnt_x
    assert answered_at_once(a, "main") == learnt_main, "a blob seen before is never analysed again"
    assert answered_at_once(a, "x") == learnt_x


def test_a_letter_written_after_a_cached_answer_is_counted_by_the_next_switch(a, spool_path):
    git(a, "branch", "x")
    switch(a, "x")
    switch(a, "main")
    write_letters(spool_path, "written since")
    notice, _ = switch(a, "x", NO_TIME)
    assert "gave up waiting" in notice, "something new: the hook goes to work"
    notice, _ = switch(a, "main")
    assert "repo-a has 2 open letters (1 waiting to be filed)" in notice, notice


def test_a_box_changed_by_hand_is_never_answered_from_the_stamp(a):
    git(a, "branch", "x")
    switch(a, "x")
    switch(a, "main")
    with box_path(a).open("ab") as fh:  # a blob no hook here has seen: the hook looks again
        fh.write(orjson.dumps(letter("copied in by hand")) + b"\n")
    notice, _ = switch(a, "x", NO_TIME)
    assert "gave up waiting" in notice, "a blob unseen: the hook goes to work"
    notice, _ = switch(a, "main")
    assert "repo-a has 2 open letters" in notice, notice


def test_a_box_that_git_comes_to_ignore_is_filed_by_the_next_switch_though_nothing_else_changed(a, spool_path):
    ids = write_letters(spool_path, "waits for a safe filing")
    git(a, "branch", "x")
    switch(a, "x")
    switch(a, "main")  # stamped: the letter waits (the box is consented)
    git(a, "rm", "-q", "--cached", ".m1nd/inbox.jsonl")
    with (a / ".git" / "info" / "exclude").open("a") as fh:
        fh.write(".m1nd/inbox.jsonl\n")  # now a box git ignores: post-* hooks file it
    switch(a, "x")
    assert set(ids) <= set(box_ids(a)), "the hook filed the letter into the box git now ignores"


def test_a_box_a_global_excludes_file_comes_to_ignore_is_filed_by_the_next_switch(a, spool_path):
    """git's own config names the global excludes file (core.excludesFile): the stamp
    watches that file and the config files that name it, never asking git."""
    excludes = Path(os.environ["HOME"]) / "global-ignore"
    excludes.write_text("*.swp\n")
    git(a, "config", "--global", "core.excludesFile", "~/global-ignore")
    ids = write_letters(spool_path, "waits for a safe filing")
    git(a, "rm", "-q", "--cached", ".m1nd/inbox.jsonl")  # untracked, not ignored: no hook files it
    git(a, "branch", "x")
    switch(a, "x")
    switch(a, "main")
    assert not set(ids) & set(box_ids(a))
    answered_at_once(a, "x")  # stamped
    with excludes.open("a") as fh:
        fh.write(".m1nd/inbox.jsonl\n")  # only the global excludes file changes
    notice, _ = switch(a, "main")
    assert set(ids) <= set(box_ids(a)), ("the hook filed the letter into the box git now ignores", notice)


def _stamped_blobs(home: Path) -> list[dict]:
    import marshal

    stamp = marshal.loads((home / "state" / "hook-stamp").read_bytes())
    return [entry.get("blobs", {}) for entry in stamp.values()]


def test_a_box_git_ignores_grown_by_filing_is_counted_and_never_learnt_as_a_blob(a, m1nd_home, spool_path):
    """A box git's index does not hold is never written by git, so its content is no
    blob to learn: the switch after letters were filed into it runs in full and counts
    them, and learns no blob id (hashing a large box costs more than the whole run)."""
    git(a, "rm", "-q", "--cached", ".m1nd/inbox.jsonl")
    with (a / ".git" / "info" / "exclude").open("a") as fh:
        fh.write(".m1nd/inbox.jsonl\n")
    git(a, "branch", "x")
    switch(a, "x")
    switch(a, "main")
    learnt = [set(blobs) for blobs in _stamped_blobs(m1nd_home)]
    with box_path(a).open("ab") as fh:  # past the size below which a box is hashed without asking git
        many = [orjson.dumps(letter(f"appended where the box lies, {n}: " + "x" * 300)) for n in range(3500)]
        fh.write(b"\n".join(many) + b"\n")
    assert box_path(a).stat().st_size > hookstamp.HASH_WITHOUT_ASKING
    notice, _ = switch(a, "x", NO_TIME)
    assert "gave up waiting" in notice, "something new: the hook goes to work"
    notice, _ = switch(a, "main")
    assert "repo-a has 3501 open letters" in notice, notice
    assert [set(blobs) for blobs in _stamped_blobs(m1nd_home)] == learnt
    assert answered_at_once(a, "x") == notice, "once the grown box is stamped, nothing new answers at once"
