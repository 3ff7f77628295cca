"""Letters whose `answers` name thousands of ids (any strings a pushed box can hold):
the reply graph keeps only the ids that name letters, indexing and the documents
work in bounded pieces, and every view still equals the view from the files alone."""

from __future__ import annotations

import hashlib
import io
import os
import random
import subprocess
import sys

import orjson
import pytest

from m1nd import jsonout
from m1nd.readmodel import open_model
from m1nd.run import open_run
from m1nd.sweep import sweep, write_document


def fake_ids(rng: random.Random, n: int) -> list[str]:
    return ["%012x" % rng.getrandbits(48) for _ in range(n)]


def open_home(home):
    return open_run(home=str(home), spool=str(home / "field-reports.jsonl"), cwd=str(home))


def test_answers_naming_no_letter_stay_out_of_the_graph_and_a_letter_that_arrives_later_gets_its_fate(tmp_path):
    rng = random.Random(5)
    home = tmp_path / "home"
    home.mkdir()
    spool = home / "field-reports.jsonl"
    late = orjson.dumps({"ts": "2026-03-02T10:00:00Z", "agent": "agent-b", "class": "BUG", "what": "arrives late"})
    late_id = hashlib.sha256(late).hexdigest()[:12]
    first = orjson.dumps({"ts": "2026-03-01T10:00:00Z", "agent": "agent-a", "class": "BUG", "what": "a letter"})
    first_id = hashlib.sha256(first).hexdigest()[:12]
    lines = [first]
    for i in range(40):
        answers = fake_ids(rng, 300) + ([first_id] if i == 4 else []) + ([late_id] if i == 7 else [])
        answers += ["", "NOT-AN-ID", first_id.upper(), "\u2028" * 3]
        lines.append(orjson.dumps({"ts": f"2026-03-01T11:{i:02d}:00Z", "agent": "agent-c",
                                   "class": "triage" if i % 2 else "pickup", "what": f"reply {i}",
                                   "answers": answers}))
    spool.write_bytes(b"".join(line + b"\n" for line in lines))

    def check(expect_late: bool):
        run = open_home(home)
        model = open_model(run)
        try:
            graph = model._whole_graph()
            named = set(graph.answered_by)
            assert named == ({first_id, late_id} if expect_late else {first_id})
            assert graph.closed | graph.picked_up == named
            out = io.BytesIO()
            write_document(run, model, None, out)
        finally:
            model.close()
        assert out.getvalue() == jsonout.dumps(sweep(run, distribute_first=False).doc)
        return {v["id"]: v for v in orjson.loads(out.getvalue())["letters"]}

    views = check(expect_late=False)
    assert views[first_id]["state"] == "in_flight" and len(views[first_id]["answered_by"]) == 1
    with open(spool, "ab") as fh:  # the letter that reply 7 answered arrives after it
        fh.write(late + b"\n")
    views = check(expect_late=True)
    assert views[late_id]["state"] == "fired_clay" and len(views[late_id]["answered_by"]) == 1


PEAK = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(proc.pid, 0)
err = proc.stderr.read().decode(errors="replace")
code = os.waitstatus_to_exitcode(status)
print(usage.ru_maxrss // 1024, code, err.strip().replace("\\n", " | ")[-300:])
"""


def peak_mb(home, *args) -> int:
    env = dict(os.environ, M1ND_HOME=str(home), M1ND_SPOOL=str(home / "field-reports.jsonl"), HOME=str(home),
               NO_COLOR="1")
    out = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "m1nd", *args], env=env, cwd=str(home),
                         capture_output=True, text=True, timeout=900).stdout.split(" ", 2)
    assert out[1] == "0", out
    return int(out[0])


@pytest.mark.slow
def test_a_spool_of_letters_naming_a_million_ids_keeps_every_read_within_bounded_memory(tmp_path):
    """600 letters, each naming 2,000 ids no letter has (about 20 MB of answers): the
    reply graph held every one of them (a sweep took 690 MB for 5,000 such letters).
    The first build stays under the 300 MB every command keeps to (its caches are
    bounded, not the input), and each later read within 100 MB of the same letters
    naming nothing (SQLite's page cache fills on the hostile home, not on the other)."""
    rng = random.Random(9)
    hostile, plain = tmp_path / "hostile", tmp_path / "plain"
    for home, answers in ((hostile, 2000), (plain, 0)):
        home.mkdir()
        with open(home / "field-reports.jsonl", "wb") as fh:
            for i in range(600):
                letter = {"ts": "2026-03-01T10:00:00Z", "agent": "agent-a", "class": "triage" if i % 2 else "pickup",
                          "what": f"reply {i}", "answers": fake_ids(rng, answers) if answers else []}
                fh.write(orjson.dumps(letter) + b"\n")
    assert peak_mb(hostile, "sweep") < 300  # distributes, builds the read model, counts every box
    assert peak_mb(plain, "sweep") < 300
    for args in (["--inbox-sweep", "--no-distribute"], ["sweep", "--no-distribute", "--state", "all"],
                 ["box", "medulla", "--json"]):
        assert peak_mb(hostile, *args) - peak_mb(plain, *args) < 100, args
