"""`m1nd init [PATH] [--private]`: consent, idempotent, each step reported."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import orjson
import pytest

from m1nd.gitops.consent import ATTRIBUTE_LINE, COMMITTED_GITIGNORE, driver_command

DRIVER = f"{shlex.quote(sys.executable)} -P -m m1nd merge-driver %O %A %B"


def git(repo, *args, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, check=check, capture_output=True, text=True)


def config(repo, key):
    done = git(repo, "config", "--local", "--get", key, check=False)
    return done.stdout.rstrip("\n") if done.returncode == 0 else None


def ignored(repo) -> bool:
    return git(repo, "check-ignore", "-q", "--no-index", ".m1nd/inbox.jsonl", check=False).returncode == 0


def snapshot_files(repo) -> dict:
    out = {}
    for rel in (".m1nd/.gitignore", ".gitattributes", ".git/config"):
        p = repo / rel
        out[rel] = p.read_bytes() if p.exists() else None
    return out


@pytest.fixture
def repo(make_repo):
    return make_repo("repo-a")


def test_init_consents_a_repository(cli, repo, m1nd_home):
    (repo / ".m1nd").mkdir()
    (repo / ".m1nd" / ".gitignore").write_bytes(b"inbox.jsonl\n")  # as filing leaves it
    assert ignored(repo)

    result = cli("init", cwd=repo)

    assert result.code == 0, result.stderr
    assert (repo / ".m1nd" / ".gitignore").read_bytes() == COMMITTED_GITIGNORE
    assert not ignored(repo)
    assert (repo / ".gitattributes").read_text() == ATTRIBUTE_LINE + "\n"
    assert ATTRIBUTE_LINE == ".m1nd/inbox.jsonl merge=m1nd-inbox"
    assert config(repo, "merge.m1nd-inbox.driver") == DRIVER == driver_command()
    assert config(repo, "merge.m1nd-inbox.name")
    roster = orjson.loads((m1nd_home / "roster.json").read_bytes())
    assert roster["roots"] == [str(repo)]
    assert "next: git add .m1nd .gitattributes && git commit -m" in result.stdout
    assert "publishes its letters" in result.stderr
    for word in ("roster", ".m1nd/", "committable", ".gitattributes", "merge driver"):
        assert word in result.stdout
    assert "\x1b[" not in result.stdout + result.stderr


def test_the_recorded_driver_runs_from_a_plain_shell(cli, repo, tmp_path):
    assert cli("init", str(repo)).code == 0
    for name, data in (("o", b'{"what": "x"}\n'), ("a", b'{"what": "a"}\n'), ("b", b'{"what": "b"}\n')):
        (tmp_path / name).write_bytes(data)
    command = config(repo, "merge.m1nd-inbox.driver").replace("%O", "o").replace("%A", "a").replace("%B", "b")
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"]}  # no venv on PATH
    done = subprocess.run(["sh", "-c", command], cwd=tmp_path, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a").read_bytes() == b'{"what": "a"}\n{"what": "b"}\n{"what": "x"}\n'


def test_init_is_idempotent(cli, repo):
    first = cli("init", str(repo))
    assert first.code == 0
    before = snapshot_files(repo)
    mtimes = {rel: (repo / rel).stat().st_mtime_ns for rel in before}
    second = cli("init", "--json", str(repo))
    assert second.code == 0
    assert snapshot_files(repo) == before
    assert {rel: (repo / rel).stat().st_mtime_ns for rel in before} == mtimes
    doc = second.json
    assert [s["step"] for s in doc["steps"]] == ["roster", "box-dir", "gitignore", "box", "gitattributes", "merge-driver"]
    assert {s["status"] for s in doc["steps"]} == {"found"}
    assert doc["root"] == str(repo) and doc["private"] is False
    assert "publishes" in doc["warning"]


def test_next_command_disappears_once_committed(cli, repo):
    cli("init", str(repo))
    git(repo, "add", ".m1nd", ".gitattributes")
    git(repo, "commit", "-qm", "consent")
    result = cli("init", cwd=repo)
    assert "next: nothing to commit" in result.stdout
    assert cli("init", "--json", str(repo)).json["next"] == ""


def test_a_path_inside_the_work_tree_uses_its_top_level(cli, repo):
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    result = cli("init", "--json", str(sub))
    assert result.code == 0
    assert result.json["root"] == str(repo)
    assert (repo / ".gitattributes").exists() and not (sub / ".gitattributes").exists()
    # from a subdirectory the next command names the repository
    assert f"git -C {repo}" in cli("init", cwd=sub).stdout


def test_init_in_a_directory_whose_name_ends_in_a_newline_consents_that_directory(cli, make_repo, m1nd_home, spool_path):
    odd = make_repo("repo-a\n")
    result = cli("init", cwd=odd)
    assert result.code == 0, result.stderr
    roster = orjson.loads((m1nd_home / "roster.json").read_bytes())
    assert roster["roots"] == [str(odd)]
    assert (odd / ".m1nd" / ".gitignore").read_bytes() == COMMITTED_GITIGNORE
    assert not (odd.parent / "repo-a").exists()  # nothing made beside it under the name without the newline
    spool_path.parent.mkdir(parents=True, exist_ok=True)
    spool_path.write_bytes(b'{"what": "a letter", "repo": "repo-a\\n"}\n')
    assert cli("distribute").code == 0
    assert (odd / ".m1nd" / "inbox.jsonl").read_bytes().count(b"a letter") == 1


def test_init_refuses_outside_a_work_tree(cli, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    result = cli("init", str(plain))
    assert result.code == 1
    assert "not inside a git work tree" in result.stderr
    assert not (plain / ".m1nd").exists()
    assert not (tmp_path / "m1nd-home" / "roster.json").exists()
    missing = cli("init", str(tmp_path / "missing"))
    assert missing.code == 1 and "no such directory" in missing.stderr
    as_json = cli("init", "--json", str(plain))
    assert as_json.code == 1 and as_json.json["error"]["code"] == 1


def test_init_refuses_in_a_bare_repository(cli, tmp_path):
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    result = cli("init", str(bare))
    assert result.code == 1 and "not inside a git work tree" in result.stderr


def test_a_custom_gitignore_is_left_alone_and_reported(cli, repo):
    (repo / ".m1nd").mkdir()
    custom = b"inbox.jsonl\n*.tmp\n"
    (repo / ".m1nd" / ".gitignore").write_bytes(custom)
    result = cli("init", "--json", str(repo))
    assert result.code == 0
    assert (repo / ".m1nd" / ".gitignore").read_bytes() == custom
    step = next(s for s in result.json["steps"] if s["step"] == "gitignore")
    assert step["status"] == "warn"
    assert "left .m1nd/.gitignore alone" in step["message"] and "git still ignores the box" in step["message"]

    (repo / ".m1nd" / ".gitignore").write_bytes(b"*.tmp\n")
    step = next(s for s in cli("init", "--json", str(repo)).json["steps"] if s["step"] == "gitignore")
    assert step["status"] == "found"
    assert "git does not ignore the box" in step["message"]


def test_another_rule_that_still_ignores_the_box_is_reported(cli, repo):
    (repo / ".gitignore").write_text(".m1nd/\n")
    step = [s for s in cli("init", "--json", str(repo)).json["steps"] if s["step"] == "gitignore"]
    assert step[-1]["status"] == "warn"
    assert ".gitignore:1:.m1nd/" in step[-1]["message"]
    assert (repo / ".gitignore").read_text() == ".m1nd/\n", "never edits the user's own rules"


def test_private_keeps_the_box_local(cli, repo):
    result = cli("init", "--private", "--json", str(repo))
    assert result.code == 0
    assert (repo / ".m1nd" / ".gitignore").read_bytes() == b"inbox.jsonl\n.gitignore\n"
    assert ignored(repo)
    assert not (repo / ".gitattributes").exists()
    assert result.json["warning"] == "" and result.json["next"] == ""
    assert "the box stays on this machine" in cli("init", "--private", str(repo)).stdout
    # consent, then back to private
    cli("init", str(repo))
    assert not ignored(repo)
    cli("init", "--private", str(repo))
    assert ignored(repo)
    assert (repo / ".m1nd" / ".gitignore").read_bytes() == b"inbox.jsonl\n.gitignore\n"


def test_private_warns_when_the_box_is_still_tracked(cli, repo):
    cli("init", str(repo))
    (repo / ".m1nd" / "inbox.jsonl").write_bytes(b'{"what": "x"}\n')
    git(repo, "add", ".m1nd")
    git(repo, "commit", "-qm", "box")
    steps = cli("init", "--private", "--json", str(repo)).json["steps"]
    assert any(s["status"] == "warn" and "git rm --cached .m1nd/inbox.jsonl" in s["message"] for s in steps)
    assert git(repo, "ls-files", ".m1nd/inbox.jsonl").stdout.strip() == ".m1nd/inbox.jsonl", "m1nd never untracks"


def test_gitattributes_other_lines_are_kept(cli, repo):
    (repo / ".gitattributes").write_bytes(b"*.png binary\n*.sh text eol=lf")  # no final newline
    cli("init", str(repo))
    assert (repo / ".gitattributes").read_bytes() == b"*.png binary\n*.sh text eol=lf\n" + ATTRIBUTE_LINE.encode() + b"\n"
    (repo / ".gitattributes").write_bytes(b".m1nd/inbox.jsonl   merge=m1nd-inbox\n")
    step = next(s for s in cli("init", "--json", str(repo)).json["steps"] if s["step"] == "gitattributes")
    assert step["status"] == "found"
    assert (repo / ".gitattributes").read_bytes() == b".m1nd/inbox.jsonl   merge=m1nd-inbox\n"


def test_a_changed_interpreter_updates_the_driver(cli, repo):
    git(repo, "config", "merge.m1nd-inbox.driver", "/gone/python -m m1nd merge-driver %O %A %B")
    step = next(s for s in cli("init", "--json", str(repo)).json["steps"] if s["step"] == "merge-driver")
    assert step["status"] == "done" and "was: /gone/python" in step["message"]
    assert config(repo, "merge.m1nd-inbox.driver") == DRIVER


def test_a_symlinked_box_directory_is_refused(cli, repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".m1nd").symlink_to(elsewhere)
    result = cli("init", str(repo))
    assert result.code == 1 and "symlink" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_inherited_git_variables_do_not_redirect_init(cli, repo, make_repo, monkeypatch):
    other = make_repo("repo-b")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    assert cli("init", str(repo)).code == 0
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert config(repo, "merge.m1nd-inbox.driver") == DRIVER
    assert config(other, "merge.m1nd-inbox.driver") is None
    assert not (other / ".gitattributes").exists()


# ----------------------------------------------------------------------------- doctor


def checks(cli, cwd) -> dict:
    doc = cli("doctor", "--json", cwd=cwd).json
    return {c["name"]: c for c in doc["checks"]}


def test_doctor_reports_local_then_committed(cli, repo):
    (repo / ".m1nd").mkdir()
    (repo / ".m1nd" / ".gitignore").write_bytes(b"inbox.jsonl\n")
    found = checks(cli, repo)
    assert found["consent"]["message"] == "repo-a: local"
    assert "repo-a: box local" in found["git"]["message"]
    cli("init", str(repo))
    found = checks(cli, repo)
    assert found["consent"] == {"name": "consent", "status": "ok", "message": "repo-a: committed", "fix": ""}
    assert found["git"]["status"] == "ok"
    assert "merge driver configured" in found["git"]["message"]
    assert found["git"]["message"] == "repo-a: box committed; merge driver configured; no hooks"


def test_doctor_asks_a_fresh_clone_to_configure_its_driver(cli, repo, tmp_path):
    cli("init", str(repo))
    git(repo, "add", ".m1nd", ".gitattributes")
    git(repo, "commit", "-qm", "consent")
    clone = tmp_path / "clone" / "repo-a"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    found = checks(cli, clone)
    assert found["git"]["status"] == "warn"
    assert "asks for the m1nd-inbox merge driver but it is not configured" in found["git"]["message"]
    assert found["git"]["fix"] == "m1nd init"
    assert found["consent"]["message"].startswith("repo-a: committed")
    # `m1nd hooks install` configures it too
    assert cli("hooks", "install", str(clone)).code == 0
    assert config(clone, "merge.m1nd-inbox.driver") == DRIVER
    found = checks(cli, clone)
    assert found["git"]["status"] == "ok"
    assert "post-checkout current" in found["git"]["message"]


def test_doctor_flags_outdated_shims_and_a_gone_interpreter(cli, repo):
    cli("init", str(repo))
    cli("hooks", "install", str(repo))
    hook = repo / ".git" / "hooks" / "post-merge"
    hook.write_bytes(hook.read_bytes().replace(b"# m1nd-hook-shim 3", b"# m1nd-hook-shim 0"))
    found = checks(cli, repo)
    assert found["git"]["status"] == "warn"
    assert "post-merge outdated" in found["git"]["message"]
    assert found["git"]["fix"] == "m1nd hooks install"
    git(repo, "config", "merge.m1nd-inbox.driver", "/gone/python -m m1nd merge-driver %O %A %B")
    found = checks(cli, repo)
    assert "interpreter /gone/python is gone" in found["git"]["message"]
    assert found["git"]["fix"] == "m1nd init"
