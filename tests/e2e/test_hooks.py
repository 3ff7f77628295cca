"""Git hooks end to end: real git runs the installed shims, which run m1nd.

The shims are installed from this test process, so they record sys.executable (the
virtualenv's python) and find m1nd without PATH.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import write_spool
from m1nd.gitops import hooks as hookmod

REPO_TOP = Path(__file__).resolve().parents[2]


def git(repo, *args, check=True, env=None, input=None, cwd=None) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", *args], cwd=cwd or repo, capture_output=True, text=True, env=env, input=input,
                          timeout=60)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done


def letter(what: str, repo: str = "repo-a") -> dict:
    return {"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "class": "bug", "repo": repo, "what": what}


def box_lines(repo) -> list[bytes]:
    path = repo / ".m1nd" / "inbox.jsonl"
    return path.read_bytes().splitlines() if path.exists() else []


def hooks_tree(hooks_dir: Path) -> dict:
    return {p.name: (p.read_bytes(), stat.S_IMODE(p.lstat().st_mode), p.lstat().st_mtime_ns, p.lstat().st_ino)
            for p in sorted(hooks_dir.iterdir()) if not p.name.endswith(".sample")}


def write_hook(path: Path, body: str, mode: int = 0o755) -> bytes:
    data = ("#!/bin/sh\n" + body).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    return data


@pytest.fixture
def repo(make_repo):
    r = make_repo("repo-a")
    (r / "code.txt").write_text("v1\n")
    git(r, "add", "code.txt")
    git(r, "commit", "-qm", "start")
    return r


@pytest.fixture
def consented(repo, cli):
    assert cli("init", str(repo)).code == 0
    git(repo, "add", ".m1nd", ".gitattributes")
    git(repo, "commit", "-qm", "m1nd: consent")
    return repo


# ----------------------------------------------------------------------------- install / uninstall


def test_a_foreign_hook_is_chained_and_runs_exactly_once(repo, cli, spool_path, tmp_path):
    log = tmp_path / "foreign.log"
    hooks_dir = repo / ".git" / "hooks"
    original = write_hook(hooks_dir / "post-checkout", f'echo "ran $# $*" >> "{log}"\n')
    result = cli("hooks", "install", str(repo))
    assert result.code == 0, result.stderr
    assert "post-checkout: installed; your hook moved to post-checkout.m1nd-chained" in result.stdout
    assert (hooks_dir / "post-checkout.m1nd-chained").read_bytes() == original
    write_spool(spool_path, [letter("the depth limit is ignored")])

    done = git(repo, "checkout", "-q", "-b", "feature")

    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ran 3 ") and lines[0].endswith(" 1")
    assert len(box_lines(repo)) == 1, "the checkout distributed"
    assert done.stderr == "m1nd: repo-a has 1 open letter (1 new) — m1nd sweep to read\n"
    assert "\x1b[" not in done.stderr
    again = git(repo, "checkout", "-q", "main")
    assert again.stderr == "m1nd: repo-a has 1 open letter — m1nd sweep to read\n"
    assert len(log.read_text().splitlines()) == 2


def test_the_legacy_hook_gets_the_same_stdin_and_its_status_is_the_shims(repo, cli, tmp_path):
    log = tmp_path / "rewrite.log"
    hooks_dir = repo / ".git" / "hooks"
    write_hook(hooks_dir / "post-rewrite", f'echo "args: $*" >> "{log}"\ncat >> "{log}"\nexit 3\n')
    cli("hooks", "install", str(repo))
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "commit", "-q", "--amend", "-m", "start, amended")
    new = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert log.read_text() == f"args: amend\n{head} {new}\n"
    # run directly: the legacy's exit status is the shim's
    done = subprocess.run(["sh", str(hooks_dir / "post-rewrite"), "rebase"], cwd=repo, input="x y\n",
                          capture_output=True, text=True)
    assert done.returncode == 3
    assert log.read_text().endswith("args: rebase\nx y\n")
    # run by a relative path with CDPATH set: the shim still finds its legacy hook
    env = {**os.environ, "CDPATH": str(repo / ".git")}
    done = subprocess.run(["sh", "hooks/post-rewrite", "amend"], cwd=repo / ".git", input="p q\n", env=env,
                          capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    assert log.read_text().endswith("args: amend\np q\n")


def test_a_legacy_hook_that_calls_the_shim_again_runs_once(repo, cli, tmp_path):
    log = tmp_path / "loop.log"
    hooks_dir = repo / ".git" / "hooks"
    write_hook(hooks_dir / "post-merge", f'echo ran >> "{log}"\n"$(dirname "$0")/post-merge" "$@"\n')
    cli("hooks", "install", str(repo))
    done = subprocess.run([str(hooks_dir / "post-merge"), "0"], cwd=repo, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert log.read_text() == "ran\n"


def test_installing_twice_changes_nothing(repo, cli):
    hooks_dir = repo / ".git" / "hooks"
    write_hook(hooks_dir / "post-merge", "exit 0\n")
    assert cli("hooks", "install", "--stage", str(repo)).code == 0
    before = hooks_tree(hooks_dir)
    assert set(before) == {"post-checkout", "post-merge", "post-merge.m1nd-chained", "post-rewrite", "pre-commit"}
    again = cli("hooks", "install", "--stage", "--json", str(repo))
    assert again.code == 0
    assert {a["action"] for a in again.json["actions"]} == {"unchanged"}
    assert hooks_tree(hooks_dir) == before
    assert cli("hooks", "install", str(repo)).code == 0  # without --stage: the pre-commit shim stays
    assert hooks_tree(hooks_dir) == before
    for name in ("post-checkout", "post-merge", "post-rewrite", "pre-commit"):
        data = (hooks_dir / name).read_bytes()
        assert data.startswith(b"#!/bin/sh\n# m1nd-hook-shim 3\n")
        assert stat.S_IMODE((hooks_dir / name).stat().st_mode) == 0o755


def test_status_says_what_is_installed(repo, cli):
    hooks_dir = repo / ".git" / "hooks"
    write_hook(hooks_dir / "post-checkout", "exit 0\n")
    doc = cli("hooks", "status", "--json", str(repo)).json
    assert doc["hooks_dir"] == str(hooks_dir)
    assert [(h["hook"], h["state"]) for h in doc["hooks"]] == [
        ("post-checkout", "foreign"), ("post-merge", "absent"), ("post-rewrite", "absent"), ("pre-commit", "absent")]
    cli("hooks", "install", str(repo))
    doc = cli("hooks", "status", "--json", str(repo)).json
    states = {h["hook"]: h for h in doc["hooks"]}
    assert states["post-checkout"]["state"] == "current" and states["post-checkout"]["legacy_chained"]
    assert states["post-merge"]["legacy_chained"] is False
    assert states["post-merge"]["interpreter_found"] is True
    shim = hooks_dir / "post-rewrite"
    shim.write_bytes(shim.read_bytes().replace(b"# m1nd-hook-shim 3", b"# m1nd-hook-shim 0"))
    text = cli("hooks", "status", str(repo)).stdout
    assert "post-rewrite: m1nd shim v0, outdated" in text
    assert "post-checkout: m1nd shim v3, current; chains post-checkout.m1nd-chained" in text
    assert "pre-commit: not installed" in text
    assert cli("hooks", "install", "--json", str(repo)).json["actions"][2]["action"] == "updated"


def test_uninstall_removes_only_shims_and_restores_each_legacy_byte_for_byte(repo, cli):
    hooks_dir = repo / ".git" / "hooks"
    checkout = write_hook(hooks_dir / "post-checkout", "echo checkout\n", mode=0o750)
    commit = write_hook(hooks_dir / "pre-commit", "exit 0\n")
    assert cli("hooks", "install", "--stage", str(repo)).code == 0
    # someone replaces our post-rewrite shim with their own: uninstall leaves it
    theirs = write_hook(hooks_dir / "post-rewrite", "echo theirs\n")
    result = cli("hooks", "uninstall", str(repo))
    assert result.code == 0, result.stderr
    assert "post-rewrite: not m1nd's, left alone" in result.stdout
    tree = hooks_tree(hooks_dir)
    assert set(tree) == {"post-checkout", "pre-commit", "post-rewrite"}
    assert tree["post-checkout"][:2] == (checkout, 0o750)
    assert tree["pre-commit"][:2] == (commit, 0o755)
    assert tree["post-rewrite"][0] == theirs
    again = cli("hooks", "uninstall", str(repo))
    assert again.code == 0 and hooks_tree(hooks_dir) == tree


def test_force_replaces_a_foreign_hook_without_keeping_it(repo, cli):
    hooks_dir = repo / ".git" / "hooks"
    write_hook(hooks_dir / "post-merge", "echo old\n")
    assert cli("hooks", "install", "--force", str(repo)).code == 0
    assert not (hooks_dir / "post-merge.m1nd-chained").exists()
    assert hookmod.shim_version((hooks_dir / "post-merge").read_bytes()) == hookmod.SHIM_VERSION


def test_a_foreign_hook_with_a_legacy_already_there_is_refused(repo, cli):
    hooks_dir = repo / ".git" / "hooks"
    write_hook(hooks_dir / "post-merge", "echo one\n")
    write_hook(hooks_dir / "post-merge.m1nd-chained", "echo two\n")
    before = hooks_tree(hooks_dir)
    result = cli("hooks", "install", str(repo))
    assert result.code == 1
    assert "post-merge.m1nd-chained already exists" in result.stderr
    assert hooks_tree(hooks_dir) == before, "refused before touching anything"


def test_core_hooks_path_is_refused_unless_forced(repo, cli):
    git(repo, "config", "core.hooksPath", ".husky")
    result = cli("hooks", "install", str(repo))
    assert result.code == 1
    assert "core.hooksPath is set (.husky)" in result.stderr
    assert "m1nd hook run post-checkout" in result.stderr
    assert "husky owns this repository's hooks" in result.stderr
    assert "in .husky/post-checkout, post-merge and post-rewrite" in result.stderr
    assert f"{sys.executable} -P -m m1nd hook run post-checkout \"$@\"" in result.stderr
    assert not (repo / ".husky").exists()
    assert not [p for p in (repo / ".git" / "hooks").iterdir() if not p.name.endswith(".sample")]
    forced = cli("hooks", "install", "--force", str(repo))
    assert forced.code == 0
    assert hookmod.shim_version((repo / ".husky" / "post-checkout").read_bytes()) == hookmod.SHIM_VERSION


def test_a_shim_without_its_interpreter_or_m1nd_on_path_warns_once(repo, tmp_path):
    hooks_dir = repo / ".git" / "hooks"
    (hooks_dir / "post-checkout").write_bytes(hookmod.render("post-checkout", python=str(tmp_path / "gone" / "python")))
    (hooks_dir / "post-checkout").chmod(0o755)
    env = {**os.environ, "PATH": os.path.dirname(shutil.which("git")) + ":/bin"}
    assert shutil.which("m1nd", path=env["PATH"]) is None
    done = git(repo, "checkout", "-q", "-b", "other", env=env)
    assert done.returncode == 0
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("m1nd: warning: m1nd not found")


# ----------------------------------------------------------------------------- hook run


def test_a_merge_a_checkout_and_a_rewrite_file_into_a_box_git_ignores(repo, cli, spool_path):
    cli("hooks", "install", str(repo))
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    git(repo, "add", "side.txt")
    git(repo, "commit", "-qm", "side")
    git(repo, "checkout", "-q", "main")
    write_spool(spool_path, [letter("one")])
    merged = git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")
    assert len(box_lines(repo)) == 1
    assert "m1nd: repo-a has 1 open letter (1 new)" in merged.stderr
    write_spool(spool_path, [letter("two")])
    git(repo, "checkout", "-q", "side")
    assert len(box_lines(repo)) == 2
    write_spool(spool_path, [letter("three")])
    amended = git(repo, "commit", "-q", "--amend", "-m", "side, amended")
    assert len(box_lines(repo)) == 3
    assert "m1nd: repo-a has 3 open letters (1 new) — m1nd sweep to read" in amended.stderr
    assert git(repo, "status", "--porcelain", "--ignored=no").stdout == "", "git never sees a local box"


def test_post_hooks_leave_a_consented_box_alone_and_say_what_waits(consented, cli, spool_path):
    repo = consented
    cli("hooks", "install", str(repo))
    write_spool(spool_path, [letter("one")])
    done = git(repo, "checkout", "-q", "-b", "side")
    assert done.stderr == "m1nd: repo-a has 1 open letter (1 waiting to be filed) — m1nd sweep to read\n"
    assert box_lines(repo) == [] and git(repo, "status", "--porcelain").stdout == ""
    write_spool(spool_path, [letter("two")])
    amended = git(repo, "commit", "-q", "--amend", "-m", "consent, amended")
    assert "repo-a has 2 open letters (2 waiting to be filed)" in amended.stderr
    assert box_lines(repo) == [] and git(repo, "status", "--porcelain").stdout == ""
    filed = cli("distribute", cwd=repo)  # a command the user runs is a safe filing
    assert filed.code == 0 and len(box_lines(repo)) == 2


def test_no_line_when_the_box_has_no_open_letters(repo, cli, spool_path):
    cli("hooks", "install", str(repo))
    write_spool(spool_path, [letter("elsewhere", repo="repo-z")])  # pending: never filed here
    done = git(repo, "checkout", "-q", "-b", "x")
    assert done.stderr == ""


def test_a_garbage_spool_never_makes_a_hook_fail(repo, cli, spool_path, m1nd_home):
    cli("hooks", "install", "--stage", str(repo))
    spool_path.parent.mkdir(parents=True, exist_ok=True)
    spool_path.write_bytes(b"\xff\xfe garbage\n{not json\n\x00\x00\x00\n[1, 2]\n{\"repo\": null}\n{\"what\": \"x\"")
    done = git(repo, "checkout", "-q", "-b", "g1")
    assert done.returncode == 0 and done.stderr == ""

    spool_path.unlink()
    spool_path.mkdir()  # a spool that cannot be read at all
    done = git(repo, "checkout", "-q", "-b", "g2")
    assert done.returncode == 0
    assert done.stderr.startswith("m1nd: warning: the post-checkout hook filed nothing: cannot read spool")
    assert done.stderr.count("\n") == 1
    (repo / "code.txt").write_text("v2\n")
    assert git(repo, "commit", "-qam", "still commits").returncode == 0

    spool_path.rmdir()
    (m1nd_home / "roster.json").write_text("{corrupt")
    done = git(repo, "checkout", "-q", "main")
    assert done.returncode == 0 and "roster" in done.stderr and done.stderr.count("\n") == 1


def test_hook_run_always_exits_0(cli):
    result = cli("hook", "run", "post-nothing")
    assert result.code == 0
    assert "no hook named 'post-nothing'" in result.stderr


def test_stage_puts_new_letters_into_the_commit_but_not_during_a_partial_commit(consented, cli, spool_path):
    repo = consented
    assert cli("hooks", "install", "--stage", str(repo)).code == 0
    write_spool(spool_path, [letter("found while coding")])
    (repo / "code.txt").write_text("v2\n")
    git(repo, "add", "code.txt")
    done = git(repo, "commit", "-qm", "code and its letter")
    assert "m1nd: staged .m1nd/inbox.jsonl (1 new letter) into this commit" in done.stderr
    files = git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert files == [".m1nd/inbox.jsonl", "code.txt"]
    assert git(repo, "status", "--porcelain").stdout == ""

    # `git commit -a` commits from index.lock: the box goes in too
    write_spool(spool_path, [letter("second")])
    (repo / "code.txt").write_text("v3\n")
    git(repo, "commit", "-qam", "all")
    assert ".m1nd/inbox.jsonl" in git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert git(repo, "status", "--porcelain").stdout == ""

    # `git commit <path>`: exactly the named paths; the letter waits, nothing is touched
    write_spool(spool_path, [letter("third")])
    (repo / "code.txt").write_text("v4\n")
    git(repo, "commit", "-qm", "only code", "code.txt")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["code.txt"]
    assert git(repo, "status", "--porcelain").stdout == "", "not filed during a partial commit"
    assert len(box_lines(repo)) == 2

    # from another directory, with GIT_DIR / GIT_WORK_TREE pointing at the repository
    (repo / "code.txt").write_text("v5\n")
    outside = repo.parent / "elsewhere"
    outside.mkdir()
    env = {**os.environ, "GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)}
    git(repo, "commit", "-qam", "from outside", env=env, cwd=outside)
    assert ".m1nd/inbox.jsonl" in git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert len(box_lines(repo)) == 3, "the letter that waited went into the next whole commit"


def test_stage_never_stages_a_private_box(repo, cli, spool_path):
    assert cli("init", "--private", str(repo)).code == 0
    cli("hooks", "install", "--stage", str(repo))
    write_spool(spool_path, [letter("private")])
    (repo / "code.txt").write_text("v2\n")
    git(repo, "commit", "-qam", "code")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["code.txt"]
    assert len(box_lines(repo)) == 1, "filed locally all the same"


def test_a_failing_legacy_pre_commit_stops_the_commit_and_nothing_is_staged(consented, cli, spool_path):
    repo = consented
    write_hook(repo / ".git" / "hooks" / "pre-commit", "echo no >&2\nexit 1\n")
    cli("hooks", "install", "--stage", str(repo))
    write_spool(spool_path, [letter("x")])
    (repo / "code.txt").write_text("v2\n")
    done = git(repo, "commit", "-qam", "blocked", check=False)
    assert done.returncode == 1
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""


def test_the_hook_gives_up_after_its_budget_and_the_child_finishes(repo, cli, spool_path):
    cli("hooks", "install", str(repo))
    write_spool(spool_path, [letter(f"letter {i}") for i in range(50)])
    env = {**os.environ, "M1ND_HOOK_TIMEOUT": "0.000001"}
    started = time.monotonic()
    done = git(repo, "checkout", "-q", "-b", "slow", env=env)
    assert done.returncode == 0
    assert done.stderr.startswith("m1nd: warning: the post-checkout hook gave up waiting after 1e-06 s")
    assert done.stderr.count("\n") == 1
    assert time.monotonic() - started < 5
    deadline = time.monotonic() + 20
    while len(box_lines(repo)) < 50 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(box_lines(repo)) == 50, "the child finished filing on its own"


# ----------------------------------------------------------------------------- worktrees and bare layouts


def test_a_worktree_shares_the_hooks_and_the_committed_box(consented, cli, spool_path, tmp_path):
    repo = consented
    write_spool(spool_path, [letter("before the worktree")])
    assert cli("distribute", cwd=repo).code == 0
    git(repo, "add", ".m1nd/inbox.jsonl")
    git(repo, "commit", "-qm", "box")
    cli("hooks", "install", str(repo))
    wt = tmp_path / "wt" / "repo-a-feature"
    done = git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    assert done.returncode == 0
    assert box_lines(wt) == box_lines(repo), "the box travels to the worktree like any file"
    doc = cli("hooks", "status", "--json", str(wt)).json
    assert doc["hooks_dir"] == str(repo / ".git" / "hooks")
    assert {h["state"] for h in doc["hooks"][:3]} == {"current"}
    assert "m1nd: repo-a-feature has 1 open letter" in done.stderr


def test_a_bare_layout_installs_into_the_bare_repository(repo, cli, tmp_path):
    bare = tmp_path / "layout" / "repo-a.git"
    git(repo, "clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
    wt = tmp_path / "layout" / "main"
    git(bare, "worktree", "add", "-q", str(wt), "main")
    result = cli("hooks", "install", "--json", str(wt))
    assert result.code == 0, result.stderr
    assert result.json["hooks_dir"] == str(bare / "hooks")
    assert hookmod.shim_version((bare / "hooks" / "post-merge").read_bytes()) == hookmod.SHIM_VERSION
    assert git(wt, "checkout", "-q", "-b", "x").returncode == 0


def test_pre_commit_framework_manifest():
    text = (REPO_TOP / ".pre-commit-hooks.yaml").read_text()
    assert "id: m1nd" in text
    assert "entry: m1nd hook run post-checkout" in text
    assert "stages: [post-checkout, post-merge, post-rewrite]" in text
    assert "always_run: true" in text
    assert "pass_filenames: false" in text


def test_the_hook_path_imports_neither_typer_rich_nor_gitpython(consented, spool_path):
    write_spool(spool_path, [letter("one")])
    probe = (
        "import os, sys\n"
        "from m1nd.cli import main\n"
        "from m1nd.gitops import hookrun\n"
        "print(hookrun._work('post-checkout', None, os.getppid(), float('inf')), end='')\n"
        "print(hookrun._work('pre-commit', None, os.getppid(), float('inf')), end='')\n"
        "print(sorted(m for m in ('typer', 'click', 'rich', 'git') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=consented, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert "repo-a has 1 open letter (1 waiting to be filed)" in done.stdout
    assert len(box_lines(consented)) == 1, "the pre-commit hook is a safe filing"


def test_a_huge_budget_is_a_long_one_and_the_hook_still_files_and_exits_0(repo, cli, spool_path):
    cli("hooks", "install", str(repo))
    write_spool(spool_path, [letter("filed under a long budget")])
    env = {**os.environ, "M1ND_HOOK_TIMEOUT": "1e308"}
    done = subprocess.run([sys.executable, "-m", "m1nd", "hook", "run", "post-checkout", "0", "0", "1"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Error" not in done.stderr, done.stderr
    assert len(box_lines(repo)) == 1


def test_the_budget_comes_from_the_environment(monkeypatch):
    from m1nd.gitops.hookrun import DEFAULT_BUDGET, budget

    for raw, expected in (("2.5", 2.5), ("0", DEFAULT_BUDGET), ("-1", DEFAULT_BUDGET), ("soon", DEFAULT_BUDGET),
                          ("nan", DEFAULT_BUDGET), ("inf", DEFAULT_BUDGET), ("1e10", 3600.0), ("1e308", 3600.0)):
        monkeypatch.setenv("M1ND_HOOK_TIMEOUT", raw)
        assert budget() == expected
    monkeypatch.delenv("M1ND_HOOK_TIMEOUT")
    assert budget() == DEFAULT_BUDGET == 10.0


def test_switching_between_branches_whose_boxes_differ_is_never_refused(consented, cli, spool_path):
    """A post-checkout hook must not re-file into the box git just checked out the letters
    that this branch's history lacks: that would dirty the box and make git refuse the
    next switch ("local changes would be overwritten")."""
    repo = consented
    cli("hooks", "install", str(repo))
    write_spool(spool_path, [letter("on main")])
    cli("distribute", cwd=repo)
    git(repo, "add", ".m1nd/inbox.jsonl")
    git(repo, "commit", "-qm", "main letter")
    git(repo, "checkout", "-q", "-b", "feature")
    write_spool(spool_path, [letter("on feature")])
    cli("distribute", cwd=repo)
    git(repo, "commit", "-qam", "feature letter")
    for branch in ("main", "feature", "main", "feature"):
        done = git(repo, "checkout", "-q", branch, check=False)
        assert done.returncode == 0, done.stderr
        assert git(repo, "status", "--porcelain").stdout == "", f"the box on {branch} was left dirty"
    assert len(box_lines(repo)) == 2


def test_the_open_count_follows_the_box_and_counts_open_work(repo, spool_path, m1nd_home):
    from conftest import run_script

    write_spool(spool_path, [letter("one")])
    first = run_script("hook", "run", "post-checkout", cwd=repo)
    assert first.returncode == 0
    assert first.stderr.decode() == "m1nd: repo-a has 1 open letter (1 new) — m1nd sweep to read\n"
    assert (m1nd_home / "state" / "readmodel.sqlite3").is_file()  # the count comes from the read model
    box = repo / ".m1nd" / "inbox.jsonl"
    with open(box, "ab") as fh:  # a letter that arrived by git: the box changed
        fh.write(b'{"what": "from another machine", "repo": "repo-a"}\n')
    assert run_script("hook", "run", "post-checkout", cwd=repo).stderr.decode().startswith("m1nd: repo-a has 2 open")
    with open(box, "ab") as fh:  # one more letter, and a pickup of it: a reply is work done, not open work
        fh.write(b'{"what": "third", "repo": "repo-a"}\n')
        third = id_of(b'{"what": "third", "repo": "repo-a"}')
        fh.write(b'{"class": "pickup", "answers": ["' + third + b'"], "what": "on it"}\n')
    assert run_script("hook", "run", "post-checkout", cwd=repo).stderr.decode().startswith("m1nd: repo-a has 3 open")
    with open(box, "ab") as fh:  # a receipt closes all three (a receipt is itself a reply)
        ids = [id_of(l) for l in box.read_bytes().splitlines()]
        answered = b'", "'.join([ids[0], ids[1], third])
        fh.write(b'{"class": "triage", "answers": ["' + answered + b'"], "what": "fixed"}\n')
    assert run_script("hook", "run", "post-checkout", cwd=repo).stderr.decode() == ""  # no open work: no line
    with open(box, "ab") as fh:
        fh.write(b'{"what": "fourth", "repo": "repo-a"}\n')
    assert run_script("hook", "run", "post-checkout", cwd=repo).stderr.decode().startswith("m1nd: repo-a has 1 open")
    shutil.rmtree(m1nd_home / "state")  # deleting private state loses nothing
    assert run_script("hook", "run", "post-checkout", cwd=repo).stderr.decode().startswith("m1nd: repo-a has 1 open")


def id_of(raw: bytes) -> bytes:
    from m1nd.letters import letter_id

    return letter_id(raw).encode()


def test_a_checkout_from_before_consent_is_left_alone(repo, cli, spool_path):
    """Filing into a checkout that predates consent would create an untracked
    .m1nd/.gitignore, and git would then refuse to switch back (think git bisect)."""
    git(repo, "branch", "before-consent")
    cli("init", str(repo))
    cli("hooks", "install", str(repo))
    write_spool(spool_path, [letter("one")])
    cli("distribute", cwd=repo)
    git(repo, "add", ".m1nd", ".gitattributes")
    git(repo, "commit", "-qm", "consent")
    write_spool(spool_path, [letter("two")])
    done = git(repo, "checkout", "-q", "before-consent")
    assert done.stderr == "m1nd: repo-a has 1 open letter (1 waiting to be filed) — m1nd sweep to read\n"
    assert not (repo / ".m1nd").exists()
    back = git(repo, "checkout", "-q", "main", check=False)
    assert back.returncode == 0, back.stderr
    assert len(box_lines(repo)) == 1 and git(repo, "status", "--porcelain").stdout == ""
    assert "repo-a has 2 open letters (1 waiting to be filed)" in back.stderr
    assert cli("distribute", cwd=repo).code == 0 and len(box_lines(repo)) == 2


def test_the_stage_line_counts_every_letter_it_stages_not_only_this_runs(consented, cli, spool_path):
    """Letters filed earlier (by `m1nd distribute`, another hook) and not yet committed
    are staged too: the line counts what `git add` put into the commit."""
    repo = consented
    assert cli("hooks", "install", "--stage", str(repo)).code == 0
    write_spool(spool_path, [letter("filed earlier"), letter("also earlier")])
    assert cli("distribute", cwd=repo).code == 0
    write_spool(spool_path, [letter("filed by the hook")])
    (repo / "code.txt").write_text("v3\n")
    git(repo, "add", "code.txt")
    done = git(repo, "commit", "-qm", "three letters ride along")
    assert "m1nd: staged .m1nd/inbox.jsonl (3 new letters) into this commit" in done.stderr
    assert git(repo, "status", "--porcelain").stdout == ""


def test_the_hooks_line_is_one_line_whatever_the_repositorys_name(tmp_path, cli, spool_path):
    repo = tmp_path / "src" / "nl\nrepo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    assert cli("roster", "add", str(repo)).code == 0
    cli("hooks", "install", str(repo))
    write_spool(spool_path, [letter("for a repository with a newline in its name", repo="nl\nrepo")])
    done = subprocess.run([sys.executable, "-m", "m1nd", "hook", "run", "post-checkout", "0", "0", "1"], cwd=repo,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert done.stderr == "m1nd: nl⏎repo has 1 open letter (1 new) — m1nd sweep to read\n", done.stderr
