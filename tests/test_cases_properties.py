"""The recompute-is-identical property (cases.md: an overlay, never a store): for any
corpus, any order of arrival (spool or box, in any chunks) and the derived state
deleted at any point, `m1nd cases --json` is what a first run over the final letters
prints."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli
from m1nd import jsonout
from m1nd.cases.escalation import overlay_of
from m1nd.cases.source import open_cases
from m1nd.letters import letter_id
from m1nd.run import open_run

TOOLS = ("north", "North (memory beat)", "north(recall)", "seek", "Seek (index)", "store")
CLASSES = ("bug", "honesty", "memory_misdelivery", "note", "bug")
KINDS = (None, "false_absence", "crash", "wrong_route", "vanished", "leak", "misattribution", "flaky", "mission")
WHATS = ("memory came back empty", "nothing found", "a plain note", "Traceback (most recent call last)")
TS = ("2026-05-01T09:00:00Z", "2026-05-01T10:00:00Z", "2026-05-02T09:00:00Z")
FPS = ("fp:north/false_absence", "fp:seek/crash", "fp:store/wrong_route", "fp:nope/other")


@st.composite
def corpora(draw):
    letters: list[bytes] = []
    for n in range(draw(st.integers(1, 14))):
        if letters and draw(st.integers(0, 3)) == 0:  # a receipt (or an escalation) for earlier letters
            answers = sorted({letter_id(letters[i]) for i in draw(st.lists(st.integers(0, len(letters) - 1),
                                                                           max_size=3))})
            fields = {"ts": draw(st.sampled_from(TS)), "agent": draw(st.sampled_from(("agent-a", "m1nd:engine"))),
                      "class": draw(st.sampled_from(("triage", "Triage"))), "repo": "repo-a", "what": f"r{n}",
                      "answers": answers, "fingerprint": draw(st.sampled_from(FPS))}
            disposition = draw(st.sampled_from((None, "fixed", "declined", "moot")))
            if disposition:
                fields["disposition"] = disposition
        else:
            fields = {"ts": draw(st.sampled_from(TS)), "agent": "agent-b", "class": draw(st.sampled_from(CLASSES)),
                      "repo": "repo-a", "tool": draw(st.sampled_from(TOOLS)), "what": draw(st.sampled_from(WHATS)) +
                      f" {n}"}
            kind = draw(st.sampled_from(KINDS))
            if kind:
                fields["kind"] = kind
        letters.append(orjson.dumps(fields))
    if draw(st.booleans()):
        letters.append(letters[0])  # the same letter twice (one letter, counted once)
    return letters


def doc_of(home: str, spool: str, root: str) -> bytes:
    run = open_run(home=home, spool=spool, extra_roots=[root])
    with open_cases(run) as cases:
        return jsonout.dumps(overlay_of(cases).as_json())


def workspace(base: str):
    home, root = os.path.join(base, "home"), os.path.join(base, "repo-a")
    os.makedirs(os.path.join(root, ".m1nd"))
    subprocess.run(["git", "init", "-q", root], check=True)
    os.makedirs(home)
    return home, os.path.join(home, "field-reports.jsonl"), root


def append(path: str, raws: list[bytes]) -> None:
    with open(path, "ab") as fh:
        for raw in raws:
            fh.write(raw + b"\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), letters=corpora())
def test_any_order_any_chunks_state_deleted_anywhere_gives_the_first_run_document(data, letters):
    arrival = data.draw(st.permutations(range(len(letters))))
    where = [data.draw(st.sampled_from(("spool", "box", "both"))) for _ in letters]
    base = tempfile.mkdtemp(prefix="cases-prop-")
    try:
        ref_home, ref_spool, ref_root = workspace(os.path.join(base, "reference"))
        home, spool, root = workspace(os.path.join(base, "replay"))
        box = os.path.join(root, ".m1nd", "inbox.jsonl")
        ref_box = os.path.join(ref_root, ".m1nd", "inbox.jsonl")
        for i in arrival:
            if where[i] in ("spool", "both"):
                append(spool, [letters[i]])
            if where[i] in ("box", "both"):
                append(box, [letters[i]])
            if data.draw(st.booleans(), label="read now"):
                if data.draw(st.booleans(), label="delete the state first"):
                    shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
                doc_of(home, spool, root)
        if os.path.exists(box) and data.draw(st.booleans(), label="a box replaced by git"):  # a refold
            lines = [l for l in open(box, "rb").read().split(b"\n") if l]
            with open(box, "wb") as fh:
                fh.write(b"".join(l + b"\n" for l in reversed(lines)))
        for i in range(len(letters)):  # the reference: every letter there before the first read
            if where[i] in ("spool", "both"):
                append(ref_spool, [letters[i]])
            if where[i] in ("box", "both"):
                append(ref_box, [letters[i]])
        expected = doc_of(ref_home, ref_spool, ref_root)
        assert doc_of(home, spool, root) == expected
        shutil.rmtree(os.path.join(home, "state"))
        assert doc_of(home, spool, root) == expected
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_cases_json_after_deleting_every_derived_file_is_byte_identical(tmp_path, spool_path, m1nd_home):
    from conftest import FIXTURES

    repo = tmp_path / "repo-a"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    spool_path.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "cases-replay.jsonl", spool_path)
    assert run_cli("distribute", "--root", str(repo)).code == 0
    first = run_cli("cases", "--json", "--root", str(repo)).stdout
    shutil.rmtree(m1nd_home / "state")
    assert run_cli("cases", "--json", "--root", str(repo)).stdout == first
    assert run_cli("distribute", "--root", str(repo)).code == 0  # nothing new to escalate
    assert run_cli("cases", "--json", "--root", str(repo)).stdout == first


def test_a_read_folds_only_the_letters_indexed_since_the_last(tmp_path, monkeypatch):
    from m1nd.cases import fold as foldmod

    home, spool, root = workspace(str(tmp_path / "w"))
    w = [orjson.dumps({"ts": TS[0], "class": "bug", "kind": "crash", "repo": "repo-a", "tool": "seek",
                       "what": f"w{i}"}) for i in range(5)]
    append(spool, w[:4])
    first = doc_of(home, spool, root)
    calls = []
    real = foldmod.Fold.add
    monkeypatch.setattr(foldmod.Fold, "add", lambda self, row: (calls.append(row.id), real(self, row)))
    assert doc_of(home, spool, root) == first and calls == []  # nothing new: nothing folded
    append(spool, [w[4]])
    doc = orjson.loads(doc_of(home, spool, root))
    assert calls == [letter_id(w[4])]
    assert len(doc["fingerprints"][0]["witnesses"]) == 5
