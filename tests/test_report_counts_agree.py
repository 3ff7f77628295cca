"""Every count a report prints comes from one computation: over random mailboxes the
Markdown table, the `Next:` line, the status outcomes, the HTML chart and the JSON agree
with each other, with the ledger lines and with the fates worked out here from the
letters themselves."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from m1nd.fates import FIRED_CLAY, IN_FLIGHT, WET_INK, is_receipt, reply_graph
from m1nd.letters import parse
from tests.conftest import run_cli

REPOS = ("repo-a", "repo-b", "repo-z")  # repo-z is not on this machine: its letters wait
BEFORE_NINE, AFTER_NINE = "2026-05-01T12:50:00Z", "2026-05-01T13:05:00Z"

letters_st = st.lists(st.tuples(
    st.sampled_from(REPOS),
    st.sampled_from(["bug", "note", "triage", "pickup"]),
    st.lists(st.integers(0, 30), max_size=2),  # which earlier letters it answers
    st.sampled_from([None, "fixed", "declined", "moot"]),
), min_size=1, max_size=14)


def build(spec) -> list[bytes]:
    raws, ids = [], []
    for i, (repo, klass, answers, disposition) in enumerate(spec):
        obj = {"ts": f"2026-05-01T10:{i:02d}:00Z", "agent": "agent-a", "class": klass, "repo": repo,
               "what": f"letter {i}"}
        targets = sorted({ids[a % len(ids)] for a in answers}) if ids and klass in ("triage", "pickup") else []
        if targets:
            obj["answers"] = targets
        if disposition and klass == "triage":
            obj["disposition"] = disposition
        raw = orjson.dumps(obj)
        raws.append(raw)
        ids.append(hashlib.sha256(raw).hexdigest()[:12])
    return raws


def table(md: str) -> dict[str, list[int]]:
    rows = {}
    for line in md.splitlines():
        m = re.match(r"^\| (.+?) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", line)
        if m:
            label = m.group(1).split(" ", 1)[-1] if m.group(1)[0] in "🟦🟪🟩🟧" else m.group(1)
            rows[label] = [int(x) for x in m.groups()[1:]]
    return rows


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(letters_st)
def test_table_next_outcomes_chart_and_json_agree_with_the_ledger_and_the_fates(spec):
    raws = build(spec)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        home = Path(tmp) / "home"
        mp.setenv("M1ND_HOME", str(home))
        home.mkdir()
        for name in ("repo-a", "repo-b"):
            repo = Path(tmp) / "src" / name
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            assert run_cli("roster", "add", str(repo)).code == 0
        (home / "field-reports.jsonl").write_bytes(b"".join(r + b"\n" for r in raws))
        mp.setenv("M1ND_NOW", BEFORE_NINE)
        assert run_cli("distribute").code in (0, 1)
        mp.setenv("M1ND_NOW", AFTER_NINE)
        doc = run_cli("report", "prepare", "--json").json
        md = run_cli("report", "render", doc["run_id"], "--format", "md").stdout
        js = orjson.loads(run_cli("report", "render", doc["run_id"], "--format", "json").stdout)
        html = run_cli("report", "render", doc["run_id"], "--format", "html").stdout

    # The fates, worked out here from the letters.
    letters = [parse(r) for r in raws]
    graph = reply_graph(letters)
    box_of = {"repo-a": "repo-a", "repo-b": "repo-b", "repo-z": "waiting (not filed yet)"}
    expected: dict[str, list[int]] = {}
    for letter in letters:
        row = expected.setdefault(box_of[letter.repo], [0, 0, 0, 0, 0])
        row[0] += 1
        state = graph.state(letter)
        if letter.answers:
            # a reply is work done: never open, never in flight; Answered and External
            # count every letter of the box (a receipt that was itself answered too)
            if state == FIRED_CLAY:
                row[3] += 1
            elif state not in (WET_INK, IN_FLIGHT):
                row[4] += 1
            continue
        row[{WET_INK: 1, IN_FLIGHT: 2, FIRED_CLAY: 3}.get(state, 4)] += 1
    printed = table(md)
    total = printed.pop("Total")
    assert set(expected) <= set(printed)
    for label, row in printed.items():
        assert row == expected.get(label, [0] * 5), label
    assert total == [sum(col) for col in zip(*printed.values())]

    # JSON = the table.
    js_rows = {(r["box"] if r["box"] != "waiting" else "waiting (not filed yet)"):
               [r["new"], r["open"], r["in_flight"], r["answered"], r["external"]] for r in js["summary"]}
    assert {k: v for k, v in js_rows.items() if k in printed} == printed
    assert [js["total"][k] for k in ("new", "open", "in_flight", "answered", "external")] == total

    # Next = the table's totals.
    nxt = next(line for line in md.splitlines() if line.startswith("Next:"))
    if total[1] or total[2]:
        opened = re.search(r"(\d+) open letters?", nxt)
        flying = re.search(r"(\d+) letters? in flight", nxt)
        assert (int(opened.group(1)) if opened else 0) == total[1]
        assert (int(flying.group(1)) if flying else 0) == total[2]
    else:
        assert "open letter" not in nxt and "in flight" not in nxt

    # The ledger lines and the outcomes line = the entries.
    lines = [line for line in md.splitlines() if line.startswith("- `")]
    assert len(lines) == total[0] == len(js["entries"]) == doc["entries"]
    replies = sum(1 for letter in letters if letter.answers)
    outcomes = js["outcomes"]
    assert outcomes.get("receipts", 0) + outcomes.get("pickups", 0) == replies
    assert sum(outcomes.values()) == total[0]
    assert outcomes.get("open", 0) == sum(v[1] for k, v in expected.items() if k != "waiting (not filed yet)")
    assert sum(1 for e in js["entries"] if e["reply"] and e["outcome"] == "open") == 0
    status = next(line for line in md.splitlines() if line.startswith("Outcomes:"))
    assert sum(int(n) for n in re.findall(r"(\d+) [a-z]", status)) == total[0]

    # The chart = New per box.
    chart: dict[str, int] = {}
    for box, n in re.findall(r"<title>([^<:]+): (\d+) new [a-z ]+</title>", html):
        chart[box] = chart.get(box, 0) + int(n)
    for row in js["summary"]:
        assert chart.get(row["box"], 0) == row["new"]
