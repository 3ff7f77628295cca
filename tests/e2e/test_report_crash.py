"""Crash at any point of a report run, then the same command again: nothing lost,
nothing reported twice.  Real processes killed with SIGKILL at named points."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import write_spool

POINTS = ["prepare-after-observe", "freeze-page", "freeze-before-manifest", "prepare-after-freeze",
          "commit-before-write", "commit-after-write", "deliver-dir-mid", "deliver-before-receipt"]


def m1nd(*args, env=None, crash=None, now="2026-05-01T14:00:00Z"):
    e = dict(os.environ, M1ND_NOW=now)
    e.pop("M1ND_TEST_CRASH", None)
    if crash:
        e["M1ND_TEST_CRASH"] = crash
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "m1nd", *args], env=e, capture_output=True, timeout=120)


def delivered_ids(out: Path) -> list[str]:
    ids = []
    for md in sorted(out.glob("*.md")):
        ids += [line.split("`")[3] for line in md.read_text().splitlines() if line.startswith("- `")]
    return ids


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_a_kill_at_any_point_then_a_rerun_loses_nothing_and_repeats_nothing(point, spool_path, tmp_path):
    out = tmp_path / "out"
    write_spool(spool_path, [{"ts": f"2026-05-01T0{i}:00:00Z", "what": f"w{i}", "repo": "all"} for i in range(5)])
    assert m1nd("report", "alert", now="2026-05-01T12:00:00Z").returncode == 0  # observed before 13:00Z
    crashed = m1nd("report", "--to", str(out), crash=point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    rerun = m1nd("report", "--to", str(out))
    assert rerun.returncode == 0, rerun.stderr
    again = m1nd("report", "--to", str(out), now="2026-05-01T15:00:00Z")
    assert b"nothing due" in again.stdout
    ids = delivered_ids(out)
    assert len(ids) == 5 and len(set(ids)) == 5
    status = orjson.loads(m1nd("report", "status", "--json").stdout)["profiles"]["twice-daily"]
    assert status["cursor"] == "2026-05-01T13:00:00Z" and status["outbox"] == []
    assert len(status["receipts"]) == 1


@pytest.mark.slow
def test_a_kill_during_a_command_sink_delivery_redelivers_with_the_same_key(spool_path, tmp_path):
    write_spool(spool_path, [{"ts": "2026-05-01T01:00:00Z", "what": "x", "repo": "all"}])
    m1nd("report", "alert", now="2026-05-01T12:00:00Z")
    log = tmp_path / "log"
    sink = f"exec:echo \"$M1ND_REPORT_KEY\" >> {log}"
    assert m1nd("report", "--to", sink, crash="deliver-before-receipt").returncode == -signal.SIGKILL
    assert m1nd("report", "--to", sink).returncode == 0
    keys = log.read_text().split()
    assert len(keys) == 2 and keys[0] == keys[1]  # the receiver can drop the repeat by its key
    assert m1nd("report", "deliver", "--to", sink).returncode == 0
    assert len(log.read_text().split()) == 2


@pytest.mark.slow
def test_two_report_runs_at_once_exclude_each_other(spool_path, tmp_path):
    write_spool(spool_path, [{"ts": "2026-05-01T01:00:00Z", "what": f"c{i}", "repo": "all"} for i in range(50)])
    m1nd("report", "alert", now="2026-05-01T12:00:00Z")
    out = tmp_path / "out"
    env = dict(os.environ, M1ND_NOW="2026-05-01T14:00:00Z")
    procs = [subprocess.Popen([sys.executable, "-m", "m1nd", "report", "--to", str(out)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    for p in procs:
        p.communicate(timeout=120)
        assert p.returncode == 0
    ids = delivered_ids(out)
    assert len(ids) == 50 and len(set(ids)) == 50
