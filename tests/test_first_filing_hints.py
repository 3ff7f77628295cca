"""A filing hands what it learnt to the step after it (the escalation's witness index,
the coverage ledger) instead of reading the box lines it just appended again.  What
those keep must be what reading the files from nothing gives: the witness index after
a filing equals the index rebuilt from the spool and the boxes, and the ledger (with
its membership index) holds each letter of the union once."""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3

import orjson

from m1nd import ledger
from m1nd.cases.escalation import after_distribution
from m1nd.cases.witnesses import Index
from m1nd.distribute import distribute
from m1nd.letters import load
from m1nd.run import open_run
from test_cases_properties import append, workspace

TOKEN = "ghp_" + "".join(random.Random(3).choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789") for _ in range(36))


def spool_letters(n: int) -> list[bytes]:
    """Witnesses of a few recurring fingerprints (some held, some for a repository
    this machine lacks), replies to earlier letters by id, missions, projectless
    letters, a multi-line traceback, and one letter twice."""
    rng = random.Random(n)
    out: list[bytes] = []
    for i in range(n):
        fields = {"ts": f"2026-05-{1 + i % 28:02d}T{i % 24:02d}:00:00Z", "agent": f"agent-{'ab'[i % 2]}",
                  "class": "bug", "repo": rng.choice(("repo-a", "repo-a", "repo-z", "")),
                  "tool": rng.choice(("seek", "build", "lint")), "what": f"letter {i}"}
        pick = i % 9
        if pick in (0, 1, 2):
            fields["kind"] = rng.choice(("crash", "flaky", "slow"))
        elif pick == 3:
            fields.update(kind="crash", what=f"crashed again, token {TOKEN}")  # held: never a witness
        elif pick == 4 and out:
            earlier = hashlib.sha256(rng.choice(out)).hexdigest()[:12]
            fields.update({"class": "triage", "answers": [earlier]})
        elif pick == 5:
            fields["kind"] = "mission"
        elif pick == 6:
            fields["snippet"] = "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'k'"
        out.append(orjson.dumps(fields))
    out.append(out[0])
    return out


def rows(home: str) -> tuple[list, list]:
    con = sqlite3.connect(os.path.join(home, "state", "readmodel.sqlite3"))
    try:
        letters = sorted(con.execute("SELECT * FROM case_letters"))
        files = sorted(con.execute("SELECT path, size, offset, hashes FROM case_files"))
    finally:
        con.close()
    return letters, files


def file_once(home: str, spool: str, root: str):
    run = open_run(home=home, spool=spool, extra_roots=[root])
    return after_distribution(run, distribute(run))


def rebuilt(home: str, spool: str, root: str) -> tuple[list, list]:
    for name in os.listdir(os.path.join(home, "state")):
        if name.startswith("readmodel.sqlite3"):
            os.unlink(os.path.join(home, "state", name))
    with Index(open_run(home=home, spool=spool, extra_roots=[root])) as index:
        index.update()
    return rows(home)


def test_the_witness_index_after_a_filing_equals_the_index_rebuilt_from_the_files(tmp_path):
    home, spool, root = workspace(str(tmp_path / "w"))
    append(spool, spool_letters(400))
    receipt = file_once(home, spool, root)
    assert receipt.held > 0 and receipt.pending_letters > 0  # the letters held and waiting are there
    assert receipt.handover is None  # the hint is for the step after the filing only
    with Index(open_run(home=home, spool=spool, extra_roots=[root])) as index:
        index.update()  # the escalations the step filed: looked at as any box line
    kept = rows(home)
    assert any(r[3] == "e" for r in kept[0]) and any(r[3] == "w" for r in kept[0])
    assert kept == rebuilt(home, spool, root)


def test_a_second_filing_of_new_letters_keeps_the_index_equal_to_the_rebuilt_one(tmp_path):
    home, spool, root = workspace(str(tmp_path / "w"))
    letters = spool_letters(300)
    append(spool, letters[:150])
    file_once(home, spool, root)
    append(spool, letters[150:])
    with open(os.path.join(root, ".m1nd", "inbox.jsonl"), "ab") as fh:  # a line that came by git
        fh.write(orjson.dumps({"ts": "2026-06-01T00:00:00Z", "class": "bug", "kind": "crash", "repo": "repo-a",
                               "tool": "seek", "what": "from a colleague"}) + b"\n")
    file_once(home, spool, root)
    with Index(open_run(home=home, spool=spool, extra_roots=[root])) as index:
        index.update()
    assert rows(home) == rebuilt(home, spool, root)


def test_the_ledger_holds_each_letter_of_the_union_once_and_its_index_the_sorted_digests(tmp_path):
    home, spool, root = workspace(str(tmp_path / "w"))
    append(spool, spool_letters(300))
    file_once(home, spool, root)
    run = open_run(home=home, spool=spool, extra_roots=[root])
    paths = run.paths
    with open(ledger.ledger_path(paths), "rb") as fh:
        digests = [orjson.loads(line)["digest"] for line in fh]
    union = set()
    for path in [spool] + [box.path for box in run.boxes() if os.path.exists(box.path)]:
        with open(path, "rb") as fh:
            for line in fh.read().split(b"\n"):
                obj = load(line) if line.strip() else None
                if obj is not None and obj.get("kind") != "mission":
                    union.add(hashlib.sha256(line).hexdigest())
    assert len(digests) == len(set(digests)) and set(digests) == union
    with open(os.path.join(home, "state", "ledger-index"), "rb") as fh:
        index = fh.read()  # written by the filing itself, into a ledger that was empty
    covered = int.from_bytes(index[8:16], "little")
    with open(ledger.ledger_path(paths), "rb") as fh:
        head = fh.read(covered)
    assert head.endswith(b"\n")
    indexed = [orjson.loads(line)["digest"] for line in head.splitlines()]
    assert index[ledger._HEAD:] == b"".join(sorted(bytes.fromhex(d) for d in indexed))
    assert ledger._known(paths, digests) == set(digests)  # the index and the lines after it, trusted


def test_a_box_changed_between_the_filing_and_the_step_is_looked_at_as_bytes(tmp_path):
    home, spool, root = workspace(str(tmp_path / "w"))
    append(spool, spool_letters(200))
    run = open_run(home=home, spool=spool, extra_roots=[root])
    receipt = distribute(run)
    assert receipt.handover is not None and receipt.handover.appended  # what the step is handed
    box = os.path.join(root, ".m1nd", "inbox.jsonl")
    with open(box, "r+b") as fh:  # same size, same inode: only the checksum tells
        data = fh.read()
        fh.seek(0)
        fh.write(data.replace(b'"flaky"', b'"crash"'))
    after_distribution(run, receipt)
    with Index(open_run(home=home, spool=spool, extra_roots=[root])) as index:
        index.update()
    assert rows(home) == rebuilt(home, spool, root)
