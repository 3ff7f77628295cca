"""Letters that arrive by git (a pull brings another machine's box lines) are
reported after the pull that brought them, exactly once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson

from tests.conftest import write_spool


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_letters_pulled_by_git_land_in_the_next_report_once(cli, tmp_path, spool_path, m1nd_home):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    other = tmp_path / "other" / "repo-a"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True, capture_output=True)
    (other / ".m1nd").mkdir()
    box = other / ".m1nd" / "inbox.jsonl"
    write_spool(box, [{"ts": "2026-05-01T08:00:00Z", "repo": "repo-a", "what": "from the other machine"}])
    git("add", ".m1nd/inbox.jsonl", cwd=other)
    git("commit", "-qm", "box", cwd=other)
    git("push", "-q", "origin", "HEAD:main", cwd=other)

    mine = tmp_path / "src" / "repo-a"
    subprocess.run(["git", "clone", "-q", str(remote), str(mine)], check=True, capture_output=True)
    assert cli("roster", "add", str(mine)).code == 0
    write_spool(spool_path, [{"ts": "2026-05-01T09:00:00Z", "repo": "repo-a", "what": "written here"}])
    assert cli("report", "--now", "2026-05-01T12:00:00Z").code == 0  # first report starts the cursor
    r = cli("report", "--json", "--now", "2026-05-01T21:05:00Z")
    assert r.json["prepared"]["entries"] == 2  # both were seen at 12:00, before 21:00

    write_spool(box, [{"ts": "2026-05-01T22:00:00Z", "repo": "repo-a", "what": "pulled later"}])
    git("commit", "-qam", "more", cwd=other)
    git("push", "-q", "origin", "HEAD:main", cwd=other)
    git("pull", "-q", "--ff-only", cwd=mine)
    assert cli("report", "alert", "--now", "2026-05-02T10:00:00Z").code == 0  # a read after the pull
    r = cli("report", "--json", "--now", "2026-05-02T13:30:00Z")
    entries = r.json["prepared"]["entries"]
    assert entries == 1
    md = sorted((m1nd_home / "reports").glob("*.md"))
    texts = "".join(p.read_text() for p in md)
    assert texts.count("pulled later") == 1 and texts.count("from the other machine") == 1
    assert texts.count("written here") == 1
    assert subprocess.run(["git", "status", "--porcelain"], cwd=mine, capture_output=True, text=True).stdout == ""
