"""Boxes (contract section 4): birth, refusal, append with dedup, growth, locks."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import orjson
import pytest

from conftest import write_spool

A1 = b'{"repo":"repo-a","what":"a1"}'
A2 = b'{"repo":"repo-a","what":"a2"}'
B1 = b'{"repo":"repo-b","what":"b1"}'
M1 = b'{"repo":"all","what":"m1"}'


def sha12(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


def box_of(repo: Path) -> Path:
    return repo / ".m1nd" / "inbox.jsonl"


def snapshot(root: Path) -> dict:
    """Every entry under root (symlinks not followed): path → bytes, link target or 'dir'."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if os.path.islink(p):
                out[p] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[p] = ("dir",)
            else:
                with open(p, "rb") as fh:
                    out[p] = ("file", fh.read())
    return out


@pytest.fixture
def two_repos(make_repo, cli):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    assert cli("roster", "add", str(a)).code == 0
    assert cli("roster", "add", str(b)).code == 0
    return a, b


# --- birth -------------------------------------------------------------------------


def test_filing_into_a_new_project_box_writes_a_gitignore_ignoring_the_box_and_itself(
    cli, spool_path, two_repos
):
    a, _ = two_repos
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    assert (a / ".m1nd").is_dir()
    assert (a / ".m1nd" / ".gitignore").read_bytes() == b"inbox.jsonl\n.gitignore\n"
    assert box_of(a).read_bytes() == A1 + b"\n"
    assert sorted(os.listdir(a / ".m1nd")) == [".gitignore", "inbox.jsonl"]


def test_a_root_that_receives_no_letter_gets_no_m1nd_directory(cli, spool_path, two_repos):
    _, b = two_repos
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    assert not (b / ".m1nd").exists()


def test_an_existing_gitignore_is_never_rewritten_by_filing(cli, spool_path, two_repos):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    (a / ".m1nd" / ".gitignore").write_bytes(b"# consented: the box is committed\n")
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    assert (a / ".m1nd" / ".gitignore").read_bytes() == b"# consented: the box is committed\n"
    assert box_of(a).read_bytes() == A1 + b"\n"


def test_an_empty_existing_gitignore_stays_empty(cli, spool_path, two_repos):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    (a / ".m1nd" / ".gitignore").write_bytes(b"")
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    assert (a / ".m1nd" / ".gitignore").read_bytes() == b""


def test_a_gitignore_emptied_after_birth_is_left_empty_by_later_filing(cli, spool_path, two_repos):
    # An existing .gitignore, whatever it holds, is never rewritten by filing.
    a, _ = two_repos
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    (a / ".m1nd" / ".gitignore").write_bytes(b"")
    write_spool(spool_path, [A2])
    assert cli("distribute").code == 0
    assert (a / ".m1nd" / ".gitignore").read_bytes() == b""


def test_the_medulla_box_gets_no_box_gitignore_and_the_home_ignores_everything(cli, spool_path, m1nd_home):
    write_spool(spool_path, [M1])
    assert cli("distribute").code == 0
    assert (m1nd_home / "inbox.jsonl").read_bytes() == M1 + b"\n"
    assert (m1nd_home / ".gitignore").read_bytes() == b"*\n"
    assert not (m1nd_home / ".m1nd").exists()


# --- refusal -----------------------------------------------------------------------


def test_a_symlinked_m1nd_directory_is_refused_and_the_rest_of_the_run_is_filed(
    cli, spool_path, two_repos, tmp_path, m1nd_home
):
    a, b = two_repos
    outside = tmp_path / "outside"
    outside.mkdir()
    (a / ".m1nd").symlink_to(outside)
    write_spool(spool_path, [A1, B1, M1])
    result = cli("distribute")
    assert result.code == 1
    assert "repo-a" in result.stderr and "symlink" in result.stderr
    assert os.listdir(outside) == []
    assert box_of(b).read_bytes() == B1 + b"\n"
    assert (m1nd_home / "inbox.jsonl").read_bytes() == M1 + b"\n"


def test_a_symlinked_box_file_is_refused_and_its_target_is_untouched(cli, spool_path, two_repos, tmp_path):
    a, b = two_repos
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b"")
    (a / ".m1nd").mkdir()
    box_of(a).symlink_to(target)
    write_spool(spool_path, [A1, B1])
    result = cli("distribute")
    assert result.code == 1
    assert "repo-a" in result.stderr and str(box_of(a)) in result.stderr
    assert target.read_bytes() == b""
    assert box_of(a).is_symlink()
    assert box_of(b).read_bytes() == B1 + b"\n"


def test_a_dangling_symlinked_box_file_is_refused_and_nothing_is_created_at_its_target(
    cli, spool_path, two_repos, tmp_path
):
    a, _ = two_repos
    target = tmp_path / "not-yet.jsonl"
    (a / ".m1nd").mkdir()
    box_of(a).symlink_to(target)
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 1
    assert not target.exists()


def test_a_box_that_is_a_directory_is_refused_and_the_rest_is_filed(cli, spool_path, two_repos):
    a, b = two_repos
    box_of(a).mkdir(parents=True)
    write_spool(spool_path, [A1, B1])
    result = cli("distribute")
    assert result.code == 1
    assert "repo-a" in result.stderr and "not a regular file" in result.stderr
    assert box_of(a).is_dir() and os.listdir(box_of(a)) == []
    assert box_of(b).read_bytes() == B1 + b"\n"


def test_an_m1nd_that_is_a_regular_file_is_refused_and_left_as_it_is(cli, spool_path, two_repos):
    a, b = two_repos
    (a / ".m1nd").write_bytes(b"something of the user's\n")
    write_spool(spool_path, [A1, B1])
    result = cli("distribute")
    assert result.code == 1
    assert "repo-a" in result.stderr and "not a directory" in result.stderr
    assert (a / ".m1nd").read_bytes() == b"something of the user's\n"
    assert box_of(b).read_bytes() == B1 + b"\n"


def test_a_symlinked_medulla_box_is_refused(cli, spool_path, m1nd_home, tmp_path):
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"")
    m1nd_home.mkdir()
    (m1nd_home / "inbox.jsonl").symlink_to(target)
    write_spool(spool_path, [M1])
    result = cli("distribute")
    assert result.code == 1
    assert "medulla" in result.stderr
    assert target.read_bytes() == b""


def test_a_refused_box_makes_the_sweep_exit_1_after_printing_a_valid_document(
    cli, spool_path, two_repos, tmp_path
):
    a, b = two_repos
    outside = tmp_path / "outside"
    outside.mkdir()
    (a / ".m1nd").symlink_to(outside)
    write_spool(spool_path, [A1, B1])
    result = cli("--inbox-sweep")
    assert result.code == 1
    doc = result.json
    assert doc["schema"] == "m1nd-inbox-sweep-v0"
    assert doc["distribution"]["to_project"] == 2
    assert doc["distribution"]["appended"] == 1
    assert doc["total"] == 2
    assert "repo-a" in result.stderr
    assert os.listdir(outside) == []


def test_a_refused_box_is_reported_even_by_a_no_distribute_sweep(cli, spool_path, two_repos, tmp_path):
    a, _ = two_repos
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "inbox.jsonl").write_bytes(A2 + b"\n")
    (a / ".m1nd").symlink_to(outside)
    result = cli("--inbox-sweep", "--no-distribute")
    assert result.code == 1
    assert result.json["distribution"] is None
    assert "repo-a" in result.stderr


# --- append with dedup -------------------------------------------------------------


def test_a_letter_already_in_the_box_is_not_appended_again(cli, spool_path, two_repos):
    a, _ = two_repos
    foreign = b'{"repo":"repo-a","what":"arrived by git from another machine"}'
    (a / ".m1nd").mkdir()
    box_of(a).write_bytes(foreign + b"\n" + A1 + b"\n")
    write_spool(spool_path, [A1, A2])
    receipt = cli("distribute", "--json").json
    assert receipt["appended"] == 1
    assert receipt["to_project"] == 2
    assert box_of(a).read_bytes() == foreign + b"\n" + A1 + b"\n" + A2 + b"\n"


def test_a_box_holding_only_letters_that_arrived_by_git_is_untouched(cli, spool_path, two_repos):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    data = A1 + b"\r\n" + A2 + b"\n"
    box_of(a).write_bytes(data)
    before = os.stat(box_of(a))
    write_spool(spool_path, [A1, A2])
    assert cli("distribute", "--json").json["appended"] == 0
    assert box_of(a).read_bytes() == data
    assert os.stat(box_of(a)).st_mtime_ns == before.st_mtime_ns


def test_the_same_letter_twice_in_the_spool_is_filed_once_but_counted_per_line(cli, spool_path, two_repos):
    a, _ = two_repos
    write_spool(spool_path, [A1, A1, A2, A1])
    receipt = cli("distribute", "--json").json
    assert receipt["spool_total"] == 4
    assert receipt["to_project"] == 4
    assert receipt["appended"] == 2
    assert box_of(a).read_bytes() == A1 + b"\n" + A2 + b"\n"


def test_a_crlf_line_in_the_box_counts_as_the_same_letter(cli, spool_path, two_repos):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    box_of(a).write_bytes(A1 + b"\r\n")
    write_spool(spool_path, [A1])
    assert cli("distribute", "--json").json["appended"] == 0
    assert box_of(a).read_bytes() == A1 + b"\r\n"


def test_an_unterminated_last_box_line_holding_the_letter_counts_as_present(cli, spool_path, two_repos):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    box_of(a).write_bytes(A1)
    write_spool(spool_path, [A1])
    assert cli("distribute", "--json").json["appended"] == 0
    assert box_of(a).read_bytes().count(A1) == 1


def test_a_box_without_a_final_newline_gets_one_before_new_letters(cli, spool_path, two_repos):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    box_of(a).write_bytes(A1)
    write_spool(spool_path, [A2])
    assert cli("distribute").code == 0
    assert box_of(a).read_bytes() == A1 + b"\n" + A2 + b"\n"
    assert [sha12(l) for l in box_of(a).read_bytes().splitlines()] == [sha12(A1), sha12(A2)]


def test_a_box_ending_in_a_torn_line_keeps_it_and_the_new_letter_starts_a_fresh_line(
    cli, spool_path, two_repos
):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    torn = b'{"repo":"repo-a","wha'
    box_of(a).write_bytes(A1 + b"\n" + torn)
    write_spool(spool_path, [A2])
    assert cli("distribute").code == 0
    assert box_of(a).read_bytes() == A1 + b"\n" + torn + b"\n" + A2 + b"\n"


def test_a_box_only_grows_its_old_bytes_stay_a_prefix(cli, spool_path, two_repos):
    a, _ = two_repos
    (a / ".m1nd").mkdir()
    odd = (b"<<<<<<< ours\n" + A1 + b"\n=======\nnot json\n\n   \n>>>>>>> theirs\n"
           + b'{"repo":"repo-a","what":"\xff"}\n' + B1 + b"\n")
    box_of(a).write_bytes(odd)
    write_spool(spool_path, [A1, A2, b'{"repo":"repo-a","what":"a3"}'])
    assert cli("distribute").code == 0
    after = box_of(a).read_bytes()
    assert after.startswith(odd)
    assert after[len(odd):] == A2 + b"\n" + b'{"repo":"repo-a","what":"a3"}\n'


def test_letters_keep_their_raw_bytes_and_id_in_the_box(cli, spool_path, two_repos):
    a, _ = two_repos
    raw = b'  {"what":"caf\xc3\xa9 \\u00e9","repo":"repo-a","zz":[1,2.50,{"k":null}]}\t'
    write_spool(spool_path, [raw + b"\r"])
    assert cli("distribute").code == 0
    assert box_of(a).read_bytes() == raw + b"\n"
    doc = cli("--inbox-sweep", "--no-distribute").json
    assert [l["id"] for l in doc["letters"]] == [sha12(raw)]


def test_a_letter_that_arrived_by_git_between_runs_is_not_appended_again(cli, spool_path, two_repos):
    a, _ = two_repos
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    with open(box_of(a), "ab") as fh:  # a pull brings A2 from another machine
        fh.write(A2 + b"\n")
    write_spool(spool_path, [A2, B1])
    receipt = cli("distribute", "--json").json
    assert receipt["appended"] == 1
    assert box_of(a).read_bytes() == A1 + b"\n" + A2 + b"\n"


def test_a_box_replaced_by_a_new_file_is_read_again_before_appending(cli, spool_path, two_repos):
    a, _ = two_repos
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    replacement = a / ".m1nd" / "incoming"
    replacement.write_bytes(A2 + b"\n" + A1 + b"\n")
    os.replace(replacement, box_of(a))  # as a checkout writes a new file
    write_spool(spool_path, [A2, b'{"repo":"repo-a","what":"a3"}'])
    assert cli("distribute").code == 0
    assert box_of(a).read_bytes() == A2 + b"\n" + A1 + b"\n" + b'{"repo":"repo-a","what":"a3"}\n'


def test_a_box_rewritten_in_place_is_read_again_before_appending(cli, spool_path, two_repos):
    # Same inode, same size, a line far from the end changed (an editor, a tool
    # rewriting the file in place): the box now holds a letter no index has seen.
    a, _ = two_repos
    filler = [b'{"repo":"repo-a","what":"filler %04d"}' % i for i in range(400)]
    write_spool(spool_path, filler)
    assert cli("distribute").code == 0
    data = box_of(a).read_bytes()
    assert len(data) > 8192
    arrived = b'{"repo":"repo-a","what":"change 0000"}'
    swapped = data.replace(filler[0], arrived)
    assert len(swapped) == len(data) and swapped != data
    with open(box_of(a), "r+b") as fh:
        fh.write(swapped)
    write_spool(spool_path, [arrived])
    assert cli("distribute").code == 0
    lines = box_of(a).read_bytes().split(b"\n")
    assert lines.count(arrived) == 1, "a letter already in the box was appended again"


def test_a_deleted_box_is_filled_again_by_the_next_distribute(cli, spool_path, two_repos):
    # Contract 6: the result of a run never depends on what an earlier run left in state.
    a, _ = two_repos
    write_spool(spool_path, [A1, A2])
    assert cli("distribute").code == 0
    box_of(a).unlink()
    assert cli("distribute").code == 0
    assert box_of(a).read_bytes() == A1 + b"\n" + A2 + b"\n"


def test_a_box_replaced_with_older_content_is_not_refilled_but_no_letter_is_lost(cli, spool_path, two_repos):
    """A checkout of an older commit replaces a box with content that lacks a letter.
    Filing the letter again would leave the box modified after every checkout, and git
    would then refuse the next branch switch; so the replaced box is left as git wrote
    it, and the letter stays visible through the spool (tests/e2e/test_hooks.py guards
    the branch-switch side).  A deleted or emptied box is refilled (test_cli_contract)."""
    a, _ = two_repos
    write_spool(spool_path, [A1, A2])
    assert cli("distribute").code == 0
    older = a / ".m1nd" / "older"
    older.write_bytes(A1 + b"\n")
    os.replace(older, box_of(a))
    receipt = cli("distribute", "--json")
    assert receipt.code == 0 and receipt.json["appended"] == 0
    assert box_of(a).read_bytes() == A1 + b"\n"
    ids = {letter["id"] for letter in cli("--inbox-sweep", "--no-distribute").json["letters"]}
    assert {sha12(A1), sha12(A2)} <= ids


# --- locks -------------------------------------------------------------------------


def test_lock_files_live_under_the_home_state_never_inside_a_repository(
    cli, spool_path, two_repos, tmp_path, m1nd_home
):
    a, b = two_repos
    write_spool(spool_path, [A1, B1, M1])
    assert cli("write", "--repo", "repo-a", "--what", "via the write path").code == 0
    assert cli("distribute").code == 0
    locks = []
    for dirpath, _, filenames in os.walk(tmp_path):
        locks += [os.path.join(dirpath, f) for f in filenames if f.endswith(".lock")]
    assert locks, "expected lock files"
    state = str(m1nd_home / "state") + os.sep
    assert all(p.startswith(state) for p in locks), locks
    for repo in (a, b):
        added = {os.path.relpath(p, repo) for p in snapshot(repo) if not os.path.relpath(p, repo).startswith(".git")}
        assert added == {".m1nd", ".m1nd/.gitignore", ".m1nd/inbox.jsonl"}


def test_deleting_the_state_directory_loses_no_letter(cli, spool_path, two_repos, m1nd_home):
    import shutil

    a, _ = two_repos
    write_spool(spool_path, [A1])
    assert cli("distribute").code == 0
    shutil.rmtree(m1nd_home / "state")
    write_spool(spool_path, [A2])
    receipt = cli("distribute", "--json").json
    assert receipt["appended"] == 1
    assert box_of(a).read_bytes() == A1 + b"\n" + A2 + b"\n"


# --- held letters (likely secrets never go into a project box) ----------------------

SECRETS = {
    "github token": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "private key block": "-----BEGIN RSA PRIVATE KEY-----",
    "cloud access key id": "AKIA" + "ABCDEFGHIJKLMNOP",
    "password assignment": "password=hunter2-but-longer",
}


@pytest.mark.parametrize("secret", list(SECRETS.values()), ids=list(SECRETS))
def test_a_letter_carrying_a_likely_secret_is_held_in_the_spool_not_filed_into_a_project_box(
    cli, spool_path, two_repos, secret
):
    a, _ = two_repos
    held = orjson.dumps({"repo": "repo-a", "what": "leak", "snippet": secret})
    write_spool(spool_path, [held, A1])
    result = cli("distribute", "--json")
    receipt = result.json
    assert receipt["spool_total"] == 2
    assert receipt["to_project"] == 1
    assert receipt["pending"] == []
    assert box_of(a).read_bytes() == A1 + b"\n"


def test_a_medulla_letter_carrying_a_likely_secret_is_still_filed(cli, spool_path, m1nd_home):
    raw = orjson.dumps({"repo": "all", "what": "x", "snippet": SECRETS["github token"]})
    write_spool(spool_path, [raw])
    receipt = cli("distribute", "--json").json
    assert receipt["to_medulla"] == 1
    assert (m1nd_home / "inbox.jsonl").read_bytes() == raw + b"\n"
