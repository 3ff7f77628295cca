"""Fencing, with real processes: nothing is ever written outside the roots' `.m1nd/`
and the home, and `--no-distribute` writes nothing at all (contract sections 1, 3, 4, 6)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import orjson

from conftest import run_script, write_spool


def listing(top: Path) -> dict:
    """Every entry under `top`, symlinks not followed: type, size, mode, mtime, content."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            entry = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_size, st.st_mtime_ns)
            if stat.S_ISLNK(st.st_mode):
                entry += (os.readlink(p),)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    entry += (fh.read(),)
            out[os.path.relpath(p, top)] = entry
    return out


def m1nd(*args, cwd):
    return run_script(*args, cwd=cwd)


def test_a_symlinked_m1nd_pointing_outside_receives_nothing(make_repo, tmp_path, spool_path, m1nd_home):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "inbox.jsonl").write_bytes(b"")
    (a / ".m1nd").symlink_to(outside)
    write_spool(spool_path, [{"repo": "repo-a", "what": "for a"}, {"repo": str(a / "src"), "what": "for a too"},
                             {"repo": "repo-b", "what": "for b"}])
    before = listing(outside)
    work = tmp_path / "work"
    for args in (("distribute", "--root", str(a), "--root", str(b)),
                 ("--inbox-sweep", "--root", str(a), "--root", str(b)),
                 ("sweep", "--root", str(a), "--root", str(b))):
        done = m1nd(*args, cwd=work)
        assert done.returncode == 1, (args, done.stderr)
        assert b"repo-a" in done.stderr
    done = m1nd("distribute", cwd=a)  # the bound root itself
    assert done.returncode == 1
    assert listing(outside) == before
    assert (b / ".m1nd" / "inbox.jsonl").read_bytes() == b'{"repo":"repo-b","what":"for b"}\n'


def test_a_symlinked_gitignore_in_a_box_dir_is_not_followed(make_repo, tmp_path, spool_path):
    a = make_repo("repo-a")
    (a / ".m1nd").mkdir()
    target = tmp_path / "outside" / "victim"
    target.parent.mkdir()
    (a / ".m1nd" / ".gitignore").symlink_to(target)
    write_spool(spool_path, [{"repo": "repo-a", "what": "x"}])
    done = m1nd("distribute", "--root", str(a), cwd=tmp_path / "work")
    assert not target.exists()
    assert (a / ".m1nd" / ".gitignore").is_symlink()
    assert done.returncode == 0, done.stderr
    assert (a / ".m1nd" / "inbox.jsonl").read_bytes() == b'{"repo":"repo-a","what":"x"}\n'


def test_a_letter_naming_an_absolute_directory_outside_every_root_creates_nothing_there(
    make_repo, tmp_path, spool_path, m1nd_home
):
    a = make_repo("repo-a")
    existing = tmp_path / "outside" / "repo-z"
    existing.mkdir(parents=True)
    (existing / "keep.txt").write_bytes(b"the user's\n")
    missing = tmp_path / "nowhere" / "repo-y"
    elsewhere_a = tmp_path / "outside" / "repo-a"  # same name as a root, different place
    elsewhere_a.mkdir()
    letters = [
        {"repo": str(existing), "what": "1"},
        {"repo": str(existing / "sub" / "file.py"), "what": "2"},
        {"repo": str(missing), "what": "3"},
        {"brain": "project:" + str(missing / "deeper"), "what": "4"},
        {"repo": str(elsewhere_a), "what": "5"},
    ]
    write_spool(spool_path, letters)
    outside_before = listing(tmp_path / "outside")
    work = tmp_path / "work"
    done = m1nd("distribute", "--json", "--root", str(a), cwd=work)
    assert done.returncode == 0, done.stderr
    receipt = orjson.loads(done.stdout)
    assert receipt["pending"] == ["deeper", "file.py", "repo-y", "repo-z"]
    assert receipt["to_project"] == 1
    assert listing(tmp_path / "outside") == outside_before
    assert not (tmp_path / "nowhere").exists()
    assert (a / ".m1nd" / "inbox.jsonl").read_bytes() == orjson.dumps(letters[4]) + b"\n"
    assert m1nd("--inbox-sweep", "--root", str(a), cwd=work).returncode == 0
    assert listing(tmp_path / "outside") == outside_before
    assert not (tmp_path / "nowhere").exists()


def test_a_symlink_escaping_a_root_does_not_carry_letters_out(make_repo, tmp_path, spool_path):
    a = make_repo("repo-a")
    outside = tmp_path / "outside"
    outside.mkdir()
    (a / "vendor").symlink_to(outside)
    write_spool(spool_path, [{"repo": str(a / "vendor" / "lib"), "what": "x"}])
    done = m1nd("distribute", "--json", "--root", str(a), cwd=tmp_path / "work")
    assert done.returncode == 0
    assert orjson.loads(done.stdout)["pending"] == ["lib"]
    assert os.listdir(outside) == []


def test_no_distribute_writes_nothing_and_creates_no_directory_not_even_the_home(make_repo, tmp_path, monkeypatch):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    spool = tmp_path / "spools" / "reports.jsonl"
    write_spool(spool, [{"repo": "repo-a", "what": "1"}, {"repo": "all", "what": "2"},
                        {"repo": "repo-q", "what": "3"}, b"not json", {"repo": str(b / "x"), "what": "4"}])
    monkeypatch.setenv("M1ND_SPOOL", str(spool))
    home = Path(os.environ["M1ND_HOME"])
    assert not home.exists()
    before = listing(tmp_path)
    roots = ("--root", str(a), "--root", str(b))
    runs = [
        (("--inbox-sweep", "--no-distribute", *roots), tmp_path / "work"),
        (("sweep", "--json", "--no-distribute", *roots), tmp_path / "work"),
        (("sweep", "--no-distribute", *roots), tmp_path / "work"),
        (("--inbox-sweep", "--no-distribute"), a),
        (("sweep", "--no-distribute"), b),
    ]
    for args, cwd in runs:
        done = m1nd(*args, cwd=cwd)
        assert done.returncode == 0, (args, done.stderr)
    doc = orjson.loads(m1nd("--inbox-sweep", "--no-distribute", *roots, cwd=tmp_path / "work").stdout)
    assert doc["distribution"] is None and doc["total"] == 4
    assert listing(tmp_path) == before
    assert not home.exists()


def test_no_distribute_leaves_an_existing_home_state_and_boxes_byte_and_time_identical(
    make_repo, tmp_path, spool_path, m1nd_home
):
    a = make_repo("repo-a")
    outside = tmp_path / "outside"
    outside.mkdir()
    b = make_repo("repo-b")
    (b / ".m1nd").symlink_to(outside)  # a refused box: still nothing written
    write_spool(spool_path, [{"repo": "repo-a", "what": "1"}, {"repo": "all", "what": "2"}])
    work = tmp_path / "work"
    assert m1nd("roster", "add", str(a), cwd=work).returncode == 0
    assert m1nd("distribute", cwd=work).returncode == 0
    write_spool(spool_path, [{"repo": "repo-a", "what": "3"}, {"repo": "repo-b", "what": "4"}])
    before = listing(tmp_path)
    for args in (("--inbox-sweep", "--no-distribute", "--root", str(b)), ("sweep", "--no-distribute")):
        done = m1nd(*args, cwd=work)
        assert done.returncode in (0, 1), done.stderr
    done = m1nd("--inbox-sweep", "--no-distribute", "--root", str(b), cwd=work)
    assert done.returncode == 1  # the refused box is named, after printing
    assert orjson.loads(done.stdout)["total"] == 4
    # The read model is the one thing a read-only run may keep (section 6): under
    # <home>/state/, next to the untouched cursor and indexes.
    # So is the coverage ledger under <home>/records/ (with its lock and derived index
    # under <home>/state/): only those, and the mtimes of the directories holding them.
    def without_model(entries: dict) -> dict:
        kept = {"m1nd-home", "m1nd-home/state", "m1nd-home/state/locks"}
        return {k: (v if k not in kept else v[:3]) for k, v in entries.items()
                if "readmodel.sqlite3" not in k and not k.startswith("m1nd-home/records")
                and not k.startswith("m1nd-home/state/locks/ledger") and k != "m1nd-home/state/ledger-index"}

    assert without_model(listing(tmp_path)) == without_model(before)


def test_filing_writes_only_inside_roots_m1nd_and_the_home_which_it_creates_0700(
    make_repo, tmp_path, m1nd_home, monkeypatch
):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    (a / "README").write_bytes(b"repo a\n")
    spool_path = tmp_path / "spools" / "reports.jsonl"
    monkeypatch.setenv("M1ND_SPOOL", str(spool_path))
    write_spool(spool_path, [{"repo": "repo-a", "what": "1"}, {"repo": "repo-b", "what": "2"},
                             {"repo": "all", "what": "3"}, {"repo": "repo-q", "what": "4"}])
    before = listing(tmp_path)
    work = tmp_path / "work"
    assert m1nd("distribute", "--root", str(a), "--root", str(b), cwd=work).returncode == 0
    assert m1nd("--inbox-sweep", "--root", str(a), "--root", str(b), cwd=work).returncode == 0
    after = listing(tmp_path)
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    allowed_prefixes = ("src/repo-a/.m1nd", "src/repo-b/.m1nd", "m1nd-home")
    assert changed and all(p.startswith(allowed_prefixes) or p in ("src/repo-a", "src/repo-b") for p in changed), \
        sorted(changed)
    assert stat.S_IMODE(os.stat(m1nd_home).st_mode) == 0o700
