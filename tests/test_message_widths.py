"""The reworded messages, as a person reads them at 60, 80 and 120 columns: an
ambiguous label (both paths, the right fix), letters for an unknown repository, and
doctor's checks laid out for the width there is (never a squeezed column)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import run_cli


def scrub(text: str, tmp_path) -> str:
    for p in sorted({str(tmp_path), os.path.realpath(tmp_path)}, key=len, reverse=True):
        text = text.replace(p, "<tmp>")
    return text


@pytest.fixture
def troubled(monkeypatch):
    # A short directory of a fixed length, so that lines wrap the same on every machine.
    tmp_path = Path(tempfile.mkdtemp(prefix="w", dir="/tmp"))
    monkeypatch.setenv("M1ND_HOME", str(tmp_path / "home"))
    a, b = tmp_path / "src" / "dup", tmp_path / "other" / "dup"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    run_cli("roster", "add", str(a))
    run_cli("roster", "add", str(b))
    run_cli("write", "--repo", "dup", "--what", "for the shared label")
    run_cli("write", "--repo", "repo-c", "--what", "for a repository this machine lacks")
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_doctor_and_sweep_messages_at_each_width(troubled, monkeypatch, snapshot, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    doctor = run_cli("doctor")
    assert doctor.code == 0
    assert all(len(line) <= columns for line in doctor.stdout.splitlines()), doctor.stdout
    sweep = run_cli("sweep", "--no-distribute", "--no-pager")
    assert scrub(doctor.stdout, troubled) == snapshot(name="doctor")
    assert scrub(sweep.stderr, troubled) == snapshot(name="sweep-stderr")
