"""`m1nd demo`: a throwaway workspace, real commands, and nothing of the caller's touched."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, _tree_state, run_script


@pytest.fixture
def caller(tmp_path, monkeypatch):
    """The caller's environment: a HOME with a file in it, an M1ND_HOME that does not
    exist, a spool variable pointing at a file that does not exist, and a private TMPDIR
    so the demo's workspace can be found (and its removal checked)."""
    home = Path(os.environ["HOME"])
    (home / "keep.txt").write_text("the caller's file\n")
    m1nd_home = tmp_path / "caller-m1nd-home"
    monkeypatch.setenv("M1ND_HOME", str(m1nd_home))
    monkeypatch.setenv("M1ND_SPOOL", str(tmp_path / "caller-spool.jsonl"))
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    return {"home": home, "m1nd_home": m1nd_home, "tmpdir": tmpdir, "spool": tmp_path / "caller-spool.jsonl",
            "cwd": Path.cwd()}


def expected_command_lines(out: str) -> list[str]:
    from m1nd.demo import STEPS

    ids = re.findall(r"^([0-9a-f]{12})$", out, re.M)
    return [step.shown({"seek": ids[0]}) for step in STEPS]


def test_demo_runs_every_step_and_shows_each_command(caller):
    home_before = _tree_state(caller["home"])
    cwd_before = _tree_state(caller["cwd"])
    done = run_script("demo", cwd=caller["cwd"])
    out = done.stdout.decode()
    assert done.returncode == 0, (out, done.stderr.decode())
    assert "step failed" not in out

    # Each command it runs is shown as a `$ m1nd …` line, in order.
    shown = [line for line in out.splitlines() if line.startswith("$ ")]
    assert shown == expected_command_lines(out)
    for needed in ("sweep", "distribute", "box", "doctor", "write", "roster add", "show", "pickup", "answer",
                   "init", "hooks install"):
        assert any(re.search(rf"m1nd {needed}\b", line) for line in shown), needed

    # The whole story fits an 80-column terminal (the comments and the views), and
    # every new word first appears on a comment line that explains it.
    lines = out.splitlines()
    comments = [line for line in lines if line.startswith("# ") and not line.startswith("# A throwaway")]
    assert all(len(line) <= 80 for line in comments), [line for line in comments if len(line) > 80]
    for command in ("$ m1nd sweep", "$ m1nd box repo-a --state all"):  # (show prints whole fields, paths too)
        at = next(i for i, line in enumerate(lines) if line.startswith(command))
        view = lines[at + 1: next(j for j in range(at + 1, len(lines)) if lines[j].startswith(("$ ", "# ")))]
        assert view and all(len(line) <= 80 for line in view), (command, [l for l in view if len(l) > 80])
    for word in ("root", "spool", "box", "medulla", "fate", "in flight", "receipt", "external", "misdelivered",
                 "waiting to be filed", "consent", "held", "kindless", "fingerprint"):
        first = next(line for line in lines if word in line.lower())
        assert first.startswith("# "), (word, first)
    # It ends with the way to start for real.
    assert "What next: your own repository in five minutes" in out and "m1nd init" in out.split("What next")[1]
    assert "kindless letters: letters with no symptom kind" in out  # every word the demo uses is explained

    # The commands really ran: their output follows.
    assert re.search(r"\b[0-9a-f]{12}\b", out), "write prints the new letter's id"
    assert "letters in the spool" in out  # the distribute receipt
    assert "Box " in out and "box repo-a" in out  # sweep and box
    assert "mailbox:" in out  # doctor

    # Nothing of the caller's was touched.
    assert not caller["m1nd_home"].exists()
    assert not caller["spool"].exists()
    assert _tree_state(caller["home"]) == home_before
    assert _tree_state(caller["cwd"]) == cwd_before
    # The workspace is thrown away.
    assert list(caller["tmpdir"].iterdir()) == []


def test_demo_keep_leaves_the_workspace_and_says_where(caller):
    done = run_script("demo", "--keep", cwd=caller["cwd"])
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    kept = [p for p in caller["tmpdir"].iterdir()]
    assert len(kept) == 1
    workspace = kept[0]
    try:
        assert str(workspace.resolve()) in out
        # The demo's own home holds the demo's spool: the shipped fixture plus two letters.
        spool = workspace / "home" / "field-reports.jsonl"
        assert spool.read_bytes().startswith((FIXTURES / "worked-example.jsonl").read_bytes())
        assert (workspace / "repo-a" / ".m1nd" / "inbox.jsonl").exists()
        assert not caller["m1nd_home"].exists()
    finally:
        shutil.rmtree(workspace)


def test_demo_uses_the_worked_example_unchanged():
    """The demo depends on the shipped fixture: its five letters and their ids."""
    lines = (FIXTURES / "worked-example.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 6
    assert [hashlib.sha256(line).hexdigest()[:12] for line in lines[:-1]] == [
        "89a55a8758cb", "3a9cdb587d79", "232d8e3f0c2e", "5f5a51bd048f", "0b99a99db016",
    ]


def test_demo_has_help():
    done = run_script("demo", "--help")
    assert done.returncode == 0
    assert b"--keep" in done.stdout
