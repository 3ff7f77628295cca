"""A root whose path is not UTF-8 (a real directory named with a byte 0xff): no command
fails with `TypeError: str is not valid UTF-8`, a traceback or an internal error.  m1nd
keeps its records in UTF-8 JSON; such a path is spelled with `\\xNN` escapes there, and
what cannot be done at all (a grant, a reply naming that box) is one clear error line.
"""

from __future__ import annotations

import os
import subprocess

import httpx
import orjson
import pytest

from m1nd.letters import letter_id
from tests.conftest import run_cli, write_spool

BAD = ("TypeError", "Traceback", "internal error", "not valid UTF-8: surrogates")


@pytest.fixture
def root(tmp_path, spool_path):
    """A git repository at src/repo-<0xff>, its box holding letters a teammate committed."""
    path = os.fsdecode(os.fsencode(str(tmp_path / "src")) + b"/repo-\xff")
    os.makedirs(path)
    subprocess.run(["git", "init", "-q", "-b", "main", path], check=True)
    letter = orjson.dumps({"ts": "2026-05-03T08:00:00Z", "agent": "agent-b", "class": "memory_misdelivery",
                           "repo": "elsewhere", "what": "from a teammate"})
    receipt = orjson.dumps({"ts": "2026-05-03T08:30:00Z", "class": "triage", "repo": "elsewhere", "what": "fixed",
                            "answers": [letter_id(letter)], "disposition": "fixed", "fingerprint": "fp:seek/crash",
                            "sentinel": {"probe": "true", "expect": "absent"}})
    write_spool(__import__("pathlib").Path(path) / ".m1nd" / "inbox.jsonl", [letter, receipt])
    write_spool(spool_path, [{"ts": "2026-05-03T07:00:00Z", "class": "bug", "repo": "repo-b", "what": "waits"}])
    return path, letter_id(letter), letter_id(receipt)


def _clean(r, where, codes=(0,)):
    text = r.stdout + r.stderr
    assert not any(b in text for b in BAD), (where, text[-1500:])
    assert r.code in codes, (where, r.code, text[-1500:])


COMMANDS = [["distribute"], ["sweep", "--state", "all"], ["sweep", "--json"], ["--inbox-sweep"], ["doctor"],
            ["doctor", "--json"], ["cases"], ["cases", "--json"], ["cases", "claims"], ["sentinels", "run"],
            ["sentinels", "run", "--json"], ["report", "--to", "DIR", "--now", "2026-05-03T22:00:00Z"],
            ["report", "alert", "--now", "2026-05-03T14:00:00Z", "--json"], ["distribute", "--json"]]


@pytest.mark.parametrize("how", ["--root", "bound"])
def test_no_command_fails_over_a_root_whose_path_is_not_utf8(root, tmp_path, how):
    path, lid, rid = root
    for args in COMMANDS:
        args = [str(tmp_path / "reports") if a == "DIR" else a for a in args]
        if how == "--root" and args[0] not in ("--inbox-sweep", "report"):
            r = run_cli(*args, "--root", path)
        else:
            r = run_cli(*args, cwd=path if how == "bound" else None)
        _clean(r, args, codes=(0, 1) if args[0] == "sentinels" else (0,))
    for args in (["show", lid], ["show", lid, "--json"], ["cases", "explain", lid]):
        _clean(run_cli(*args, cwd=path), args)
    for args in (["box"], ["box", "--json"]):
        _clean(run_cli(*args, cwd=path), args)
    # What cannot be done: one clear line, exit 1, naming the path with its escape.
    for args in (["sentinels", "allow", rid], ["answer", lid, "--what", "seen"]):
        r = run_cli(*args, cwd=path)
        _clean(r, args, codes=(1,))
        assert "repo-\\xff" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    hook = subprocess.run([__import__("sys").executable, "-m", "m1nd", "hook", "run", "post-checkout"],
                          cwd=os.fsencode(path), capture_output=True,
                          env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__))))
    assert hook.returncode == 0 and not any(b.encode() in hook.stderr + hook.stdout for b in BAD), hook.stderr


def test_every_serve_page_answers_over_a_root_whose_path_is_not_utf8(root):
    from tests.serve.servekit import Server

    path, lid, _ = root
    with Server(cwd=os.fsencode(path)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for route in ["/", "/?state=all", "/?box=repo-%FF", "/cases", "/reports", f"/letters/{lid}", f"/api/letters/{lid}",
                          "/api/mailbox", "/api/doctor", "/api/cases", "/api/reports", "/api/health"]:
                got = client.get(route)
                assert got.status_code == 200, (route, got.status_code, server.stderr()[-800:])
    assert not any(b in server.stderr() for b in BAD), server.stderr()
