"""Case intelligence (cases.md): fingerprints, cases, escalation, claims, abandonment,
over the replay corpus `fixtures/spools/cases-replay.jsonl` and small hand-made spools."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from conftest import FIXTURES, run_cli, write_spool
from m1nd.cases import fingerprints as fps
from m1nd.letters import letter_id, parse

# Ids of the replay corpus (fixtures/spools/README.md describes each line).
TRILOGY = ("bcba5c2af929", "52848fe70344", "400b6793694c")
FIXED_RECEIPT = "9d215a3bfcce"
DECLINED_RECEIPT = "32f1564e71c5"
MOOT_RECEIPT = "c314e347f515"
STORE_PAIR = ("47df569a5b56", "e631534cacdb")
KINDLESS = ("b55f88b12a82", "841c2cc38df8", "5fa6c9be31e3", "f6afce34029f")


def letter(**fields) -> bytes:
    if "klass" in fields:
        fields["class"] = fields.pop("klass")
    return orjson.dumps(fields)


def L(**fields):
    return parse(letter(**fields))


@pytest.fixture
def ws(tmp_path, m1nd_home, spool_path):
    """repo-a and repo-b in the roster, the replay corpus in the spool."""
    src = Path(os.environ["HOME"]) / "src"
    for name in ("repo-a", "repo-b"):
        (src / name).mkdir(parents=True)
        os.system(f"git init -q {src / name}")
        assert run_cli("roster", "add", str(src / name)).code == 0
    spool_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "cases-replay.jsonl", spool_path)
    return src


def box_lines(path: Path) -> list[bytes]:
    return [l for l in path.read_bytes().split(b"\n") if l] if path.exists() else []


def engine_lines(path: Path) -> list[dict]:
    return [o for o in map(orjson.loads, box_lines(path)) if o.get("agent") == "m1nd:engine"]


# -- fingerprints -------------------------------------------------------------------

def test_tool_family_cuts_at_the_paren_trims_and_lowercases_without_fuzz():
    assert fps.tool_family("north (memory beat)") == "north"
    assert fps.tool_family("  North(recall) ") == "north"
    assert fps.tool_family("NORTH") == "north"
    assert fps.tool_family("north-beat") == "north-beat"  # no fuzzy matching
    assert fps.tool_family("") == ""


def test_the_vocabulary_is_closed_at_eight_with_no_other():
    assert len(fps.VOCABULARY) == 8 and "other" not in fps.VOCABULARY
    assert fps.derive(L(tool="seek", kind="other", what="x")).fingerprint is None


@pytest.mark.parametrize("kind,mapped", [("false_absence", "false_absence"), ("vanished", "false_absence"),
                                         ("leak", "scope_escape"), ("wrong_store_write", "wrong_route"),
                                         ("misattribution", "wrong_route")])
def test_every_misdelivery_kind_maps_as_the_contract_says(kind, mapped):
    d = fps.derive(L(klass="memory_misdelivery", kind=kind, tool="Recall (shared)", what="x"))
    assert d.fingerprint == f"fp:recall/{mapped}"
    assert d.source == ("kind" if kind == "false_absence" else "misdelivery")


def test_an_unmapped_misdelivery_kind_is_kindless_and_says_why():
    d = fps.derive(L(klass="memory_misdelivery", kind="duplicated", tool="recall", what="twice"))
    assert d.fingerprint is None and d.source == "none" and "mapping" in d.why


def test_the_own_kind_wins_over_the_mapping_and_the_rules():
    d = fps.derive(L(klass="honesty", kind="crash", tool="north", what="memory empty"))
    assert (d.fingerprint, d.source) == ("fp:north/crash", "kind")


@pytest.mark.parametrize("what", ["memory recall came back empty", "no memories found for the key",
                                  "Memories: nothing here", "the memory store says not found"])
def test_backfill_north_memory_emptiness_matches(what):
    d = fps.derive(L(klass="honesty", tool="north (beat)", what=what))
    assert (d.fingerprint, d.source) == ("fp:north/false_absence", "north-memory-emptiness")


@pytest.mark.parametrize("fields", [
    {"klass": "bug", "tool": "north", "what": "memory came back empty"},  # not honesty
    {"klass": "honesty", "tool": "northern", "what": "memory came back empty"},  # another family
    {"klass": "honesty", "tool": "north", "what": "the branch list came back empty"},  # no memory
    {"klass": "honesty", "tool": "north", "what": "memory recall returned a stale note"},  # no emptiness
    {"klass": "honesty", "tool": "north", "what": "the memory knows nothingness"},  # whole words only
])
def test_backfill_north_memory_emptiness_does_not_guess(fields):
    assert fps.derive(L(**fields)).fingerprint is None


def test_backfill_traceback_crash_reads_what_and_snippet():
    d = fps.derive(L(klass="bug", tool="index", what="died", snippet="Traceback (most recent call last):\n x"))
    assert (d.fingerprint, d.source) == ("fp:index/crash", "traceback-crash")
    assert fps.derive(L(klass="note", tool="index", what="Traceback (most recent call last)")).fingerprint is None


def test_every_backfill_rule_has_a_name_a_kind_of_the_eight_and_words():
    names = [r.name for r in fps.BACKFILL_RULES]
    assert len(names) == len(set(names)) and all(r.kind in fps.KINDS and r.says for r in fps.BACKFILL_RULES)
    assert not set(names) & {"kind", "misdelivery", "none"}


def test_missions_and_receipts_are_never_witnesses():
    assert fps.witness_refusal(L(kind="mission", tool="north", what="x"))
    assert fps.witness_refusal(L(klass="TRIAGE", kind="crash", tool="north", what="x"))
    assert fps.witness_refusal(L(klass="bug", kind="crash", tool="north", what="x")) is None


# -- m1nd cases over the replay corpus ------------------------------------------------

def test_the_trilogy_is_one_fingerprint_with_three_witnesses_across_tool_spellings(ws):
    r = run_cli("cases", "--json")
    assert r.code == 0, r.stderr
    doc = r.json
    assert set(doc) == {"fingerprints", "kindless"}
    north = [f for f in doc["fingerprints"] if f["fingerprint"] == "fp:north/false_absence"]
    assert north == [{"fingerprint": "fp:north/false_absence", "witnesses": sorted(TRILOGY), "escalation": None,
                      "case": {"receipt": FIXED_RECEIPT, "disposition": "fixed", "state": "answered",
                               "sentinel": "not_allowed"}}]


def test_cases_json_shape_order_and_kindless_count(ws):
    doc = run_cli("cases", "--json").json
    names = [f["fingerprint"] for f in doc["fingerprints"]]
    assert names == sorted(names)
    for f in doc["fingerprints"]:
        assert set(f) == {"fingerprint", "witnesses", "escalation", "case"}
        assert f["witnesses"] == sorted(f["witnesses"])
    assert doc["kindless"] == len(KINDLESS)
    cases = {f["fingerprint"]: f["case"] for f in doc["fingerprints"] if f["case"]}
    assert cases["fp:recall/scope_escape"] == {"receipt": DECLINED_RECEIPT, "disposition": "declined",
                                                "state": "answered", "sentinel": None}
    assert cases["fp:build/overclaimed_verdict"]["disposition"] == "moot"
    assert len(cases) == 3


def test_cases_is_read_only_for_boxes_and_the_spool(ws, spool_path, m1nd_home):
    before = spool_path.read_bytes()
    assert run_cli("cases").code == 0
    assert spool_path.read_bytes() == before
    assert not (ws / "repo-a" / ".m1nd").exists() and not (m1nd_home / "inbox.jsonl").exists()
    # reads may record first-seen letters in the coverage ledger (mailbox.md 6), and
    # nothing else: no case record, no allowlist, no sentinel run
    records = m1nd_home / "records"
    assert not records.exists() or sorted(p.name for p in records.iterdir() if not p.name.startswith(".")) \
        in ([], ["ledger.jsonl"])


def test_cases_human_view_prints_the_receipt_line_and_the_kindless_count(ws):
    r = run_cli("cases")
    assert r.code == 0
    assert "case fp:north/false_absence — 3 witnesses: fixed, sentinel not allowed here" in r.stdout
    assert "4 kindless letters" in r.stdout


def test_cases_filters_and_limit(ws):
    out = run_cli("cases", "--tool", "North").stdout
    assert "fp:north/false_absence" in out and "fp:store/" not in out and "1 shown" in out
    out = run_cli("cases", "--state", "none", "--kind", "wrong_route").stdout
    assert "fp:store/wrong_route — 2 witnesses" in out and "case " not in out.split("\n")[0]
    out = run_cli("cases", "--limit", "1").stdout
    assert "… and 6 more fingerprints (--limit 0 shows all)" in out
    assert run_cli("cases", "--state", "bogus").code == 2


def test_letter_text_is_never_markup_or_terminal_control(tmp_path, spool_path):
    write_spool(spool_path, [
        {"ts": "2026-05-01T09:00:00Z", "class": "bug", "kind": "crash", "repo": "all",
         "tool": "[bold]x\x1b[31m\nnext", "what": "a"},
        {"ts": "2026-05-01T09:01:00Z", "class": "bug", "kind": "crash", "repo": "all",
         "tool": "[bold]x\x1b[31m\nnext", "what": "b"},
    ])
    out = run_cli("cases").stdout
    assert "fp:[bold]x\\x1b[31m⏎next/crash — 2 witnesses" in out
    assert "\x1b" not in out


def test_a_case_stays_open_while_a_witness_is_open(spool_path):
    w1 = letter(ts="2026-05-01T09:00:00Z", klass="bug", kind="crash", repo="all", tool="seek", what="one")
    w2 = letter(ts="2026-05-01T09:05:00Z", klass="bug", kind="crash", repo="all", tool="seek", what="two")
    receipt = letter(ts="2026-05-02T09:00:00Z", klass="triage", repo="all", what="fixed", answers=[letter_id(w1)],
                     disposition="fixed", fingerprint="fp:seek/crash")
    write_spool(spool_path, [w1, w2, receipt])
    case = run_cli("cases", "--json").json["fingerprints"][0]["case"]
    assert case["state"] == "open" and case["sentinel"] is None
    write_spool(spool_path, [letter(ts="2026-05-02T10:00:00Z", klass="triage", repo="all", what="also",
                                    answers=[letter_id(w2)])])
    assert run_cli("cases", "--json").json["fingerprints"][0]["case"]["state"] == "answered"


def test_explain_names_the_rule_or_why_there_is_none(ws):
    doc = run_cli("cases", "explain", TRILOGY[0], "--json").json
    assert doc == {"id": TRILOGY[0], "fingerprint": "fp:north/false_absence", "source": "north-memory-emptiness"}
    assert run_cli("cases", "explain", TRILOGY[1], "--json").json["source"] == "kind"
    assert run_cli("cases", "explain", TRILOGY[2][:6], "--json").json["source"] == "misdelivery"
    assert run_cli("cases", "explain", "0215625e65cb", "--json").json["source"] == "traceback-crash"
    for kindless in KINDLESS:
        assert run_cli("cases", "explain", kindless, "--json").json == {"id": kindless, "fingerprint": None,
                                                                          "source": "none"}
    human = run_cli("cases", "explain", KINDLESS[1]).stdout
    assert "'flaky' is not one of the eight" in human
    receipt = run_cli("cases", "explain", FIXED_RECEIPT).stdout
    assert "never witnesses" in receipt and "names: fp:north/false_absence" in receipt


def test_explain_errors(ws):
    assert run_cli("cases", "explain", "zz").code == 2
    assert run_cli("cases", "explain", "ffffffffffff").code == 3
    r = run_cli("cases", "explain", "ffffffffffff", "--json")
    assert r.code == 3 and r.json["error"]["code"] == 3


def test_doctor_has_a_cases_check_with_the_same_counts(ws):
    doc = run_cli("doctor", "--json").json
    check = [c for c in doc["checks"] if c["name"] == "cases"]
    assert len(check) == 1 and check[0]["status"] == "ok"
    assert check[0]["message"].startswith("7 fingerprints (2 with two witnesses or more, 0 escalated); 3 cases")
    assert "4 kindless letters" in check[0]["message"]


# -- escalation ---------------------------------------------------------------------

def test_distribute_files_one_escalation_into_the_second_witness_box(ws):
    assert run_cli("distribute").code == 0
    a = engine_lines(ws / "repo-a" / ".m1nd" / "inbox.jsonl")
    b = engine_lines(ws / "repo-b" / ".m1nd" / "inbox.jsonl")
    north = [e for e in a if e["fingerprint"] == "fp:north/false_absence"]
    store = [e for e in b if e["fingerprint"] == "fp:store/wrong_route"]
    assert len(north) == 1 and len(store) == 1 and len(a) + len(b) == 2
    e = north[0]
    assert list(e) == ["ts", "agent", "class", "kind", "repo", "what", "fingerprint"]
    assert (e["agent"], e["class"], e["kind"], e["ts"], e["repo"]) == (
        "m1nd:engine", "triage", "false_absence", "2026-05-01T10:00:00Z", "repo-a")
    assert TRILOGY[0] in e["what"] and TRILOGY[1] in e["what"] and TRILOGY[2] not in e["what"]
    assert "answers" not in e  # an escalation closes nothing
    doc = run_cli("cases", "--json").json
    by = {f["fingerprint"]: f for f in doc["fingerprints"]}
    assert by["fp:store/wrong_route"]["escalation"] is not None
    assert by["fp:north/false_absence"]["case"]["state"] == "answered"
    assert doc["kindless"] == 4  # escalations are never witnesses, nor kindless


def test_escalation_is_exactly_once_across_runs_and_commands(ws):
    for args in (("distribute",), ("sweep",), ("sweep", "--json"), ("distribute",)):
        assert run_cli(*args).code == 0
    a = box_lines(ws / "repo-a" / ".m1nd" / "inbox.jsonl")
    assert len([l for l in a if b'"m1nd:engine"' in l]) == 1
    assert len(a) == len(set(a))


def test_read_only_commands_never_escalate(ws, m1nd_home):
    assert run_cli("distribute").code == 0
    box = ws / "repo-b" / ".m1nd" / "inbox.jsonl"
    # a new second witness arrives in the spool; only a filing command escalates it
    write_spool(m1nd_home / "field-reports.jsonl", [
        letter(ts="2026-05-04T09:00:00Z", klass="bug", kind="crash", repo="repo-b", tool="seek", what="one"),
        letter(ts="2026-05-04T09:01:00Z", klass="bug", kind="crash", repo="repo-b", tool="seek", what="two")])
    before = box.read_bytes()
    for args in (("sweep", "--no-distribute"), ("--inbox-sweep", "--no-distribute"), ("cases",), ("doctor",),
                 ("cases", "claims")):
        run_cli(*args)
        assert box.read_bytes() == before, args
    assert run_cli("distribute").code == 0
    assert len([e for e in engine_lines(box) if e["fingerprint"] == "fp:seek/crash"]) == 1


def test_an_escalation_waits_while_its_second_witness_waits(tmp_path, spool_path):
    write_spool(spool_path, [
        letter(ts="2026-05-01T09:00:00Z", klass="bug", kind="crash", repo="repo-z", tool="seek", what="one"),
        letter(ts="2026-05-01T09:01:00Z", klass="bug", kind="crash", repo="repo-z", tool="seek", what="two")])
    assert run_cli("distribute").code == 0
    doc = run_cli("cases", "--json").json
    assert doc["fingerprints"][0]["escalation"] is None and len(doc["fingerprints"][0]["witnesses"]) == 2
    assert spool_path.read_bytes().count(b"\n") == 2  # never into the spool


def test_two_homes_mint_byte_identical_escalations(tmp_path, monkeypatch):
    boxes = []
    for name in ("one", "two"):
        home = tmp_path / f"home-{name}"
        repo = tmp_path / f"machine-{name}" / "repo-a"
        repo.mkdir(parents=True)
        os.system(f"git init -q {repo}")
        monkeypatch.setenv("M1ND_HOME", str(home))
        (home).mkdir()
        shutil.copy(FIXTURES / "cases-replay.jsonl", home / "field-reports.jsonl")
        assert run_cli("distribute", "--root", str(repo)).code == 0
        boxes.append([l for l in box_lines(repo / ".m1nd" / "inbox.jsonl") if b"m1nd:engine" in l])
    assert boxes[0] and boxes[0] == boxes[1]


# -- claims -------------------------------------------------------------------------

def test_claims_counts_per_family_and_kind(ws):
    doc = run_cli("cases", "claims", "--json").json
    assert doc == {"claims": [
        {"tool_family": "build", "symptom_kind": "overclaimed_verdict", "wrong": 0, "right": 1, "unresolved": 0,
         "total": 1},
        {"tool_family": "index", "symptom_kind": "stale_claim", "wrong": 0, "right": 0, "unresolved": 1, "total": 1},
        {"tool_family": "north", "symptom_kind": "false_absence", "wrong": 1, "right": 0, "unresolved": 0,
         "total": 1},
    ]}


def test_claims_export_appends_only_new_rows(ws, tmp_path, spool_path):
    out = tmp_path / "field-labels.jsonl"
    assert run_cli("cases", "claims", "--export", str(out)).code == 0
    rows = [orjson.loads(l) for l in box_lines(out)]
    assert [list(r) for r in rows] == [["ts", "signal", "fingerprint", "letter_id", "receipt_id", "label"]] * 3
    assert {r["label"] for r in rows} == {"wrong", "right", "unresolved"}
    first = out.read_bytes()
    assert run_cli("cases", "claims", "--export", str(out)).code == 0
    assert out.read_bytes() == first
    # the unresolved claim gets a receipt: one new row, the old ones untouched
    write_spool(spool_path, [letter(ts="2026-05-03T09:00:00Z", klass="triage", repo="repo-b", what="index fixed",
                                    answers=["905075d664da"], disposition="fixed", fingerprint="fp:index/stale_claim")])
    assert run_cli("cases", "claims", "--export", str(out)).code == 0
    data = out.read_bytes()
    assert data.startswith(first) and len(box_lines(out)) == 4
    assert orjson.loads(box_lines(out)[-1])["label"] == "wrong"


def test_claims_export_survives_an_unreadable_line_and_refuses_a_directory(ws, tmp_path):
    out = tmp_path / "labels.jsonl"
    out.write_bytes(b"not json\n")
    r = run_cli("cases", "claims", "--export", str(out))
    assert r.code == 0 and "1 unreadable line" in r.stderr and len(box_lines(out)) == 4
    r = run_cli("cases", "claims", "--export", str(tmp_path))
    assert r.code == 1 and "Is a directory" in r.stderr and "Traceback" not in r.stderr


# -- abandonment --------------------------------------------------------------------

def test_abandonment_files_once_per_session_into_the_right_box(ws, m1nd_home):
    trace = FIXTURES / "cases-trace.jsonl"
    r = run_cli("cases", "abandonment", "--trace", str(trace), "--json")
    assert r.code == 0, r.stderr
    assert r.json["sessions"] == 4 and len(r.json["filed"]) == 2
    assert "line 7 unreadable" in r.stderr
    medulla = engine_lines(m1nd_home / "inbox.jsonl")
    repo_a = engine_lines(ws / "repo-a" / ".m1nd" / "inbox.jsonl")
    assert [e["what"] for e in medulla] == ["abandonment: session s-1 stopped after seek find returned error"]
    assert [e["what"] for e in repo_a] == ["abandonment: session s-3 stopped after north beat returned wrong"]
    assert (repo_a[0]["class"], repo_a[0]["kind"], repo_a[0]["tool"]) == ("honesty", "overclaimed_verdict", "north")
    again = run_cli("cases", "abandonment", "--trace", str(trace), "--json")
    assert again.json == r.json
    assert len(engine_lines(m1nd_home / "inbox.jsonl")) == 1
    doc = run_cli("cases", "--json").json
    assert any(f["fingerprint"] == "fp:north/overclaimed_verdict" and f["witnesses"] == [letter_id(
        box_lines(ws / "repo-a" / ".m1nd" / "inbox.jsonl")[-1])] for f in doc["fingerprints"])


def test_the_same_trace_without_the_stop_files_nothing(tmp_path, m1nd_home):
    trace = tmp_path / "t.jsonl"
    lines = [l for l in (FIXTURES / "cases-trace.jsonl").read_bytes().split(b"\n") if l and b'"stop"' not in l]
    trace.write_bytes(b"\n".join(lines) + b"\n")
    r = run_cli("cases", "abandonment", "--trace", str(trace), "--json")
    assert r.code == 0 and r.json["filed"] == [] and not (m1nd_home / "inbox.jsonl").exists()


def test_abandonment_bad_trace_paths(tmp_path):
    assert run_cli("cases", "abandonment", "--trace", str(tmp_path / "none.jsonl")).code == 3
    r = run_cli("cases", "abandonment", "--trace", str(tmp_path))
    assert r.code == 1 and "Is a directory" in r.stderr
    assert run_cli("cases", "abandonment").code == 2


def test_the_readme_cases_walkthrough_prints_what_it_says(ws, spool_path):
    import re

    from conftest import FIXTURES as _  # noqa: F401 (the corpus is already in the spool)

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = text[text.index("## Cases"):]
    block = re.search(r"```console\n(.*?)```", block, re.S)[1]
    steps = re.split(r"^\$ ", block, flags=re.M)[1:]
    checked = 0
    for step in steps:
        command, _, expected = step.partition("\n")
        argv = command.split("#")[0].split()
        if argv[:1] != ["m1nd"] or "&&" in argv:
            continue  # the workspace steps: the ws fixture did them
        r = run_cli(*argv[1:])
        assert r.code == 0, (command, r.stderr)
        assert r.stdout == expected, command
        checked += 1
    assert checked == 4


def test_cases_with_nothing_anywhere_creates_nothing(m1nd_home):
    r = run_cli("cases", "--json")
    assert r.code == 0 and r.json == {"fingerprints": [], "kindless": 0}
    assert run_cli("sentinels", "run", "--json").json["guarded"] == 0
    assert not m1nd_home.exists()


def test_an_unreadable_spool_is_one_line_or_the_error_document(spool_path):
    spool_path.mkdir(parents=True)
    r = run_cli("cases")
    assert r.code == 1 and r.stderr.count("\n") == 1 and "cannot read spool" in r.stderr
    r = run_cli("cases", "--json")
    assert r.code == 1 and r.json["error"]["code"] == 1


def indexed_letters(db: Path) -> int:
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM letters").fetchone()[0]
    finally:
        con.close()


def test_a_filing_escalates_without_building_the_read_model(ws, m1nd_home, spool_path):
    assert run_cli("distribute").code == 0  # the replay corpus: two fingerprints escalate
    db = m1nd_home / "state" / "readmodel.sqlite3"
    assert len(engine_lines(ws / "repo-b" / ".m1nd" / "inbox.jsonl")) >= 1
    assert indexed_letters(db) == 0  # only the witness index was kept, no letter indexed
    write_spool(spool_path, [letter(ts="2026-05-04T09:00:00Z", klass="note", repo="repo-a", tool="north",
                                    what="a plain note about memory")])
    assert run_cli("distribute").code == 0
    assert indexed_letters(db) == 0
    # a witness spelled with JSON escapes is still seen: the next filing escalates it
    w1 = b'{"ts":"2026-05-04T10:00:00Z","class":"bug","kind":"\\u0063rash","repo":"repo-a","tool":"seek","what":"1"}'
    w2 = b'{"ts":"2026-05-04T10:05:00Z","class":"bug","kind":"crash","repo":"repo-a","tool":"Seek","what":"2"}'
    write_spool(spool_path, [w1])
    assert run_cli("distribute").code == 0
    write_spool(spool_path, [w2])
    assert run_cli("distribute").code == 0
    escalations = [e for e in engine_lines(ws / "repo-a" / ".m1nd" / "inbox.jsonl")
                   if e["fingerprint"] == "fp:seek/crash"]
    assert len(escalations) == 1 and letter_id(w1) in escalations[0]["what"]


def test_a_box_replaced_by_git_is_looked_at_again(ws, m1nd_home):
    assert run_cli("distribute").code == 0
    box = ws / "repo-b" / ".m1nd" / "inbox.jsonl"
    kept = [l for l in box_lines(box) if b"m1nd:engine" not in l]
    box.unlink()
    box.write_bytes(b"".join(l + b"\n" for l in kept))  # an older checkout: the escalation is gone
    assert run_cli("distribute").code == 0
    assert len([e for e in engine_lines(box) if e["fingerprint"] == "fp:store/wrong_route"]) == 1


def test_a_waiting_escalation_is_filed_once_its_second_witness_is_filed(ws, spool_path):
    w1 = letter(ts="2026-05-04T09:00:00Z", klass="bug", kind="crash", repo="repo-a", tool="seek", what="one")
    w2 = letter(ts="2026-05-04T09:05:00Z", klass="bug", kind="crash", repo="repo-c", tool="seek", what="two")
    write_spool(spool_path, [w1, w2])
    assert run_cli("distribute").code == 0
    assert run_cli("distribute").code == 0
    repo_c = ws / "repo-c"
    repo_c.mkdir()
    os.system(f"git init -q {repo_c}")
    assert run_cli("roster", "add", str(repo_c)).code == 0
    assert run_cli("distribute").code == 0  # w2 is filed into repo-c, and its escalation with it
    found = [e for e in engine_lines(repo_c / ".m1nd" / "inbox.jsonl") if e["fingerprint"] == "fp:seek/crash"]
    assert len(found) == 1 and found[0]["repo"] == "repo-c"


def test_a_tool_whose_name_holds_a_slash_makes_a_fingerprint_every_command_reads(tmp_path, m1nd_home, spool_path):
    """`mcp/north` is a tool family like any other: its fingerprint splits at the last
    `/` (the kind is one word), so filing, cases, claims and the v0 document all run."""
    src = Path(os.environ["HOME"]) / "src" / "repo-a"
    src.mkdir(parents=True)
    os.system(f"git init -q {src}")
    assert run_cli("roster", "add", str(src)).code == 0
    assert fps.split("fp:mcp/north/crash") == ("mcp/north", "crash")
    assert fps.split("fp:mcp/north/not_a_kind") is None
    write_spool(spool_path, [letter(ts=f"2026-05-01T0{i}:00:00Z", agent=f"agent-{i}", klass="bug", repo="repo-a",
                                    tool="mcp/north", kind="crash", what=f"north crashed {i}") for i in (1, 2)]
                + [letter(ts="2026-05-01T03:00:00Z", agent="agent-c", klass="honesty", repo="repo-a", tool="mcp/north",
                          kind="false_absence", what="said empty, was not")])
    for args in (("distribute",), ("cases",), ("cases", "--json"), ("cases", "claims"), ("cases", "claims", "--json"),
                 ("--inbox-sweep",), ("sweep",)):
        r = run_cli(*args)
        assert r.code == 0 and "Error" not in r.stderr, (args, r.stderr)
    cases = run_cli("cases", "--json").json
    assert [f["fingerprint"] for f in cases["fingerprints"]] == ["fp:mcp/north/crash", "fp:mcp/north/false_absence"]
    assert [e for e in engine_lines(src / ".m1nd" / "inbox.jsonl") if e.get("fingerprint") == "fp:mcp/north/crash"]
