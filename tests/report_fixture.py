"""A fixture mailbox for report rendering tests: two repositories, the fates and
worked-example spools, a letter whose text tries markup, one that waits."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.conftest import FIXTURES, git_init, run_cli, write_spool


def build(tmp_path: Path, spool_path: Path) -> dict:
    for name in ("repo-a", "repo-b"):
        repo = git_init(tmp_path / "src" / name)
        assert run_cli("roster", "add", str(repo)).code == 0
    spool_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "fates.jsonl", spool_path)
    with open(spool_path, "ab") as fh:
        fh.write((FIXTURES / "worked-example.jsonl").read_bytes())
    write_spool(spool_path, [
        {"ts": "2026-05-01T11:30:00Z", "agent": "agent-c", "class": "bug", "repo": "repo-b", "tool": "render",
         "what": "<script>alert(1)</script> | **bold** & \x1b[31mred\x1b[0m\nsecond line"},
        {"ts": "2026-05-01T11:45:00Z", "agent": "agent-c", "class": "bug", "repo": "repo-z", "tool": "seek",
         "what": "a letter for a repository this machine does not have"},
    ])
    # filed at 12:00Z: distribution records what it reads in the coverage ledger then
    before, os.environ["M1ND_NOW"] = os.environ.get("M1ND_NOW"), "2026-05-01T12:00:00Z"
    try:
        assert run_cli("distribute").code in (0, 1)
    finally:
        if before is None:
            del os.environ["M1ND_NOW"]
        else:
            os.environ["M1ND_NOW"] = before
    assert run_cli("report", "alert", "--now", "2026-05-01T12:00:00Z").code == 0
    r = run_cli("report", "prepare", "--json", "--now", "2026-05-01T14:00:00Z")
    assert r.code == 0, r.stderr
    return r.json
