"""A distribution that finds nothing new writes nothing: every read distributes
first, so the state it keeps (`<home>/state/distribute.json` and the spool-location
log) is rewritten and synced only when something changed."""

from __future__ import annotations

import os
import time

from conftest import run_cli, write_spool


def _state_files(home):
    state = home / "state"
    return {name: (st.st_ino, st.st_size, st.st_mtime_ns)
            for name in ("distribute.json", "spool-locations.bin")
            if (st := os.stat(state / name))}


def _letter(n: int, repo: str = "repo-a") -> dict:
    return {"from": "agent-a", "repo": repo, "what": f"seek returned a deleted node ({n})",
            "when": "2026-12-01T10:00:00Z"}


def test_a_read_with_nothing_new_leaves_the_distribution_state_untouched(make_repo, m1nd_home, spool_path):
    root = make_repo("repo-a")
    assert run_cli("roster", "add", str(root)).code == 0
    write_spool(spool_path, [_letter(1), _letter(2, repo="elsewhere")])
    assert run_cli("distribute").code == 0
    time.sleep(2.1)  # past the stat-trust window: a later run has no reason to record anything more
    assert run_cli("distribute").code == 0
    before = _state_files(m1nd_home)
    for command in (["distribute"], ["sweep"], ["box", "repo-a"]):
        assert run_cli(*command).code == 0, command
        assert _state_files(m1nd_home) == before, command


def test_a_new_letter_after_quiet_runs_is_still_filed_and_its_state_kept(make_repo, m1nd_home, spool_path):
    root = make_repo("repo-a")
    assert run_cli("roster", "add", str(root)).code == 0
    write_spool(spool_path, [_letter(1)])
    assert run_cli("distribute").code == 0
    assert run_cli("distribute").code == 0
    before = _state_files(m1nd_home)
    write_spool(spool_path, [_letter(2)])
    done = run_cli("distribute", "--json")
    assert done.code == 0 and done.json["appended"] == 1, done
    assert _state_files(m1nd_home) != before
    assert len((root / ".m1nd" / "inbox.jsonl").read_bytes().splitlines()) == 2
