"""The witness index that escalation decides from (m1nd/cases/witnesses.py), kept as
letters arrive, decides what the read model's fold over the same files decides: for
any arrival order (spool, box, both), updates at any point, the state deleted at any
point, a box rewritten or replaced by git, and a process killed mid-update."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from m1nd.cases.escalation import overlay_of
from m1nd.cases.source import open_cases
from m1nd.cases.witnesses import Index
from m1nd.run import open_run
from test_cases_properties import append, corpora, workspace

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def from_index(home: str, spool: str, root: str) -> dict:
    """{fingerprint: (witness ids in order, label of the box holding the second)} for
    every fingerprint that needs an escalation, as the index says after an update."""
    run = open_run(home=home, spool=spool, extra_roots=[root])
    with Index(run) as index:
        index.update()
        return {e.fingerprint: ([w.id for w in e.witnesses],
                                getattr(index.box_of(e.witnesses[1].digest), "label", None))
                for e in index.unescalated()}


def from_files(base: str, spool: str, root: str) -> dict:
    """The same decision from the files alone: a read model built from nothing."""
    home = tempfile.mkdtemp(prefix="ref-home-", dir=base)
    try:
        run = open_run(home=home, spool=spool, extra_roots=[root])
        with open_cases(run, write=False) as cases:
            return {e.fingerprint: ([w.id for w in e.witnesses],
                                    getattr(cases.box_of(e.witnesses[1].digest), "label", None))
                    for e in overlay_of(cases).entries if len(e.witnesses) >= 2 and not e.escalations}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def lines_of(path: str) -> list[bytes]:
    with open(path, "rb") as fh:
        return [line for line in fh.read().split(b"\n") if line]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), letters=corpora())
def test_the_index_decides_what_a_build_from_the_files_decides(data, letters):
    arrival = data.draw(st.permutations(range(len(letters))))
    base = tempfile.mkdtemp(prefix="witness-prop-")
    try:
        home, spool, root = workspace(os.path.join(base, "w"))
        box = os.path.join(root, ".m1nd", "inbox.jsonl")
        for i in arrival:
            where = data.draw(st.sampled_from(("spool", "box", "both")))
            if where in ("spool", "both"):
                append(spool, [letters[i]])
            if where in ("box", "both"):
                append(box, [letters[i]])
            if data.draw(st.booleans(), label="update now"):
                if data.draw(st.booleans(), label="delete the state first"):
                    shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
                assert from_index(home, spool, root) == from_files(base, spool, root)
        if os.path.exists(box):
            change = data.draw(st.sampled_from(("none", "rewrite in place", "replace with fewer", "delete")))
            lines = lines_of(box)
            if change == "rewrite in place":  # same size, same inode: only the checksums tell
                with open(box, "r+b") as fh:  # another order, and crash witnesses are now kindless
                    fh.write(b"".join(line + b"\n" for line in reversed(lines)).replace(b'"crash"', b'"flaky"'))
            elif change == "replace with fewer":  # an older checkout: a new file
                os.unlink(box)
                append(box, lines[: data.draw(st.integers(0, len(lines)))])
            elif change == "delete":
                os.unlink(box)
        assert from_index(home, spool, root) == from_files(base, spool, root)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_torn_last_line_is_looked_at_again_once_it_is_whole(tmp_path):
    home, spool, root = workspace(str(tmp_path / "w"))
    w1 = orjson.dumps({"ts": "2026-05-01T09:00:00Z", "class": "bug", "kind": "crash", "repo": "repo-a",
                       "tool": "seek", "what": "one"})
    w2 = orjson.dumps({"ts": "2026-05-01T10:00:00Z", "class": "bug", "kind": "crash", "repo": "repo-a",
                       "tool": "seek", "what": "two"})
    append(spool, [w1])
    with open(spool, "ab") as fh:
        fh.write(w2[:20])  # a writer mid-append
    assert from_index(home, spool, root) == {}
    with open(spool, "ab") as fh:
        fh.write(w2[20:] + b"\n")
    assert from_index(home, spool, root) == from_files(str(tmp_path), spool, root)
    assert list(from_index(home, spool, root)) == ["fp:seek/crash"]


UPDATE = """
import sys
from m1nd.cases.witnesses import Index
from m1nd.run import open_run
with Index(open_run(home=sys.argv[1], spool=sys.argv[2], extra_roots=[sys.argv[3]])) as index:
    print("started", flush=True)
    index.update()
"""


def test_an_update_killed_mid_way_is_repaired_by_the_next(tmp_path):
    home, spool, root = workspace(str(tmp_path / "w"))
    box = os.path.join(root, ".m1nd", "inbox.jsonl")
    # Enough witnesses that an update takes a while; fingerprints of one or two witnesses.
    lines = [orjson.dumps({"ts": f"2026-05-01T{(i // 60) % 24:02d}:{i % 60:02d}:00Z", "class": "bug",
                           "kind": "crash", "repo": "repo-a", "tool": f"tool-{i // 2}", "what": f"w{i}"})
             for i in range(60_000)]
    append(spool, lines[::2])
    append(box, lines[1::2])
    env = dict(os.environ, PYTHONPATH=ROOT_DIR)
    for delay in (0.05, 0.3, 1.0):
        proc = subprocess.Popen([sys.executable, "-c", UPDATE, home, spool, root], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.readline()  # the index is open: the update is under way
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    expected = from_files(str(tmp_path), spool, root)
    assert len(expected) == 30_000
    assert from_index(home, spool, root) == expected
