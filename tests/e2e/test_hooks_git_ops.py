"""The one rule (spec/git.md section 3): a git operation that works without m1nd's hooks
works the same with them, and no letter ends up in no box.

Every scenario runs real git with m1nd's shims installed (`hooks install --stage`),
asserts git's exit status and the work tree after it, then runs a safe filing and
checks that every letter is in exactly its box.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitworld import (assert_each_letter_once, box_ids, box_path, clean, commit_file, consent, git, install_hooks,
                      m1nd, other_home_env, write_letters)


@pytest.fixture
def origin(tmp_path) -> Path:
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    return bare


@pytest.fixture
def a(tmp_path, origin) -> Path:
    """This machine's clone: consented, pushed, hooks installed with --stage."""
    repo = tmp_path / "src" / "repo-a"
    repo.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(origin), str(repo))
    git(repo, "checkout", "-q", "-b", "main")
    commit_file(repo, "code.txt", "v1\n", "start")
    consent(repo)
    install_hooks(repo, "--stage")
    git(repo, "push", "-q", "-u", "origin", "main")
    return repo


@pytest.fixture
def b(tmp_path, origin, a) -> tuple[Path, dict]:
    """A teammate's clone on another machine (its own home), merge driver configured."""
    env = other_home_env(tmp_path, "b")
    repo = tmp_path / "b" / "repo-a"
    repo.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(origin), str(repo))
    done = m1nd("hooks", "install", "--stage", str(repo), cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    return repo, env


def teammate_letter(b, what: str, spool_env_path=None) -> list[str]:
    repo, env = b
    ids = write_letters(Path(env["M1ND_HOME"]) / "field-reports.jsonl", what)
    commit = git(repo, "commit", "-q", "--allow-empty", "-m", f"teammate: {what}", env=env)
    assert commit.returncode == 0
    assert set(ids) <= set(box_ids(repo)), "the teammate's pre-commit hook filed and staged it"
    git(repo, "push", "-q", "origin", "HEAD", env=env)
    return ids


def safe_filing(repo: Path) -> None:
    done = m1nd("distribute", cwd=repo)
    assert done.returncode == 0, done.stderr


# ----------------------------------------------------------------------------- rebases


@pytest.mark.parametrize("backend", ["--merge", "--apply"])
def test_pull_rebase_with_a_waiting_letter_succeeds_and_the_letter_is_filed_later(a, b, spool_path, backend):
    mine = write_letters(spool_path, "found on a")
    commit_file(a, "code.txt", "v2\n", "a: code")  # the pre-commit hook files and stages it
    assert set(mine) <= set(box_ids(a))
    theirs = teammate_letter(b, "found on b")
    waiting = write_letters(spool_path, "waits during the pull")
    pulled = git(a, "-c", f"rebase.backend={backend[2:]}", "pull", "-q", "--rebase", check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert "Could not apply" not in pulled.stderr
    assert clean(a)
    assert not set(waiting) & set(box_ids(a)), "nothing filed into the tracked box during the rebase"
    safe_filing(a)
    assert_each_letter_once(a, mine + theirs + waiting, "after the next safe filing")


def test_pull_rebase_autostash_with_a_waiting_letter(a, b, spool_path):
    teammate_letter(b, "found on b")
    commit_file(a, "code.txt", "v2\n", "a: code")
    (a / "code.txt").write_text("dirty, not committed\n")
    waiting = write_letters(spool_path, "waits")
    pulled = git(a, "pull", "-q", "--rebase", "--autostash", check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert (a / "code.txt").read_text() == "dirty, not committed\n"
    assert git(a, "status", "--porcelain").stdout == " M code.txt\n"
    safe_filing(a)
    assert_each_letter_once(a, waiting)


def _sequence_editor(tmp_path: Path, action: str) -> dict:
    script = tmp_path / "seq-editor.sh"
    script.write_text(f"#!/bin/sh\nsed -i '1s/^pick/{action}/' \"$1\"\n")
    script.chmod(0o755)
    return {**os.environ, "GIT_SEQUENCE_EDITOR": str(script)}


def test_an_interactive_rebase_stop_files_nothing_and_abort_loses_no_letter(a, spool_path, tmp_path):
    filed = write_letters(spool_path, "filed, not committed")
    safe_filing(a)  # a command the user ran: the box now has an uncommitted letter
    git(a, "add", ".m1nd/inbox.jsonl")
    git(a, "commit", "-qm", "box")
    for n in range(3):
        commit_file(a, "code.txt", f"v{n + 2}\n", f"code {n}")
    env = _sequence_editor(tmp_path, "edit")
    started = git(a, "rebase", "-i", "HEAD~3", env=env, check=False)
    assert started.returncode == 0, started.stderr
    waiting = write_letters(spool_path, "written during the stop")
    during = m1nd("distribute", cwd=a)
    assert during.returncode == 0
    assert "wait until git is done" in during.stderr and "rebase" in during.stderr
    assert not set(waiting) & set(box_ids(a))
    amend = git(a, "commit", "-q", "--amend", "--no-edit", check=False)  # pre-commit runs: stages nothing
    assert amend.returncode == 0, amend.stderr
    assert git(a, "rebase", "--continue", check=False).returncode == 0
    assert clean(a)
    git(a, "rebase", "-i", "HEAD~2", env=env)
    assert git(a, "rebase", "--abort", check=False).returncode == 0
    assert clean(a)
    safe_filing(a)
    assert_each_letter_once(a, filed + waiting, "after the abort and a safe filing")


def test_an_aborted_rebase_drops_uncommitted_letters_and_they_are_filed_again(a, spool_path, tmp_path):
    commit_file(a, "code.txt", "v2\n", "more")
    commit_file(a, "code.txt", "v3\n", "more again")
    dropped = write_letters(spool_path, "filed by hand")
    safe_filing(a)
    git(a, "stash", "-q")  # the rebase wants a clean tree: the letter goes into a stash ...
    git(a, "stash", "drop", "-q")  # ... which is dropped
    assert not set(dropped) & set(box_ids(a))
    env = _sequence_editor(tmp_path, "edit")
    git(a, "rebase", "-i", "HEAD~2", env=env)
    assert git(a, "rebase", "--abort", check=False).returncode == 0
    safe_filing(a)
    assert_each_letter_once(a, dropped, "a letter dropped before any commit is filed again")
    assert git(a, "status", "--porcelain").stdout == " M .m1nd/inbox.jsonl\n"


# ----------------------------------------------------------------------------- bisect


def test_bisect_steps_and_reset_never_fail_with_a_letter_waiting(a, spool_path):
    for n in range(6):
        commit_file(a, "code.txt", f"v{n + 2}\n", f"step {n}")
    write_letters(spool_path, "before bisect")
    safe_filing(a)
    git(a, "commit", "-qam", "box")
    waiting = write_letters(spool_path, "waits during bisect")
    assert git(a, "bisect", "start", "HEAD", "HEAD~7").returncode == 0
    for verdict in ("good", "bad", "good"):
        step = git(a, "bisect", verdict, check=False)
        assert step.returncode == 0, step.stderr
        assert clean(a), "a bisect step left the work tree dirty"
        during = m1nd("distribute", cwd=a)
        assert "wait until git is done" in during.stderr or not box_path(a).exists()
    reset = git(a, "bisect", "reset", check=False)
    assert reset.returncode == 0, reset.stderr
    assert clean(a)
    safe_filing(a)
    assert_each_letter_once(a, waiting)


# ----------------------------------------------------------------------------- dropped by git


@pytest.mark.parametrize("drop", [
    ["reset", "-q", "--hard"],
    ["checkout", "-q", "--", ".m1nd"],
    ["restore", ".m1nd/inbox.jsonl"],
])
def test_a_letter_dropped_from_the_work_tree_before_any_commit_is_filed_again(a, spool_path, drop):
    ids = write_letters(spool_path, "filed then dropped", "and another")
    safe_filing(a)
    assert_each_letter_once(a, ids)
    git(a, *drop)
    assert not set(ids) & set(box_ids(a)) and clean(a)
    never = write_letters(spool_path, "never filed yet")
    doctor = m1nd("doctor", "--json", cwd=a)
    danger = [c for c in __import__("json").loads(doctor.stdout)["checks"] if c["name"] == "git"][0]
    # the filing record tells the two apart: the dropped letters are in danger, the new one only waits
    assert f"2 letters in no box ({ids[0]}, {ids[1]})" in danger["message"], danger
    assert f"1 letter waiting to be filed ({never[0]})" in danger["message"], danger
    assert "m1nd distribute" in danger["fix"]
    safe_filing(a)
    assert_each_letter_once(a, ids + never, "the receipt must not call a dropped letter 'filed earlier'")


def test_a_letter_never_filed_is_waiting_to_be_filed_never_in_no_box(a, spool_path):
    ids = write_letters(spool_path, "not filed yet")  # the box is consented; nothing filed it yet
    doctor = m1nd("doctor", "--json", cwd=a)
    danger = [c for c in __import__("json").loads(doctor.stdout)["checks"] if c["name"] == "git"][0]
    assert f"1 letter waiting to be filed ({ids[0]})" in danger["message"] and "in no box" not in danger["message"]


def test_stash_keeps_its_letter_and_pop_brings_it_back_then_drop_refiles(a, spool_path):
    ids = write_letters(spool_path, "stashed")
    safe_filing(a)
    git(a, "stash", "-q")
    safe_filing(a)
    assert not set(ids) & set(box_ids(a)), "a letter the stash holds is not filed again"
    popped = git(a, "stash", "pop", "-q", check=False)
    assert popped.returncode == 0, popped.stderr
    assert_each_letter_once(a, ids)
    git(a, "stash", "-q")
    git(a, "stash", "drop", "-q")
    safe_filing(a)
    assert_each_letter_once(a, ids, "after stash drop")


def test_a_letter_committed_on_another_branch_is_not_re_added(a, spool_path):
    ids = write_letters(spool_path, "on feature")
    git(a, "checkout", "-q", "-b", "feature")
    commit_file(a, "f.txt", "f\n", "feature work")  # pre-commit files and stages the letter
    assert set(ids) <= set(box_ids(a))
    git(a, "checkout", "-q", "main")
    assert not set(ids) & set(box_ids(a))
    safe_filing(a)
    assert not set(ids) & set(box_ids(a)) and clean(a), "it comes back by merge, not by filing"
    for branch in ("feature", "main", "feature"):
        assert git(a, "checkout", "-q", branch, check=False).returncode == 0
    git(a, "checkout", "-q", "main")
    merged = git(a, "merge", "-q", "--no-edit", "feature", check=False)
    assert merged.returncode == 0, merged.stderr
    assert_each_letter_once(a, ids)


def test_revert_of_a_commit_that_added_letters_files_them_again_at_the_next_commit(a, spool_path):
    ids = write_letters(spool_path, "reverted away")
    commit_file(a, "code.txt", "v2\n", "code with letter")
    reverted = git(a, "revert", "--no-edit", "HEAD", check=False)
    assert reverted.returncode == 0, reverted.stderr
    assert clean(a)
    commit_file(a, "code.txt", "v3\n", "next commit")  # pre-commit: a safe filing of this box
    assert_each_letter_once(a, ids, "a letter no commit on any branch still holds is filed again")


# ----------------------------------------------------------------------------- layouts


def test_a_linked_worktree_shares_hooks_and_never_gets_a_stray_file(a, spool_path, tmp_path):
    wt = tmp_path / "wt" / "repo-a-wt"
    git(a, "worktree", "add", "-q", "-b", "wt", str(wt))
    ids = write_letters(spool_path, "for the main checkout")
    done = git(wt, "checkout", "-q", "-b", "wt2")
    assert done.returncode == 0 and clean(wt) and clean(a)
    commit_file(wt, "w.txt", "w\n", "worktree work")
    assert clean(wt) and clean(a), "the pre-commit hook in the worktree files only the worktree's own box"
    safe_filing(a)
    assert_each_letter_once(a, ids)


def test_clone_depth_1_and_its_hooks(a, spool_path, tmp_path, origin):
    shallow = tmp_path / "shallow" / "repo-a"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(shallow))
    m1nd("roster", "remove", str(a), cwd=tmp_path)  # one repo-a on this machine: the shallow clone
    install_hooks(shallow, "--stage")
    ids = write_letters(spool_path, "in a shallow clone")
    assert git(shallow, "checkout", "-q", "-b", "x").returncode == 0 and clean(shallow)
    commit_file(shallow, "s.txt", "s\n", "shallow work")
    assert clean(shallow)
    assert_each_letter_once(shallow, ids)


def test_a_sparse_checkout_without_m1nd_gets_nothing_written_outside_its_cone(a, spool_path, tmp_path, origin):
    (a / "src").mkdir()
    commit_file(a, "src/lib.txt", "lib\n", "src")
    git(a, "push", "-q")
    sparse = tmp_path / "sparse" / "repo-a"
    git(tmp_path, "clone", "-q", "--no-checkout", str(origin), str(sparse))
    git(sparse, "sparse-checkout", "set", "--cone", "src")
    git(sparse, "checkout", "-q", "main")
    m1nd("roster", "remove", str(a), cwd=tmp_path)  # one repo-a on this machine: the sparse clone
    install_hooks(sparse, "--stage")
    assert not (sparse / ".m1nd").exists()
    write_letters(spool_path, "for a box outside the cone")
    assert git(sparse, "checkout", "-q", "-b", "y").returncode == 0
    (sparse / "src" / "lib.txt").write_text("lib 2\n")
    assert git(sparse, "commit", "-qam", "work").returncode == 0
    done = m1nd("distribute", cwd=sparse)
    assert done.returncode == 0 and "sparse checkout" in done.stderr
    assert not (sparse / ".m1nd").exists(), "nothing written outside the cone"
    assert clean(sparse)


def test_core_hooks_path_with_forced_shims(a, spool_path, tmp_path):
    hooks_dir = a / ".githooks"
    git(a, "config", "core.hooksPath", ".githooks")
    forced = m1nd("hooks", "install", "--stage", "--force", str(a), cwd=a)
    assert forced.returncode == 0, forced.stderr
    assert (hooks_dir / "post-checkout").exists()
    ids = write_letters(spool_path, "via core.hooksPath")
    (a / ".gitignore").write_text(".githooks/\n")
    git(a, "add", ".gitignore")
    assert git(a, "commit", "-qm", "ignore hooks").returncode == 0
    assert git(a, "checkout", "-q", "-b", "z").returncode == 0 and clean(a)
    assert_each_letter_once(a, ids, "filed by the pre-commit shim in core.hooksPath")


# ----------------------------------------------------------------------------- consent arriving


def test_a_teammates_consent_commit_arrives_by_pull_over_a_local_box(tmp_path, origin, spool_path):
    env_b = other_home_env(tmp_path, "b")
    mine = tmp_path / "src" / "repo-a"
    mine.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(origin), str(mine))
    git(mine, "checkout", "-q", "-b", "main")
    commit_file(mine, "code.txt", "v1\n", "start")
    git(mine, "push", "-q", "-u", "origin", "main")
    install_hooks(mine, "--stage")
    local = write_letters(spool_path, "filed into the local box")
    assert git(mine, "checkout", "-q", "-b", "tmp").returncode == 0  # the hook files into the ignored box
    git(mine, "checkout", "-q", "main")
    assert set(local) <= set(box_ids(mine)) and clean(mine)
    assert git(mine, "status", "--porcelain", "--ignored").stdout == "!! .m1nd/\n"

    theirs = tmp_path / "b" / "repo-a"
    theirs.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(origin), str(theirs))
    consent(theirs, env=env_b)
    git(theirs, "push", "-q", "origin", "main")

    pulled = git(mine, "pull", "-q", "--no-rebase", check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert clean(mine)
    git(mine, "checkout", "-q", "HEAD~1")  # back to a checkout from before consent ...
    assert clean(mine)
    back = git(mine, "checkout", "-q", "main", check=False)  # ... and forward again
    assert back.returncode == 0, back.stderr
    m1nd("init", cwd=mine)
    safe_filing(mine)
    assert_each_letter_once(mine, local, "this machine's letters come back at the next filing")


def test_an_earlier_birth_gitignore_is_upgraded(tmp_path, make_repo, spool_path, cli):
    repo = make_repo("repo-a")
    commit_file(repo, "code.txt", "v1\n", "start")
    (repo / ".m1nd").mkdir()
    (repo / ".m1nd" / ".gitignore").write_bytes(b"inbox.jsonl\n")
    ids = write_letters(spool_path, "into an old local box")
    assert cli("distribute", cwd=repo).code == 0
    assert (repo / ".m1nd" / ".gitignore").read_bytes() == b"inbox.jsonl\n.gitignore\n"
    assert git(repo, "status", "--porcelain").stdout == ""
    assert_each_letter_once(repo, ids)


def test_init_makes_the_box_file_so_the_consent_commit_carries_it(make_repo, cli):
    repo = make_repo("repo-a")
    commit_file(repo, "code.txt", "v1\n", "start")
    assert cli("init", str(repo)).code == 0
    assert box_path(repo).read_bytes() == b""
    git(repo, "add", ".m1nd", ".gitattributes")
    assert ".m1nd/inbox.jsonl" in git(repo, "diff", "--cached", "--name-only").stdout.split()


def test_a_local_box_born_with_the_earlier_gitignore_takes_a_teammates_consent_by_pull(tmp_path, origin, spool_path):
    """Boxes born before the birth .gitignore ignored itself: any filing upgrades them,
    so the first pull of a teammate's consent commit is not refused."""
    env_b = other_home_env(tmp_path, "b")
    mine = tmp_path / "src" / "repo-a"
    mine.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(origin), str(mine))
    git(mine, "checkout", "-q", "-b", "main")
    commit_file(mine, "code.txt", "v1\n", "start")
    git(mine, "push", "-q", "-u", "origin", "main")
    (mine / ".m1nd").mkdir()
    (mine / ".m1nd" / ".gitignore").write_bytes(b"inbox.jsonl\n")  # what an earlier m1nd left
    (mine / ".m1nd" / "inbox.jsonl").write_bytes(b"")
    install_hooks(mine)
    write_letters(spool_path, "for another repository", repo="repo-z")  # a spool, nothing for repo-a
    assert git(mine, "checkout", "-q", "-b", "tmp").returncode == 0
    assert (mine / ".m1nd" / ".gitignore").read_bytes() == b"inbox.jsonl\n.gitignore\n"
    git(mine, "checkout", "-q", "main")
    theirs = tmp_path / "b" / "repo-a"
    theirs.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(origin), str(theirs))
    consent(theirs, env=env_b)
    git(theirs, "push", "-q", "origin", "main")
    pulled = git(mine, "pull", "-q", "--no-rebase", check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert clean(mine)


@pytest.mark.parametrize("operation", ["merge", "cherry-pick", "revert", "am"])
def test_nothing_is_filed_by_hand_while_git_stops_on_a_conflict(a, spool_path, tmp_path, operation):
    git(a, "checkout", "-q", "-b", "other")
    commit_file(a, "code.txt", "other\n", "other side")
    other = git(a, "rev-parse", "HEAD").stdout.strip()
    patch = tmp_path / "other.patch"
    patch.write_text(git(a, "format-patch", "-1", "--stdout", "HEAD").stdout)
    git(a, "checkout", "-q", "main")
    commit_file(a, "code.txt", "main\n", "main side")
    if operation == "revert":
        commit_file(a, "code.txt", "main again\n", "main again")
        args = ["revert", "--no-edit", "HEAD~1"]
    else:
        args = {"merge": ["merge", "--no-edit", "other"], "cherry-pick": ["cherry-pick", other],
                "am": ["am", str(patch)]}[operation]
    stopped = git(a, *args, check=False)
    assert stopped.returncode != 0, "the scenario needs git to stop on a conflict"
    waiting = write_letters(spool_path, f"during {operation}")
    before = box_path(a).read_bytes()
    during = m1nd("distribute", cwd=a)
    assert during.returncode == 0
    assert "wait until git is done" in during.stderr, during.stderr
    assert box_path(a).read_bytes() == before
    doctor = __import__("json").loads(m1nd("doctor", "--json", cwd=a).stdout)
    check = next(c for c in doctor["checks"] if c["name"] == "git")
    assert "once git is done" in check["fix"]
    abort = {"merge": ["merge", "--abort"], "cherry-pick": ["cherry-pick", "--abort"],
             "revert": ["revert", "--abort"], "am": ["am", "--abort"]}[operation]
    assert git(a, *abort, check=False).returncode == 0
    assert clean(a)
    safe_filing(a)
    assert_each_letter_once(a, waiting)


def test_a_hook_that_leaves_letters_waiting_counts_the_spool_as_a_first_run_would(a, spool_path, tmp_path):
    secret = "token=" + "ab12" * 6  # built at run time: a made-up value
    write_letters(spool_path, "plain", f"carries {secret}")
    git(a, "checkout", "-q", "-b", "side")  # the hook leaves both for a safe filing
    after_hook = json_of(m1nd("distribute", "--json", cwd=a))
    import shutil

    shutil.rmtree(tmp_path / "m1nd-home" / "state")
    first_run = json_of(m1nd("distribute", "--json", cwd=a))
    assert {k: v for k, v in after_hook.items() if k != "appended"} == \
        {k: v for k, v in first_run.items() if k != "appended"}
    assert after_hook["to_project"] == 1 and after_hook["appended"] == 1


def json_of(done):
    assert done.returncode == 0, done.stderr
    return __import__("json").loads(done.stdout)


def test_bisect_across_the_consent_commit_files_nothing_into_old_checkouts(make_repo, spool_path, tmp_path):
    """The bisect range reaches back before the repository consented: those checkouts
    get no `.m1nd/` at all, so git can always switch back."""
    repo = make_repo("repo-a")
    for n in range(6):
        commit_file(repo, "code.txt", f"old {n}\n", f"before consent {n}")
    consent(repo)
    install_hooks(repo, "--stage")
    commit_file(repo, "code.txt", "new\n", "after consent")
    commit_file(repo, "late.txt", "bug\n", "the bug")
    waiting = write_letters(spool_path, "waits across the bisect")
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    probe = tmp_path / "probe.sh"
    log = tmp_path / "visited.log"
    probe.write_text(f"#!/bin/sh\n[ -e .m1nd ] && echo consented >> {log} || echo before >> {log}\n"
                     f"git status --porcelain --ignored >> {log}\ntest ! -f late.txt\n")
    probe.chmod(0o755)
    assert git(repo, "bisect", "start", "HEAD", first).returncode == 0
    ran = git(repo, "bisect", "run", str(probe), check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "the bug" in ran.stdout
    visited = log.read_text().splitlines()
    assert "before" in visited, "the bisect visited a checkout from before consent"
    assert set(visited) <= {"before", "consented"}, "every step left the work tree clean, nothing ignored"
    assert git(repo, "bisect", "reset", check=False).returncode == 0
    assert clean(repo)
    safe_filing(repo)
    assert_each_letter_once(repo, waiting)


def test_a_post_checkout_hook_with_nothing_new_spawns_no_git_but_the_top_level_query(a, spool_path, tmp_path):
    write_letters(spool_path, "already filed")
    safe_filing(a)
    git(a, "commit", "-qam", "box")
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    log = tmp_path / "git-calls.log"
    real = __import__("shutil").which("git")
    (fake / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (fake / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    for _ in range(2):
        done = m1nd("hook", "run", "post-checkout", "x", "y", "1", cwd=a, env=env)
        assert done.returncode == 0, done.stderr
    # The bound root comes from git itself (mailbox.md 3): one `rev-parse --show-toplevel`
    # in the first run, and nothing else; the second finds nothing changed since the
    # first (its stamp) and spawns no git at all.
    calls = log.read_text().splitlines() if log.exists() else []
    assert calls == ["rev-parse --show-toplevel"], calls


def test_a_command_waits_while_another_git_command_holds_the_index(a, spool_path):
    waiting = write_letters(spool_path, "while git works")
    lock = a / ".git" / "index.lock"
    lock.write_bytes(b"")
    try:
        done = m1nd("distribute", cwd=a)
        assert done.returncode == 0 and "index.lock" in done.stderr
        assert not set(waiting) & set(box_ids(a))
    finally:
        lock.unlink()
    safe_filing(a)
    assert_each_letter_once(a, waiting)
