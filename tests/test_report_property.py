"""Property: for any interleaving of letters arriving (by the spool and by git),
reads, report runs and crashes, every observed letter lands in exactly one
committed report."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from datetime import datetime, timedelta, timezone

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from m1nd import ledger
from m1nd.reports import faults, store
from m1nd.reports.faults import crash as real_crash

POINTS = ["prepare-after-observe", "freeze-page", "freeze-before-manifest", "prepare-after-freeze",
          "commit-before-write", "commit-after-write", "deliver-dir-mid", "deliver-before-receipt"]
START = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)


class Crash(BaseException):
    """Stands in for SIGKILL in-process: nothing after the point runs."""


actions = st.lists(st.one_of(
    st.tuples(st.just("spool"), st.integers(1, 3)),
    st.tuples(st.just("git"), st.integers(1, 3)),
    st.tuples(st.just("read"), st.just(0)),
    st.tuples(st.just("report"), st.just(0)),
    st.tuples(st.just("crash"), st.sampled_from(POINTS)),
    st.tuples(st.just("wait"), st.integers(1, 20)),  # hours
), max_size=14)


def _run_report(point=None):
    from m1nd.reports.profiles import find_profile
    from m1nd.reports.runner import run_report
    from m1nd.run import open_run

    run = open_run()
    now = datetime.fromisoformat(os.environ["M1ND_NOW"].replace("Z", "+00:00"))

    def crash(name):
        if name == point:
            raise Crash(name)

    import m1nd.reports.deliver as d
    import m1nd.reports.freeze as f

    f.crash = d.crash = crash
    try:
        run_report(run, find_profile(run.paths, None), now, None)
    except Crash:
        pass
    finally:
        f.crash = d.crash = real_crash


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(actions)
def test_every_observed_letter_lands_in_exactly_one_committed_report(steps):
    from m1nd.reports.mailbox import observe
    from m1nd.run import open_run

    base = tempfile.mkdtemp(prefix="m1nd-prop-")
    saved = {k: os.environ.get(k) for k in ("M1ND_HOME", "M1ND_NOW")}
    try:
        home = os.path.join(base, "home")
        repo = os.path.join(base, "repo-a")
        os.makedirs(os.path.join(repo, ".m1nd"))
        subprocess.run(["git", "init", "-q", repo], check=True)
        os.environ["M1ND_HOME"] = home
        os.makedirs(home)
        with open(os.path.join(home, "roster.json"), "wb") as fh:
            fh.write(orjson.dumps({"roots": [repo]}))
        now = START
        counter = 0
        for kind, arg in steps:
            os.environ["M1ND_NOW"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
            if kind in ("spool", "git"):
                target = os.path.join(home, "field-reports.jsonl") if kind == "spool" else \
                    os.path.join(repo, ".m1nd", "inbox.jsonl")
                with open(target, "ab") as fh:
                    for _ in range(arg):
                        counter += 1
                        fh.write(orjson.dumps({"ts": os.environ["M1ND_NOW"], "what": f"n{counter}",
                                               "repo": "repo-a" if counter % 2 else "all"}) + b"\n")
            elif kind == "read":
                observe(open_run(), os.environ["M1ND_NOW"])
            elif kind == "report":
                _run_report()
            elif kind == "crash":
                _run_report(arg)
            else:
                now += timedelta(hours=arg)
        # Then the clock runs on and reports run until nothing is due.
        observe(open_run(), os.environ["M1ND_NOW"])
        for _ in range(3):
            now += timedelta(hours=12)
            os.environ["M1ND_NOW"] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
            _run_report()
        from m1nd.paths import resolve_paths

        paths = resolve_paths()
        observed = set(ledger.load(paths))
        state = store.load_state(paths, "twice-daily")
        assert state.outbox == []
        accounted: list[str] = []  # itemized, or counted as not itemized by a first report
        itemized: list[str] = []
        for run_id in state.committed:
            frozen = store.load_frozen(paths, run_id)
            accounted += frozen.digests
            itemized += [e["digest"] for e in frozen.entries]
            assert len(frozen.digests) == frozen.head["entries"] + frozen.head["not_itemized"]
        assert sorted(accounted) == sorted(observed)  # each exactly once
        assert len(set(itemized)) == len(itemized)
        delivered = [r["run_id"] for r in state.receipts]
        assert sorted(delivered) == sorted(state.committed) and len(set(delivered)) == len(delivered)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(base, ignore_errors=True)
