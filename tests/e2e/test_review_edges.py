"""Edges found in review: a pending letter on an unterminated last line, a box whose
write fails is still read by the sweep, a waiting path that comes to lie inside a
root, and a refused box that must not stop the cursor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import write_spool

SHIM = Path(__file__).resolve().parent / "faultshim.py"


def test_a_waiting_letter_on_an_unterminated_last_line_is_named_in_pending(cli, spool_path, make_repo):
    repo = make_repo("repo-a")
    write_spool(spool_path, [{"repo": "repo-x", "what": "x"}])
    with open(spool_path, "ab") as fh:
        fh.write(b'{"repo":"repo-y","what":"y"}')  # no final newline: a letter all the same
    receipt = cli("distribute", "--json", "--root", str(repo)).json
    assert receipt["pending"] == ["repo-x", "repo-y"]
    doctor = cli("doctor", "--json", "--root", str(repo)).json
    assert doctor["mailbox"]["pending_distribution"] == ["repo-x", "repo-y"]


def test_a_box_that_could_not_be_written_is_still_read_by_the_sweep(spool_path, make_repo, tmp_path):
    repo = make_repo("repo-a")
    traveled = b'{"repo":"repo-a","what":"arrived by git from another machine"}'
    (repo / ".m1nd").mkdir()
    (repo / ".m1nd" / "inbox.jsonl").write_bytes(traveled + b"\n")
    write_spool(spool_path, [{"repo": "repo-a", "what": "new here"}])
    env = dict(os.environ, FAULTSHIM_PATH=str(repo / ".m1nd" / "inbox.jsonl"), FAULTSHIM_ACTION="ENOSPC",
               FAULTSHIM_PARTIAL="0")
    full = subprocess.run([sys.executable, str(SHIM), "--inbox-sweep", "--root", str(repo)],
                          capture_output=True, env=env, cwd=tmp_path)
    assert full.returncode == 1
    doc = json.loads(full.stdout)
    assert doc["total"] == 2  # the letter that only the box holds is in the union
    assert b"inbox.jsonl" in full.stderr and b"Traceback" not in full.stderr


def test_a_waiting_path_that_comes_to_lie_inside_a_root_is_filed_without_deleting_state(
        cli, spool_path, make_repo, tmp_path):
    repo = make_repo("repo-a")
    alias = tmp_path / "alias"
    write_spool(spool_path, [{"repo": f"{alias}/src", "what": "named through a link not made yet"}])
    first = cli("distribute", "--json", "--root", str(repo)).json
    assert first["pending"] == ["src"] and first["to_project"] == 0
    alias.symlink_to(repo)
    second = cli("distribute", "--json", "--root", str(repo)).json
    assert second["pending"] == [] and second["to_project"] == 1 and second["appended"] == 1


def test_a_refused_box_does_not_stop_the_cursor_and_is_filed_once_it_is_fixed(
        cli, spool_path, make_repo, tmp_path, m1nd_home):
    good, bad = make_repo("repo-a"), make_repo("repo-b")
    outside = tmp_path / "outside"
    outside.mkdir()
    (bad / ".m1nd").symlink_to(outside)
    write_spool(spool_path, [{"repo": "repo-a", "what": "a"}, {"repo": "repo-b", "what": "b"}])
    roots = ["--root", str(good), "--root", str(bad)]
    assert cli("distribute", *roots).code == 1
    cursor = m1nd_home / "state" / "distribute.json"
    assert cursor.exists()  # the cursor moved on past the refused box
    assert list(outside.iterdir()) == []
    assert cli("distribute", *roots).code == 1  # still refused, still nothing written there
    assert list(outside.iterdir()) == []
    (bad / ".m1nd").unlink()
    receipt = cli("distribute", "--json", *roots)
    assert receipt.code == 0 and receipt.json["appended"] == 1
    assert (bad / ".m1nd" / "inbox.jsonl").read_bytes() == b'{"repo":"repo-b","what":"b"}\n'


def test_hooks_and_the_merge_driver_never_import_an_m1nd_directory_of_the_work_tree(cli, make_repo, tmp_path):
    repo = make_repo("repo-a")
    planted = repo / "m1nd"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text("open('PLANTED-CODE-RAN', 'w').close()\n")
    assert cli("init", str(repo)).code == 0
    assert cli("hooks", "install", str(repo)).code == 0
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "two"], check=True, capture_output=True)
    driver = subprocess.run(["git", "-C", str(repo), "config", "merge.m1nd-inbox.driver"],
                            capture_output=True, text=True, check=True).stdout.strip()
    for name in ("base", "ours", "theirs"):
        (tmp_path / name).write_bytes(b'{"what":"x"}\n')
    command = driver.replace("%O", str(tmp_path / "base")).replace("%A", str(tmp_path / "ours"))
    command = command.replace("%B", str(tmp_path / "theirs"))
    assert subprocess.run(["sh", "-c", command], cwd=repo).returncode == 0
    assert not (repo / "PLANTED-CODE-RAN").exists()


def test_a_config_whose_mailbox_is_not_a_table_is_one_error_line(cli, m1nd_home):
    m1nd_home.mkdir(parents=True, exist_ok=True)
    (m1nd_home / "config.toml").write_text("mailbox = 5\n")
    result = cli("sweep", "--json", "--no-distribute")
    assert result.code == 1
    assert "must be a table" in result.json["error"]["message"]


def test_write_refuses_a_ts_that_is_not_iso_8601(cli, spool_path):
    assert cli("write", "--what", "x", "--ts", "garbage").code == 2
    assert not spool_path.exists()
    assert cli("write", "--what", "x", "--ts", "2026-05-01T10:00:00Z").code == 0
    assert b'"ts":"2026-05-01T10:00:00Z"' in spool_path.read_bytes()


def test_a_merge_driver_set_globally_does_not_stop_hooks_from_filing(cli, make_repo, spool_path, tmp_path):
    repo = make_repo("repo-a")
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text("[merge \"m1nd-inbox\"]\n\tdriver = m1nd merge-driver %O %A %B\n")
    env = dict(os.environ, GIT_CONFIG_GLOBAL=str(global_config))
    assert cli("roster", "add", str(repo)).code == 0
    assert cli("hooks", "install", str(repo)).code == 0
    write_spool(spool_path, [{"repo": "repo-a", "what": "the first letter this repository gets"}])
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "one"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "two"], check=True, env=env,
                   capture_output=True)
    assert (repo / ".m1nd" / "inbox.jsonl").read_bytes().count(b"\n") == 1


def test_doctor_diagnoses_a_corrupt_roster_instead_of_stopping(cli, m1nd_home, spool_path):
    write_spool(spool_path, [{"repo": "repo-a", "what": "x"}])
    (m1nd_home / "roster.json").write_text("{not json")
    result = cli("doctor", "--json")
    assert result.code == 1
    doc = result.json
    assert doc["mailbox"] is None
    roster = next(c for c in doc["checks"] if c["name"] == "roster")
    assert roster["status"] == "error" and "roster" in roster["message"]
    assert {c["name"] for c in doc["checks"]} >= {"spool", "boxes", "pending", "held", "consent", "git"}
    assert cli("distribute").code == 1  # every other command still fails closed


def test_a_m1nd_dir_swapped_for_a_symlink_after_the_refusal_check_is_not_followed(tmp_path, monkeypatch, make_repo):
    """The race the check-then-open order leaves: `.m1nd` passes `refusal()` and is then
    replaced by a symlink before the box is opened (simulated by letting the check pass)."""
    from m1nd import boxes
    from m1nd.boxindex import BoxIndex
    from m1nd.routing import build_roots

    repo = make_repo("repo-a")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".m1nd").symlink_to(outside)
    root = build_roots(None, [], [str(repo)], str(tmp_path / "home")).roots[0]
    monkeypatch.setattr(boxes, "refusal", lambda box: None)
    raw = b'{"repo":"repo-a","what":"x"}'
    try:
        boxes.append(boxes.project_box(root), ["id"], [raw], str(tmp_path / "locks"), BoxIndex("x", None))
        raised = False
    except boxes.Refused:
        raised = True
    assert raised
    assert list(outside.iterdir()) == []
