"""The write path (contract section 9): `m1nd write`, `m1nd pickup`, `m1nd answer`."""

from __future__ import annotations

import hashlib
import os
import stat

import orjson
import pytest

from conftest import FIXED_NOW

ID_A = "0123456789ab"
ID_B = "ba9876543210"


def sha12(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


def spool_lines(spool_path) -> list[bytes]:
    data = spool_path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def only_letter(spool_path) -> dict:
    (line,) = spool_lines(spool_path)
    return orjson.loads(line)


# --- bytes -------------------------------------------------------------------------


def test_write_appends_one_compact_line_in_the_fixed_key_order(cli, spool_path):
    result = cli("write", "--what", "w", "--repo", "repo-a", "--brain", "project:repo-a", "--tool", "pytest",
                 "--class", "bug", "--kind", "note", "--expected", "e", "--snippet", "s",
                 "--answers", ID_A, "--answers", ID_B, "--agent", "agent-b", "--ts", "2026-01-02T03:04:05Z")
    assert result.code == 0, result.stderr
    assert spool_path.read_bytes() == (
        b'{"ts":"2026-01-02T03:04:05Z","agent":"agent-b","class":"bug","kind":"note","repo":"repo-a",'
        b'"brain":"project:repo-a","tool":"pytest","what":"w","expected":"e","snippet":"s",'
        b'"answers":["0123456789ab","ba9876543210"]}\n'
    )


def test_the_same_arguments_in_any_option_order_give_the_same_bytes_and_id(cli, spool_path):
    one = cli("write", "--what", "same", "--repo", "repo-a", "--tool", "t", "--class", "bug")
    two = cli("write", "--class", "bug", "--tool", "t", "--repo", "repo-a", "--what", "same")
    assert one.code == two.code == 0
    first, second = spool_lines(spool_path)
    assert first == second
    assert one.stdout == two.stdout == sha12(first) + "\n"


def test_the_printed_id_is_the_id_of_the_line_written(cli, spool_path):
    result = cli("write", "--what", "caf\u00e9 \u2028 \U0001f600 \"quoted\" \\ back")
    (line,) = spool_lines(spool_path)
    assert result.stdout == sha12(line) + "\n"
    assert orjson.loads(line)["what"] == "caf\u00e9 \u2028 \U0001f600 \"quoted\" \\ back"


def test_json_output_is_exactly_the_id_document(cli, spool_path):
    result = cli("write", "--what", "x", "--json")
    assert result.code == 0
    (line,) = spool_lines(spool_path)
    assert result.stdout == '{\n  "id": "%s"\n}\n' % sha12(line)


def test_empty_optional_fields_are_left_out(cli, spool_path):
    assert cli("write", "--what", "x", "--tool", "", "--brain", "", "--class", "", "--kind", "",
               "--expected", "", "--snippet", "").code == 0
    assert list(only_letter(spool_path)) == ["ts", "agent", "repo", "what"]


# --- defaults ----------------------------------------------------------------------


def test_ts_defaults_to_the_frozen_clock_in_utc_seconds(cli, spool_path):
    assert cli("write", "--what", "x").code == 0
    assert only_letter(spool_path)["ts"] == FIXED_NOW == "2026-05-03T09:00:00Z"


def test_ts_default_is_converted_to_utc_and_loses_fractions(cli, spool_path, monkeypatch):
    monkeypatch.setenv("M1ND_NOW", "2026-05-03T11:30:15.987654+02:00")
    assert cli("write", "--what", "x").code == 0
    assert only_letter(spool_path)["ts"] == "2026-05-03T09:30:15Z"


def test_agent_defaults_to_the_m1nd_agent_env(cli, spool_path, monkeypatch):
    monkeypatch.setenv("M1ND_AGENT", "agent-c")
    assert cli("write", "--what", "x").code == 0
    assert only_letter(spool_path)["agent"] == "agent-c"


def test_agent_falls_back_to_the_user_name(cli, spool_path, monkeypatch):
    monkeypatch.delenv("M1ND_AGENT")
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(var, "agent-d")
    assert cli("write", "--what", "x").code == 0
    assert only_letter(spool_path)["agent"] == "agent-d"


def test_repo_defaults_to_all_outside_a_git_work_tree(cli, spool_path):
    assert cli("write", "--what", "x").code == 0
    assert only_letter(spool_path)["repo"] == "all"


def test_repo_defaults_to_the_bound_root_path_inside_a_work_tree(cli, spool_path, make_repo):
    a = make_repo("repo-a")
    sub = a / "src" / "pkg"
    sub.mkdir(parents=True)
    assert cli("write", "--what", "x", cwd=sub).code == 0
    assert only_letter(spool_path)["repo"] == str(a)


def test_an_explicit_repo_wins_over_the_bound_root(cli, spool_path, make_repo):
    a = make_repo("repo-a")
    assert cli("write", "--what", "x", "--repo", "repo-b", cwd=a).code == 0
    assert only_letter(spool_path)["repo"] == "repo-b"


def test_a_letter_written_inside_a_repo_is_filed_into_that_repos_box(cli, spool_path, make_repo):
    a = make_repo("repo-a")
    assert cli("write", "--what", "x", cwd=a).code == 0
    receipt = cli("distribute", "--json", cwd=a).json
    assert receipt["to_project"] == 1
    assert (a / ".m1nd" / "inbox.jsonl").read_bytes() == spool_path.read_bytes()


# --- validation --------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["0123456789AB", "012", "0123456789abc", "0123456789ag",
                                 "0123456789ab\n", " 0123456789ab", "", "g" * 12])
def test_a_malformed_id_is_a_usage_error_and_writes_nothing(cli, spool_path, m1nd_home, bad):
    for args in (("pickup", bad, "--what", "x"), ("answer", ID_A, bad, "--what", "x"),
                 ("write", "--what", "x", "--answers", bad)):
        result = cli(*args)
        assert result.code == 2, (args, result.stdout, result.stderr)
    assert not spool_path.exists()
    assert not m1nd_home.exists()


@pytest.mark.parametrize("what", ["", "   "])
def test_an_empty_what_is_a_usage_error_and_writes_nothing(cli, spool_path, what):
    for args in (("write", "--what", what), ("pickup", ID_A, "--what", what), ("answer", ID_A, "--what", what)):
        assert cli(*args).code == 2, args
    assert not spool_path.exists()


def test_a_missing_what_is_a_usage_error(cli, spool_path):
    assert cli("write").code == 2
    assert not spool_path.exists()


def test_pickup_and_answer_need_at_least_one_id(cli, spool_path):
    assert cli("pickup", "--what", "x").code == 2
    assert cli("answer", "--what", "x").code == 2
    assert not spool_path.exists()


def test_an_unknown_disposition_is_a_usage_error(cli, spool_path):
    assert cli("answer", ID_A, "--what", "x", "--disposition", "done").code == 2
    assert not spool_path.exists()


def test_a_usage_error_with_json_is_the_error_document_on_stdout(cli):
    result = cli("pickup", "ABC", "--what", "x", "--json")
    assert result.code == 2
    assert result.json["error"]["code"] == 2


def test_write_refuses_a_letter_carrying_a_likely_secret_and_writes_nothing(cli, spool_path):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    result = cli("write", "--what", "x", "--snippet", secret)
    assert result.code == 1
    assert secret not in result.stdout + result.stderr
    assert not spool_path.exists() or spool_path.read_bytes() == b""


# --- the spool file ----------------------------------------------------------------


def test_a_spool_without_a_final_newline_gets_one_before_the_new_line(cli, spool_path):
    spool_path.parent.mkdir(parents=True)
    hand = b'{"repo":"all","what":"written by hand"}'
    spool_path.write_bytes(hand)
    result = cli("write", "--what", "x")
    assert result.code == 0
    data = spool_path.read_bytes()
    assert data.startswith(hand + b"\n{")
    assert data.endswith(b"}\n") and data.count(b"\n") == 2
    doc = cli("--inbox-sweep", "--no-distribute").json
    assert sorted(l["id"] for l in doc["letters"]) == sorted([sha12(hand), result.stdout.strip()])


def test_writes_append_and_never_rewrite_earlier_lines(cli, spool_path):
    spool_path.parent.mkdir(parents=True)
    before = b'{"what":"a"}\nnot json\n\n{"what":"b"}\r\n'
    spool_path.write_bytes(before)
    for i in range(3):
        assert cli("write", "--what", f"n{i}").code == 0
    data = spool_path.read_bytes()
    assert data.startswith(before)
    assert data[len(before):].count(b"\n") == 3


def test_the_first_write_creates_the_home_with_mode_0700(cli, m1nd_home, spool_path):
    assert not m1nd_home.exists()
    assert cli("write", "--what", "x").code == 0
    assert stat.S_IMODE(os.stat(m1nd_home).st_mode) == 0o700
    assert spool_path.is_file()


def test_spool_option_and_env_choose_the_spool_file(cli, tmp_path, monkeypatch, m1nd_home):
    by_option = tmp_path / "elsewhere" / "option.jsonl"
    refused = cli("write", "--what", "x", "--spool", str(by_option))  # --spool never creates a directory
    assert refused.code == 1 and str(by_option.parent) in refused.stderr
    assert not by_option.parent.exists()
    by_option.parent.mkdir()
    assert cli("write", "--what", "x", "--spool", str(by_option)).code == 0
    assert by_option.read_bytes().count(b"\n") == 1
    by_env = tmp_path / "elsewhere" / "env.jsonl"
    monkeypatch.setenv("M1ND_SPOOL", str(by_env))
    assert cli("write", "--what", "y").code == 0
    assert orjson.loads(by_env.read_bytes())["what"] == "y"
    assert not (m1nd_home / "field-reports.jsonl").exists()


def test_home_option_chooses_where_the_default_spool_lives(cli, tmp_path):
    other = tmp_path / "other-home"
    assert cli("write", "--what", "x", "--home", str(other)).code == 0
    assert (other / "field-reports.jsonl").read_bytes().count(b"\n") == 1


# --- pickup and answer ---------------------------------------------------------------


def test_pickup_writes_a_pickup_letter_answering_the_ids(cli, spool_path):
    assert cli("pickup", ID_A, ID_B, "--what", "on it", "--force").code == 0  # ids no letter has
    assert spool_path.read_bytes() == (
        b'{"ts":"2026-05-03T09:00:00Z","agent":"agent-a","class":"pickup","repo":"all","what":"on it",'
        b'"answers":["0123456789ab","ba9876543210"]}\n'
    )


def test_answer_writes_a_triage_receipt_with_its_disposition_last(cli, spool_path):
    assert cli("answer", ID_A, "--what", "done", "--disposition", "fixed", "--force").code == 0
    assert spool_path.read_bytes() == (
        b'{"ts":"2026-05-03T09:00:00Z","agent":"agent-a","class":"triage","repo":"all","what":"done",'
        b'"answers":["0123456789ab"],"disposition":"fixed"}\n'
    )


def test_answer_without_a_disposition_leaves_the_key_out(cli, spool_path):
    assert cli("answer", ID_A, "--what", "done", "--force").code == 0
    assert "disposition" not in only_letter(spool_path)


def written_id(result) -> str:
    assert result.code == 0, result.stderr
    return result.stdout.strip()


def test_pickup_makes_its_targets_in_flight_and_answer_makes_them_fired_clay(cli):
    a = written_id(cli("write", "--what", "first"))
    b = written_id(cli("write", "--what", "second"))
    c = written_id(cli("write", "--what", "third"))
    p = written_id(cli("pickup", a, b, "--what", "looking"))
    doc = cli("--inbox-sweep").json
    state = {l["id"]: l["state"] for l in doc["letters"]}
    assert (state[a], state[b], state[c], state[p]) == ("in_flight", "in_flight", "wet_ink", "wet_ink")
    assert doc["open"] == 4
    r = written_id(cli("answer", a, "--what", "fixed it", "--disposition", "fixed"))
    doc = cli("--inbox-sweep").json
    by_id = {l["id"]: l for l in doc["letters"]}
    assert by_id[a]["state"] == "fired_clay"
    assert by_id[a]["answered_by"] == sorted([p, r])
    assert by_id[b]["state"] == "in_flight"
    assert by_id[r]["class"] == "triage"
    assert doc["open"] == 4  # b, c, p, r


@pytest.mark.parametrize("disposition", ["fixed", "declined", "moot"])
def test_every_disposition_closes_the_letter(cli, disposition):
    a = written_id(cli("write", "--what", "x"))
    written_id(cli("answer", a, "--what", "y", "--disposition", disposition))
    doc = cli("--inbox-sweep", "--no-distribute").json
    assert {l["id"]: l["state"] for l in doc["letters"]}[a] == "fired_clay"


def test_a_written_mission_is_counted_in_the_spool_but_not_shown(cli):
    written_id(cli("write", "--what", "the plan", "--kind", "mission"))
    doc = cli("--inbox-sweep").json
    assert doc["distribution"]["spool_total"] == 1
    assert doc["total"] == 0 and doc["letters"] == []
