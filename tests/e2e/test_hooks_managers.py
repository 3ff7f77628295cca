"""Hook managers own their hooks (spec/git.md section 3), tried with the real tools:
the pre-commit framework, husky 9 and lefthook 2, each set up the way its users do,
then given exactly what `m1nd hooks install` says to add.  Overcommit (a Ruby gem,
not installable from the registries here) is recognised by its marker lines."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitworld import (assert_each_letter_once, box_ids, clean, commit_file, consent, git, m1nd, write_letters)
from tools import npm_dir, pre_commit_bin

PROJECT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def npm_tools(tmp_path_factory) -> Path:
    return npm_dir(tmp_path_factory.getbasetemp() / "npm-tools")


@pytest.fixture
def repo(make_repo) -> Path:
    r = make_repo("repo-a")
    commit_file(r, "code.txt", "v1\n", "start")
    return r


def printed_block(text: str, after: str) -> list[str]:
    """The 4-space-indented lines `hooks install` printed after the line containing `after`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) + 1
    block = []
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        block.append(line[4:])
    assert block, text
    return block


def refused(repo: Path, manager: str) -> str:
    done = m1nd("hooks", "install", "--stage", str(repo), cwd=repo)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{manager} owns this repository's hooks" in done.stderr
    assert f"{sys.executable} -P -m m1nd hook run post-checkout" in done.stderr, "the absolute form is shown"
    return done.stderr


def hooks_status(repo: Path) -> dict:
    done = m1nd("hooks", "status", "--json", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def doctor_git(repo: Path) -> dict:
    doc = json.loads(m1nd("doctor", "--json", cwd=repo).stdout)
    return next(c for c in doc["checks"] if c["name"] == "git")


def hooks_dir_files(repo: Path) -> dict:
    d = repo / ".git" / "hooks"
    return {p.name: p.read_bytes() for p in d.iterdir() if not p.name.endswith(".sample")}


def exercise(repo: Path, spool_path: Path) -> None:
    """What users do all day, each step as git's exit status and a clean tree; then a
    commit is the safe filing that puts every letter into the box."""
    waiting = write_letters(spool_path, "found before a checkout")
    git(repo, "checkout", "-q", "-b", "feature")
    commit_file(repo, "feature.txt", "f\n", "feature")  # files and stages the letter on feature
    assert_each_letter_once(repo, waiting, "the pre-commit entry files and stages")
    later = write_letters(spool_path, "found on main")
    for args in (["checkout", "-q", "main"], ["merge", "-q", "--no-ff", "--no-edit", "feature"],
                 ["rebase", "-q", "HEAD~1"], ["checkout", "-q", "-b", "other"]):
        done = git(repo, *args, check=False)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        assert clean(repo), (args, git(repo, "status", "--porcelain").stdout)
        assert not set(later) & set(box_ids(repo)), "post-* hooks never touch the consented box"
    waiting = waiting + later
    (repo / "code.txt").write_text("v2\n")
    git(repo, "add", "code.txt")
    done = git(repo, "commit", "-qm", "code", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert clean(repo)
    assert ".m1nd/inbox.jsonl" in git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert_each_letter_once(repo, waiting, "the pre-commit entry files and stages")


# ----------------------------------------------------------------------------- the pre-commit framework


def _pre_commit_repo(repo: Path, pre_commit: str) -> None:
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        "- repo: local\n"
        "  hooks:\n"
        "  - id: no-conflict-markers\n"
        "    name: no conflict markers\n"
        "    entry: sh -c '! grep -l \"^<<<<<<< \" \"$@\"' --\n"
        "    language: system\n"
        "    types: [text]\n"
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "pre-commit config")
    done = subprocess.run([pre_commit, "install"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_pre_commit_framework_is_recognised_and_its_hooks_are_left_alone(repo, cli):
    pre_commit = pre_commit_bin()
    _pre_commit_repo(repo, pre_commit)
    before = hooks_dir_files(repo)
    text = refused(repo, "the pre-commit framework")
    assert "under `repos:` in .pre-commit-config.yaml" in text
    assert hooks_dir_files(repo) == before, "nothing moved: no .legacy, no .m1nd-chained"
    commit_file(repo, "code.txt", "v2\n", "still commits")
    status = hooks_status(repo)
    assert status["manager"]["name"] == "the pre-commit framework" and status["manager"]["calls_m1nd"] is False
    assert doctor_git(repo)["status"] == "warn"


def test_the_pre_commit_framework_runs_what_install_printed(repo, spool_path, tmp_path):
    pre_commit = pre_commit_bin()
    _pre_commit_repo(repo, pre_commit)
    consent(repo)
    text = refused(repo, "the pre-commit framework")
    config = repo / ".pre-commit-config.yaml"
    config.write_text(config.read_text() + "\n".join(printed_block(text, "under `repos:`")) + "\n")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "m1nd under the pre-commit framework")
    install_line = next(l for l in text.splitlines() if l.strip().startswith("then: pre-commit install"))
    args = install_line.split("then: pre-commit ", 1)[1].split()
    done = subprocess.run([pre_commit, *args], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert hooks_status(repo)["manager"]["calls_m1nd"] is True
    assert "calls `m1nd hook run`" in doctor_git(repo)["message"]
    write_letters(spool_path, "shown by the framework")
    shown = git(repo, "checkout", "-q", "-b", "shown")
    assert "m1nd: repo-a has 1 open letter (1 waiting to be filed)" in shown.stdout + shown.stderr
    assert "files were modified by this hook" not in shown.stdout + shown.stderr
    git(repo, "checkout", "-q", "main")
    exercise(repo, spool_path)


@pytest.mark.slow
def test_the_projects_pre_commit_hooks_yaml_passes_under_the_framework(repo, spool_path, tmp_path):
    """`.pre-commit-hooks.yaml` as a user consumes it: `repo:` this project at a rev."""
    pre_commit = pre_commit_bin()
    mirror = tmp_path / "m1nd-mirror"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=PROJECT, capture_output=True,
                           check=True).stdout.split(b"\0")
    for rel in filter(None, files):
        src = PROJECT / os.fsdecode(rel)
        if src.is_file():
            dst = mirror / os.fsdecode(rel)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    git(tmp_path, "init", "-q", "-b", "main", str(mirror))
    git(mirror, "add", "-A")
    git(mirror, "commit", "-qm", "m1nd")
    rev = git(mirror, "rev-parse", "HEAD").stdout.strip()
    consent(repo)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"- repo: {mirror}\n"
        f"  rev: {rev}\n"
        "  hooks:\n"
        "  - id: m1nd\n"
        "  - id: m1nd-stage\n"
    )
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "use the m1nd hooks")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    done = subprocess.run([pre_commit, "install", "-t", "pre-commit", "-t", "post-checkout", "-t", "post-merge",
                           "-t", "post-rewrite"], cwd=repo, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run([pre_commit, "install-hooks"], cwd=repo, capture_output=True, text=True, env=env,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    waiting = write_letters(spool_path, "through the framework's own environment")
    shown = git(repo, "checkout", "-q", "-b", "x", env=env, check=False)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "1 waiting to be filed" in shown.stdout + shown.stderr, "the hook's line is shown (verbose)"
    assert clean(repo)
    (repo / "code.txt").write_text("v2\n")
    done = git(repo, "commit", "-qam", "code", env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert clean(repo)
    assert_each_letter_once(repo, waiting, "the m1nd-stage hook filed and staged the box")


# ----------------------------------------------------------------------------- husky 9


def test_husky_is_recognised_and_runs_what_install_printed(repo, spool_path, npm_tools):
    (repo / "package.json").write_text('{"name": "repo-a", "private": true}\n')
    done = subprocess.run([str(npm_tools / "node_modules" / ".bin" / "husky")], cwd=repo, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(repo, "config", "core.hooksPath").stdout.strip() == ".husky/_"
    (repo / ".husky" / "pre-commit").write_text("echo linting\n")
    git(repo, "add", "package.json", ".husky/pre-commit")
    git(repo, "commit", "-qm", "husky")
    consent(repo)
    text = refused(repo, "husky")
    assert not (repo / ".husky" / "post-checkout").exists()
    assert hooks_status(repo)["manager"]["calls_m1nd"] is False
    for line in printed_block(text, "in .husky/"):
        hook = line.split("hook run ", 1)[1].split()[0]
        path = repo / ".husky" / hook
        path.write_text((path.read_text() if path.exists() else "") + line + "\n")
    git(repo, "add", ".husky")
    git(repo, "commit", "-qm", "m1nd in husky")
    status = hooks_status(repo)
    assert status["manager"]["name"] == "husky" and status["manager"]["calls_m1nd"] is True
    assert doctor_git(repo)["status"] == "ok"
    exercise(repo, spool_path)


# ----------------------------------------------------------------------------- lefthook 2


def _lefthook(repo: Path, npm_tools: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([str(npm_tools / "node_modules" / ".bin" / "lefthook"), *args], cwd=repo,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_lefthook_is_recognised_and_runs_what_install_printed(repo, spool_path, npm_tools):
    (repo / "lefthook.yml").write_text("pre-push:\n  commands:\n    lint:\n      run: echo linting\n")
    git(repo, "add", "lefthook.yml")
    git(repo, "commit", "-qm", "lefthook")
    _lefthook(repo, npm_tools, "install")
    assert git(repo, "config", "core.hooksPath", check=False).stdout == "", "lefthook sets no core.hooksPath"
    consent(repo)
    before = hooks_dir_files(repo)
    text = refused(repo, "lefthook")
    assert hooks_dir_files(repo) == before, "nothing chained: the next lefthook sync would evict it"
    doctor = doctor_git(repo)
    assert doctor["status"] == "warn" and "lefthook owns the hooks" in doctor["message"]
    config = repo / "lefthook.yml"
    config.write_text(config.read_text() + "\n".join(printed_block(text, "in lefthook.yml")) + "\n")
    git(repo, "add", "lefthook.yml")
    git(repo, "commit", "-qm", "m1nd in lefthook")
    _lefthook(repo, npm_tools, "install")
    assert hooks_status(repo)["manager"]["calls_m1nd"] is True
    exercise(repo, spool_path)


def test_shims_that_chained_a_lefthook_script_are_named_by_doctor(repo, npm_tools):
    (repo / "lefthook.yml").write_text("post-checkout:\n  commands:\n    hi:\n      run: echo hi\n")
    _lefthook(repo, npm_tools, "install")
    hooks = repo / ".git" / "hooks"
    os.rename(hooks / "post-checkout", hooks / "post-checkout.legacy")  # what an earlier m1nd did
    from m1nd.gitops.hooks import render

    (hooks / "post-checkout").write_bytes(render("post-checkout").replace(b"# m1nd-hook-shim 3", b"# m1nd-hook-shim 2"))
    (hooks / "post-checkout").chmod(0o755)
    doctor = doctor_git(repo)
    assert doctor["status"] == "warn"
    assert "lefthook owns the hooks" in doctor["message"] and "which lefthook may replace" in doctor["message"]


# ----------------------------------------------------------------------------- overcommit and others


OVERCOMMIT_LIKE = """#!/usr/bin/env ruby
# Entrypoint for Overcommit hook integration. Installing Overcommit will result
# in all of your git hooks being copied from this file.
ENV['OVERCOMMIT_DISABLE'] ||= '0'
"""


def test_overcommit_is_recognised_by_its_marker_lines(repo):
    hooks = repo / ".git" / "hooks"
    for name in ("post-checkout", "pre-commit"):
        (hooks / name).write_text(OVERCOMMIT_LIKE)
        (hooks / name).chmod(0o755)
    text = refused(repo, "overcommit")
    assert "in .overcommit.yml:" in text and "PostCheckout:" in text and "overcommit --sign" in text
    (repo / ".overcommit.yml").write_text("\n".join(printed_block(text, "in .overcommit.yml")) + "\n")
    assert hooks_status(repo)["manager"] == {"name": "overcommit", "evidence": "its pre-commit hook",
                                             "configs": [".overcommit.yml"], "calls_m1nd": True}


def test_force_installs_over_a_manager_and_says_nothing_is_kept(repo):
    hooks = repo / ".git" / "hooks"
    (hooks / "post-merge").write_text(OVERCOMMIT_LIKE)
    done = m1nd("hooks", "install", "--force", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "post-merge: installed over a hook that was not m1nd's (--force: not kept)" in done.stdout


def test_a_legacy_chain_of_an_earlier_m1nd_keeps_working_and_is_migrated(repo, tmp_path):
    from m1nd.gitops.hooks import render

    hooks = repo / ".git" / "hooks"
    log = tmp_path / "chained.log"
    (hooks / "post-checkout.legacy").write_text(f'#!/bin/sh\necho "ran $*" >> "{log}"\n')
    (hooks / "post-checkout.legacy").chmod(0o755)
    old = render("post-checkout").replace(b"# m1nd-hook-shim 3", b"# m1nd-hook-shim 2") \
        .replace(b'$HOOK.m1nd-chained"', b'$HOOK.legacy"')
    (hooks / "post-checkout").write_bytes(old)
    (hooks / "post-checkout").chmod(0o755)
    git(repo, "checkout", "-q", "-b", "one")
    assert log.read_text().count("ran ") == 1, "the old shim still runs its .legacy chain"
    status = {h["hook"]: h for h in hooks_status(repo)["hooks"]}
    assert status["post-checkout"]["state"] == "outdated" and status["post-checkout"]["legacy"] is True
    done = m1nd("hooks", "install", str(repo), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "moved from post-checkout.legacy to post-checkout.m1nd-chained" in done.stdout
    assert not (hooks / "post-checkout.legacy").exists() and (hooks / "post-checkout.m1nd-chained").exists()
    git(repo, "checkout", "-q", "main")
    assert log.read_text().count("ran ") == 2, "the migrated chain runs once"
    undone = m1nd("hooks", "uninstall", str(repo), cwd=repo)
    assert undone.returncode == 0 and (hooks / "post-checkout").read_text().startswith("#!/bin/sh\necho")


def test_hook_run_takes_gits_arguments_the_way_managers_pass_them(repo, spool_path):
    for args in (["post-merge", "0"], ["post-checkout", "a" * 40, "b" * 40, "1"], ["post-rewrite", "amend"],
                 ["pre-commit", "file.txt", "--flag"], ["post-nothing", "x"], []):
        done = m1nd("hook", "run", *args, cwd=repo)
        assert done.returncode == 0, (args, done.stderr)
        assert "unexpected extra argument" not in done.stderr
    done = m1nd("hook", "run", "post-nothing", "x", cwd=repo)
    assert done.stderr.count("\n") == 1 and "no hook named 'post-nothing'" in done.stderr


@pytest.mark.parametrize("manager", ["the pre-commit framework", "lefthook", "overcommit", "husky"])
def test_the_readme_shows_what_install_prints_for_each_manager(manager):
    from m1nd.gitops.managers import instructions

    readme = (PROJECT / "README.md").read_text()
    printed = instructions(manager, "/path/to/venv/bin/python")
    block = [l for l in printed.splitlines() if l.startswith("    ")]
    if manager == "husky":
        for line in block:
            assert line[4:] in readme, line
    else:
        assert "\n".join(block) in readme, f"README's {manager} snippet differs from what install prints"
