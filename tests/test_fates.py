"""Fates from the reply graph (contract section 5) and their configuration."""

from __future__ import annotations

import orjson
import pytest

from conftest import write_spool
from m1nd.fates import (
    DEFAULT_FOREIGN_MARKERS,
    EXTERNAL,
    FIRED_CLAY,
    IN_FLIGHT,
    WET_INK,
    count_states,
    is_receipt,
    reply_graph,
)
from m1nd.letters import parse


def letter(**fields):
    raw = orjson.dumps(fields)
    parsed = parse(raw)
    assert parsed is not None
    return parsed


def states(letters, markers=DEFAULT_FOREIGN_MARKERS):
    graph = reply_graph(letters, markers)
    return {l.what: graph.state(l) for l in letters}


# --- receipts ----------------------------------------------------------------------


@pytest.mark.parametrize("klass", ["triage", "TRIAGE", "Triage", "tRiAgE"])
def test_class_triage_in_any_ascii_case_is_a_receipt(klass):
    assert is_receipt(letter(**{"class": klass}))


@pytest.mark.parametrize("klass", ["", "triaged", " triage", "triage ", "tri age", "pickup", "triage (done)",
                                   "\u0442riage"])
def test_other_classes_are_not_receipts(klass):
    assert not is_receipt(letter(**{"class": klass}))


def test_a_receipt_closes_the_letters_it_answers():
    a, b = letter(what="a"), letter(what="b")
    receipt = letter(what="r", answers=[a.id], **{"class": "TRIAGE"})
    assert states([a, b, receipt]) == {"a": FIRED_CLAY, "b": WET_INK, "r": WET_INK}


def test_a_non_receipt_answering_letters_picks_them_up():
    a, b = letter(what="a"), letter(what="b")
    pickup = letter(what="p", answers=[a.id, b.id], **{"class": "pickup"})
    plain = letter(what="q", answers=[a.id])  # no class at all is a non-receipt too
    assert states([a, b, pickup, plain]) == {"a": IN_FLIGHT, "b": IN_FLIGHT, "p": WET_INK, "q": WET_INK}


def test_closed_wins_over_picked_up():
    a = letter(what="a")
    pickup = letter(what="p", answers=[a.id], **{"class": "pickup"})
    receipt = letter(what="r", answers=[a.id], **{"class": "triage"})
    assert states([receipt, a, pickup])["a"] == FIRED_CLAY


def test_answers_naming_unknown_ids_change_nothing_and_ids_match_exactly():
    a = letter(what="a")
    receipt = letter(what="r", answers=[a.id.upper(), "ffffffffffff"], **{"class": "triage"})
    assert states([a, receipt])["a"] == WET_INK


# --- external ----------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["context7", "Context7 MCP", "mcp__browseros__click", "PLAYWRIGHT",
                                  "run semgrep --config auto", "x-playwright-y"])
def test_a_tool_containing_a_default_foreign_marker_is_external(tool):
    assert states([letter(what="a", tool=tool)])["a"] == EXTERNAL


@pytest.mark.parametrize("tool", ["", "pytest", "play wright", "context 7", "semgre"])
def test_a_tool_without_a_marker_is_not_external(tool):
    assert states([letter(what="a", tool=tool)])["a"] == WET_INK


def test_external_wins_over_closed_and_picked_up():
    a = letter(what="a", tool="context7")
    b = letter(what="b", tool="semgrep")
    receipt = letter(what="r", answers=[a.id], **{"class": "triage"})
    pickup = letter(what="p", answers=[b.id])
    assert states([a, b, receipt, pickup]) == {"a": EXTERNAL, "b": EXTERNAL, "r": WET_INK, "p": WET_INK}


def test_markers_are_matched_in_lowercase_whatever_case_they_are_given_in():
    a = letter(what="a", tool="the acme linter")
    assert states([a], markers=("ACME",))["a"] == EXTERNAL


def test_the_default_foreign_markers_are_the_four_the_contract_names():
    assert set(DEFAULT_FOREIGN_MARKERS) == {"context7", "browseros", "playwright", "semgrep"}


# --- answered_by -------------------------------------------------------------------


def test_answered_by_lists_answering_ids_ascending_once_per_occurrence():
    a = letter(what="a")
    others = [letter(what=f"x{i}", answers=[a.id]) for i in range(6)]
    twice = letter(what="twice", answers=[a.id, a.id], **{"class": "triage"})
    graph = reply_graph([a, twice, *others])
    expected = sorted([o.id for o in others] + [twice.id, twice.id])
    assert graph.answers_to(a.id) == expected
    assert graph.answers_to(twice.id) == []


def test_answered_by_includes_receipts_pickups_and_external_letters():
    a = letter(what="a")
    r = letter(what="r", answers=[a.id], **{"class": "triage"})
    p = letter(what="p", answers=[a.id], **{"class": "pickup"})
    e = letter(what="e", answers=[a.id], tool="playwright")
    assert reply_graph([a, r, p, e]).answers_to(a.id) == sorted([r.id, p.id, e.id])


def test_counts_add_open_as_wet_ink_plus_in_flight():
    counts = count_states([WET_INK, WET_INK, IN_FLIGHT, FIRED_CLAY, EXTERNAL, EXTERNAL])
    assert counts == {"wet_ink": 2, "in_flight": 1, "fired_clay": 1, "external": 2, "open": 3}


# --- through the sweep document --------------------------------------------------------


def sweep_letters(cli, *args):
    result = cli("--inbox-sweep", "--no-distribute", *args)
    assert result.code == 0, result.stderr
    return result.json


def test_the_sweep_derives_every_fate_from_the_union(cli, spool_path):
    a = orjson.dumps({"repo": "all", "what": "a"})
    b = orjson.dumps({"repo": "all", "what": "b"})
    c = orjson.dumps({"repo": "all", "what": "c", "tool": "Semgrep"})
    d = orjson.dumps({"repo": "all", "what": "d"})
    ids = {k: parse(v).id for k, v in dict(a=a, b=b, c=c, d=d).items()}
    r = orjson.dumps({"repo": "all", "class": "Triage", "what": "r", "answers": [ids["a"], ids["c"]]})
    p = orjson.dumps({"repo": "all", "class": "pickup", "what": "p", "answers": [ids["b"], ids["a"]]})
    write_spool(spool_path, [a, b, c, d, r, p])
    doc = sweep_letters(cli)
    by_what = {l["what"]: l for l in doc["letters"]}
    assert {w: l["state"] for w, l in by_what.items()} == {
        "a": "fired_clay", "b": "in_flight", "c": "external", "d": "wet_ink", "r": "wet_ink", "p": "wet_ink"}
    assert by_what["a"]["answered_by"] == sorted([parse(r).id, parse(p).id])
    assert by_what["b"]["answered_by"] == [parse(p).id]
    assert doc["open"] == 4  # b (in flight), d, r, p


def test_a_receipt_in_one_box_closes_a_letter_in_another_in_the_sweep_but_not_in_the_box_view(
    cli, spool_path, make_repo
):
    a_repo = make_repo("repo-a")
    a = orjson.dumps({"repo": "repo-a", "what": "a"})
    r = orjson.dumps({"repo": "all", "class": "triage", "what": "r", "answers": [parse(a).id]})
    write_spool(spool_path, [a, r])
    assert cli("distribute", "--root", str(a_repo)).code == 0
    doc = cli("--inbox-sweep", "--root", str(a_repo)).json
    assert {l["what"]: l["state"] for l in doc["letters"]}["a"] == "fired_clay"
    view = cli("box", "repo-a", "--json", "--root", str(a_repo)).json
    assert [(l["what"], l["state"], l["answered_by"]) for l in view["letters"]] == [("a", "wet_ink", [])]
    assert view["counts"]["open"] == 1


def test_mission_letters_neither_show_nor_answer(cli, spool_path):
    a = orjson.dumps({"repo": "all", "what": "a"})
    mission = orjson.dumps({"repo": "all", "kind": "mission", "class": "triage", "what": "m",
                            "answers": [parse(a).id]})
    write_spool(spool_path, [a, mission])
    doc = sweep_letters(cli)
    assert [(l["what"], l["state"], l["answered_by"]) for l in doc["letters"]] == [("a", "wet_ink", [])]


def test_misdelivery_counts_letters_whose_class_is_exactly_memory_misdelivery(cli, spool_path):
    write_spool(spool_path, [
        {"repo": "all", "class": "memory_misdelivery", "what": "1"},
        {"repo": "all", "class": "Memory_Misdelivery", "what": "2"},
        {"repo": "all", "class": "memory_misdelivery ", "what": "3"},
        {"repo": "all", "class": "memory_misdelivery", "kind": "mission", "what": "4"},
    ])
    assert sweep_letters(cli)["misdelivery"] == 1


# --- configuration --------------------------------------------------------------------


def write_config(m1nd_home, text: str) -> None:
    m1nd_home.mkdir(parents=True, exist_ok=True)
    (m1nd_home / "config.toml").write_text(text)


def test_config_foreign_markers_replace_the_defaults(cli, spool_path, m1nd_home):
    write_config(m1nd_home, '[mailbox]\nforeign_markers = ["Acme", "lint-bot"]\n')
    write_spool(spool_path, [
        {"repo": "all", "what": "acme", "tool": "acme-scanner"},
        {"repo": "all", "what": "bot", "tool": "LINT-BOT v2"},
        {"repo": "all", "what": "c7", "tool": "context7"},
    ])
    states_by_what = {l["what"]: l["state"] for l in sweep_letters(cli)["letters"]}
    assert states_by_what == {"acme": "external", "bot": "external", "c7": "wet_ink"}


def test_an_empty_marker_list_makes_nothing_external(cli, spool_path, m1nd_home):
    write_config(m1nd_home, "[mailbox]\nforeign_markers = []\n")
    write_spool(spool_path, [{"repo": "all", "what": "c7", "tool": "context7"}])
    assert [l["state"] for l in sweep_letters(cli)["letters"]] == ["wet_ink"]


def test_a_config_without_markers_keeps_the_defaults(cli, spool_path, m1nd_home):
    write_config(m1nd_home, "[mailbox]\n\n[other]\nx = 1\n")
    write_spool(spool_path, [{"repo": "all", "what": "c7", "tool": "context7"}])
    assert [l["state"] for l in sweep_letters(cli)["letters"]] == ["external"]


def test_config_markers_also_govern_the_box_view(cli, spool_path, m1nd_home):
    write_config(m1nd_home, '[mailbox]\nforeign_markers = ["acme"]\n')
    write_spool(spool_path, [{"repo": "all", "what": "a", "tool": "acme"}])
    assert cli("distribute").code == 0
    view = cli("box", "medulla", "--json").json
    assert view["counts"]["external"] == 1 and view["counts"]["open"] == 0


@pytest.mark.parametrize("text", [
    "[mailbox]\nforeign_markers = \"acme\"\n",
    "[mailbox]\nforeign_markers = [1]\n",
    "[mailbox]\nforeign_markers = [\"\"]\n",
    "[mailbox\nforeign_markers = []\n",
])
def test_a_bad_config_fails_closed_with_exit_1_and_writes_nothing(cli, spool_path, m1nd_home, text):
    write_config(m1nd_home, text)
    write_spool(spool_path, [{"repo": "all", "what": "a"}])
    result = cli("--inbox-sweep")
    assert result.code == 1
    assert "config.toml" in (result.stdout + result.stderr)
    assert not (m1nd_home / "inbox.jsonl").exists()
