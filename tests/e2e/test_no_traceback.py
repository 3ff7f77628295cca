"""Global options and "no traceback, ever" (mailbox contract section 10), as real
processes: options before the subcommand apply to it, and every failure the issue
found is one line on stderr naming the path, with exit 1."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import git_init, write_spool

PY = sys.executable


def m1nd(*args, cwd=None, env=None, stdout=subprocess.PIPE, shell_redirect: str | None = None, timeout=60):
    env = env or dict(os.environ)
    if shell_redirect is not None:  # run through sh to close or redirect stdout
        cmd = " ".join([f"'{PY}'", "-m", "m1nd", *[f"'{a}'" for a in args]]) + " " + shell_redirect
        return subprocess.run(["sh", "-c", cmd], cwd=cwd, env=env, stderr=subprocess.PIPE, timeout=timeout)
    return subprocess.run([PY, "-m", "m1nd", *map(str, args)], cwd=cwd, env=env, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line(proc, *names: str, code: int = 1) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == code, err
    assert "Traceback" not in err, err
    assert err.count("\n") == 1, err
    for name in names:
        assert name in err, err
    return err


@contextlib.contextmanager
def read_only(path: Path):
    """Read-only even for root: the immutable attribute (chmod does not stop root)."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o555)
        try:
            yield
        finally:
            path.chmod(mode)


def letter(what: str, repo: str) -> bytes:
    return orjson.dumps({"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "repo": repo, "what": what})


# --- options before the subcommand ---------------------------------------------------


def test_home_before_the_subcommand_applies_to_it(tmp_path, m1nd_home):
    other = tmp_path / "other-home"
    proc = m1nd("--home", other, "write", "--what", "hi")
    assert proc.returncode == 0, proc.stderr
    assert (other / "field-reports.jsonl").exists()
    assert not m1nd_home.exists()
    assert m1nd("--home", other, "roster", "add", tmp_path).returncode == 1  # the home's parent: refused
    repo = tmp_path / "repo-a"
    repo.mkdir()
    assert m1nd("--home", other, "roster", "add", repo).returncode == 0
    assert str(repo) in (other / "roster.json").read_text()


def test_spool_root_json_and_no_distribute_before_the_subcommand_apply(tmp_path, m1nd_home):
    spool = tmp_path / "s.jsonl"
    root = tmp_path / "repo-a"
    root.mkdir()
    assert m1nd("--spool", spool, "write", "--repo", "repo-a", "--what", "hi").returncode == 0
    assert spool.exists()
    swept = m1nd("--no-distribute", "--spool", spool, "--root", root, "sweep", "--json")
    doc = orjson.loads(swept.stdout)
    assert doc["distribution"] is None and doc["total"] == 1
    assert not (root / ".m1nd").exists(), "--no-distribute before the subcommand distributed"
    receipt = m1nd("--json", f"--spool={spool}", "--root", root, "distribute")
    assert orjson.loads(receipt.stdout)["to_project"] == 1
    assert (root / ".m1nd" / "inbox.jsonl").exists()


@pytest.mark.parametrize("command", [["report", "status", "--json"], ["report", "list", "--json"],
                                     ["cases", "--json"], ["cases", "claims", "--json"],
                                     ["sentinels", "run", "--json"]])
def test_home_before_a_command_group_applies_to_its_subcommand(tmp_path, m1nd_home, command):
    other = tmp_path / "other-home"
    proc = m1nd("--home", other, *command)
    assert proc.returncode == 0, proc.stderr
    orjson.loads(proc.stdout)
    assert not m1nd_home.exists(), f"{' '.join(command)} read the default home instead of --home"


def test_an_option_the_command_does_not_take_is_a_usage_error():
    proc = m1nd("--no-distribute", "write", "--what", "hi")
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


# --- paths that cannot be created, read or written ------------------------------------


@pytest.mark.parametrize("command", [["write", "--what", "hi"], ["roster", "add", "/"], ["distribute"]])
def test_a_home_under_proc_is_one_line(command, tmp_path):
    home = "/proc/m1nd-home"
    env = dict(os.environ, M1ND_HOME=home)
    write_spool(tmp_path / "s.jsonl", [letter("x", "repo-a")])
    proc = m1nd(*command, "--spool", tmp_path / "s.jsonl", env=env) if command[0] == "distribute" else m1nd(*command, env=env)
    one_line(proc, "/proc")


def test_a_home_that_is_a_regular_file_is_one_line(tmp_path):
    home = tmp_path / "home-file"
    home.write_bytes(b"")
    for args in (["write", "--what", "hi"], ["sweep"], ["doctor"]):
        proc = m1nd("--home", home, *args)
        assert b"Traceback" not in proc.stderr
        assert proc.returncode == 1, (args, proc.stderr)


def test_a_home_that_cannot_be_created_is_one_line(tmp_path):
    parent = tmp_path / "locked"
    parent.mkdir()
    with read_only(parent):
        one_line(m1nd("--home", parent / "home", "write", "--what", "hi"), str(parent))


def test_state_that_is_a_file_is_one_line(tmp_path, m1nd_home, spool_path):
    root = tmp_path / "repo-a"
    root.mkdir()
    write_spool(spool_path, [letter("x", "repo-a")])
    (m1nd_home / "state").write_bytes(b"")
    one_line(m1nd("distribute", "--root", root), str(m1nd_home / "state"))
    one_line(m1nd("write", "--what", "hi"), str(m1nd_home / "state"))


def test_a_read_only_home_for_roster_add_is_one_line(tmp_path, m1nd_home):
    m1nd_home.mkdir()
    (m1nd_home / "state").mkdir()
    repo = tmp_path / "repo-a"
    repo.mkdir()
    with read_only(m1nd_home):
        one_line(m1nd("roster", "add", repo), str(m1nd_home))


def test_a_read_only_repository_for_init_is_one_line(tmp_path):
    repo = git_init(tmp_path / "repo-a")
    with read_only(repo):
        one_line(m1nd("init", cwd=repo), str(repo))


def test_read_only_hooks_for_hooks_install_is_one_line(tmp_path):
    repo = git_init(tmp_path / "repo-a")
    with read_only(repo / ".git" / "hooks"):
        one_line(m1nd("hooks", "install", cwd=repo), str(repo / ".git" / "hooks"))


def test_a_repository_path_that_is_not_utf8(tmp_path):
    repo = Path(os.fsdecode(bytes(tmp_path) + b"/repo-\xff"))
    git_init(repo)
    write = m1nd("write", "--what", "hi", cwd=repo)
    one_line(write, "not UTF-8")
    assert m1nd("write", "--what", "hi", "--repo", "repo-a", cwd=repo).returncode == 0
    for args in (["distribute"], ["sweep"], ["doctor"], ["hook", "run", "post-checkout"]):
        proc = m1nd(*args, cwd=repo)
        assert b"Traceback" not in proc.stderr, (args, proc.stderr)
    assert m1nd("hooks", "install", cwd=repo).returncode in (0, 1)
    checkout = subprocess.run(["git", "checkout", "-q", "-b", "other"], cwd=repo, capture_output=True, timeout=60)
    assert checkout.returncode == 0 and b"Traceback" not in checkout.stderr, checkout.stderr


def test_a_deleted_current_directory_is_one_line(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.run(["sh", "-c", f"cd '{gone}' && rmdir '{gone}' && exec '{PY}' -m m1nd sweep"],
                          capture_output=True, timeout=60, env=dict(os.environ))
    one_line(proc, "current directory")


def test_roster_remove_with_a_nul_in_the_roster(tmp_path, m1nd_home):
    repo = tmp_path / "repo-a"
    repo.mkdir()
    m1nd_home.mkdir()
    (m1nd_home / "roster.json").write_bytes(b'{"roots": ["/tmp/a\\u0000b", "' + str(repo).encode() + b'"]}')
    proc = m1nd("roster", "remove", repo)
    assert proc.returncode == 0, proc.stderr
    assert str(repo) not in (m1nd_home / "roster.json").read_text()
    for args in (["roster", "list"], ["sweep"], ["doctor"]):
        assert b"Traceback" not in m1nd(*args).stderr


@pytest.mark.parametrize("args,redirect", [
    (["sweep"], ">&-"), (["sweep", "--json"], ">&-"), (["doctor"], "> /dev/full"),
    (["doctor", "--json"], "> /dev/full"), (["--version"], "> /dev/full"), (["--version"], ">&-"),
    (["sweep"], "> /dev/full"),
])
def test_a_closed_or_full_stdout_is_one_line(args, redirect):
    one_line(m1nd(*args, shell_redirect=redirect), "stdout")


def test_closed_stdout_never_lets_output_into_a_file_m1nd_opens(tmp_path, spool_path):
    root = tmp_path / "repo-a"
    root.mkdir()
    write_spool(spool_path, [letter("x", "repo-a")])
    before = spool_path.read_bytes()
    m1nd("sweep", "--root", str(root), shell_redirect=">&-")
    assert spool_path.read_bytes() == before
    assert (root / ".m1nd" / "inbox.jsonl").read_bytes() == before
