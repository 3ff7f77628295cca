"""Reports end to end through the CLI: profiles, the ledger, periods and cursors,
freeze/commit/deliver, tampering, sinks, alerts, status and list."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import write_spool


def letter(what, ts="2026-05-01T10:00:00Z", repo="all", **kw):
    return {"ts": ts, "agent": "agent-a", "class": kw.pop("klass", "bug"), "repo": repo, "what": what, **kw}


def ledger_lines(home: Path) -> list[dict]:
    path = home / "records" / "ledger.jsonl"
    return [orjson.loads(l) for l in path.read_bytes().splitlines()] if path.exists() else []


def prepare(cli, now, *extra):
    r = cli("report", "prepare", "--json", "--now", now, *extra)
    assert r.code == 0, r.stdout + r.stderr
    return r.json


# -- profiles ---------------------------------------------------------------

def test_preset_profile_json_is_written_out_in_full_in_key_order(cli):
    r = cli("report", "profile", "daily", "--json")
    assert r.code == 0
    assert list(r.json) == ["aliases", "boxes", "name", "rrules", "timezone"]  # sorted by the JSON format
    assert r.json == {"name": "daily", "aliases": ["day"], "rrules": ["FREQ=DAILY;BYHOUR=9;BYMINUTE=0"],
                      "timezone": "America/New_York", "boxes": ["medulla"]}
    assert cli("report", "profile", "week", "--json").json["rrules"] == ["FREQ=WEEKLY;BYDAY=FR;BYHOUR=18;BYMINUTE=0"]
    assert cli("report", "profile", "--json").json["name"] == "twice-daily"


def test_a_user_profile_comes_from_config_and_a_bad_one_fails_before_anything_is_written(cli, m1nd_home):
    m1nd_home.mkdir()
    (m1nd_home / "config.toml").write_text(
        '[report.profiles.ops]\nrrules = ["FREQ=DAILY;BYHOUR=7;BYMINUTE=30"]\ntimezone = "Asia/Kathmandu"\n'
        'boxes = ["medulla"]\naliases = ["o"]\n')
    r = cli("report", "profile", "o", "--json")
    assert r.json == {"name": "ops", "aliases": ["o"], "rrules": ["FREQ=DAILY;BYHOUR=7;BYMINUTE=30"],
                      "timezone": "Asia/Kathmandu", "boxes": ["medulla"]}
    before = sorted(p.name for p in m1nd_home.iterdir())
    for bad, why in [('rrules = ["FREQ=DAILY;BYHOUR=7;COUNT=2"]', "COUNT is not supported"),
                     ('rrules = ["FREQ=DAILY;BYHOUR=7"]\ntimezone = "Nowhere/Land"', "unknown timezone"),
                     ('rrules = ["FREQ=MONTHLY;BYHOUR=7"]', "FREQ must be DAILY or WEEKLY"),
                     ('rrules = ["FREQ=DAILY;BYHOUR=7"]\nschedule = 1', "unknown key schedule")]:
        (m1nd_home / "config.toml").write_text(f"[report.profiles.ops]\n{bad}\n")
        for args in (["report", "--profile", "ops"], ["report", "prepare", "--profile", "ops"]):
            r = cli(*args)
            assert r.code == 2 and why in r.stderr and "Traceback" not in r.stderr
            assert len(r.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in m1nd_home.iterdir()) == before  # nothing written


def test_an_unknown_profile_is_not_found(cli):
    r = cli("report", "profile", "hourly")
    assert r.code == 3 and "no report profile 'hourly'" in r.stderr


# -- the ledger ---------------------------------------------------------------

def test_the_ledger_records_each_letter_once_by_full_digest_with_the_run_clock(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("a"), letter("b")])
    cli("report", "alert", "--now", "2026-05-01T11:00:00Z")
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")
    lines = ledger_lines(m1nd_home)
    assert [l["observed_at"] for l in lines] == ["2026-05-01T11:00:00Z"] * 2
    assert all(len(l["digest"]) == 64 and l["digest"][:12] == l["id"] for l in lines)
    os.environ["M1ND_NOW"] = "2026-05-01T13:00:00Z"
    write_spool(spool_path, [letter("c")])
    cli("report", "alert")
    assert [l["observed_at"] for l in ledger_lines(m1nd_home)][-1] == "2026-05-01T13:00:00Z"


def test_colliding_ids_stay_two_ledger_entries():
    from m1nd import ledger
    from m1nd.paths import resolve_paths

    paths = resolve_paths()
    a, b = "abcdef123456" + "0" * 52, "abcdef123456" + "1" * 52
    assert len(ledger.record(paths, [("abcdef123456", a), ("abcdef123456", b)], "2026-05-01T00:00:00Z", create_home=True)) == 2
    assert ledger.record(paths, [("abcdef123456", a)], "2026-05-02T00:00:00Z", create_home=True) == []
    assert list(ledger.load(paths)) == [a, b]


def test_a_damaged_ledger_fails_closed_and_a_torn_tail_is_cut_by_the_next_writer(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("a")])
    cli("report", "alert")
    path = m1nd_home / "records" / "ledger.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + b'{"id":"0123')  # an append cut short
    write_spool(spool_path, [letter("b")])
    assert cli("report", "alert").code == 0
    assert len(ledger_lines(m1nd_home)) == 2 and path.read_bytes().startswith(good)
    path.write_bytes(b"garbage\n" + path.read_bytes())
    r = cli("report")
    assert r.code == 1 and "ledger" in r.stderr and "damaged at line 1" in r.stderr
    path.chmod(0)
    if os.geteuid() != 0:
        assert cli("report").code == 1


# -- periods, cursors, delivery -------------------------------------------------

def test_each_letter_lands_in_exactly_one_scheduled_report_and_nothing_due_says_so(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("first")])
    # boundary 13:00Z; the letter is first seen at 14:00: the first report is 21:00's
    r = cli("report", "--now", "2026-05-01T14:00:00Z")
    assert r.code == 0 and r.stdout.startswith("nothing due for profile twice-daily: next report at 2026-05-01T21:00:00Z")
    r = cli("report", "--now", "2026-05-01T15:00:00Z")
    assert r.code == 0 and r.stdout.startswith("nothing due for profile twice-daily: next report at 2026-05-01T21:00:00Z")
    write_spool(spool_path, [letter("second")])
    r = cli("report", "--now", "2026-05-01T21:00:00Z")
    assert "Partial since activation" in r.stdout and "first" in r.stdout and "second" not in r.stdout  # second seen at 21:00
    r = cli("report", "--now", "2026-05-02T22:00:00Z", "--json")  # 13:00Z and 21:00Z on the 2nd were missed
    doc = r.json
    assert doc["prepared"]["classification"] == "catch-up" and doc["prepared"]["entries"] == 1
    assert doc["prepared"]["period"] == {"start": "2026-05-01T21:00:00Z", "end": "2026-05-02T21:00:00Z",
                                         "timezone": "America/New_York"}
    delivered = sorted((m1nd_home / "reports").glob("*.md"))
    assert len(delivered) == 2
    texts = [p.read_text() for p in delivered]
    assert sum("· first ·" in t for t in texts) == 1 and sum("· second ·" in t for t in texts) == 1
    status = cli("report", "status", "--json", "--now", "2026-05-02T22:00:00Z").json["profiles"]["twice-daily"]
    assert status["cursor"] == "2026-05-02T21:00:00Z" and status["outbox"] == []
    assert status["next_boundary"] == "2026-05-03T13:00:00Z"
    assert [r["verified"] for r in status["receipts"]] == [True] * 2
    listing = cli("report", "list", "--json", "--limit", "1").json
    assert listing["returned"] == 1 and listing["total"] == 2 and listing["truncated"] is True
    assert listing["reports"][0]["period"]["end"] == "2026-05-02T21:00:00Z"
    assert cli("report", "list", "--limit", "201").code == 2
    assert cli("report", "list", "--offset", "10001").code == 2


def test_bootstrap_covers_seven_days_and_counts_older_letters_without_itemizing_them(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("old one"), letter("old two")])
    cli("report", "alert", "--now", "2026-04-01T12:00:00Z")
    write_spool(spool_path, [letter("recent")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")
    doc = prepare(cli, "2026-05-01T14:00:00Z")
    assert doc["period"]["start"] == "2026-04-24T13:00:00Z" and doc["entries"] == 1
    md = cli("report", "render", doc["run_id"], "--format", "md").stdout
    assert "Not itemized: 2 letters observed before 2026-04-24T13:00:00Z" in md and "recent" in md
    assert "old one" not in md and "incomplete" in md
    assert cli("report", "commit", doc["run_id"], "--digest", doc["digest"]).code == 0
    assert cli("report", "deliver").code == 0
    doc = prepare(cli, "2026-05-01T21:30:00Z")
    assert doc["entries"] == 0  # the uncounted old letters never come back


def test_prepare_is_idempotent_and_commit_fails_closed(cli, spool_path, m1nd_home, tmp_path):
    write_spool(spool_path, [letter(f"l{i}", ts=f"2026-05-01T{i // 60 + 6:02d}:{i % 60:02d}:00Z") for i in range(250)])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")
    doc = prepare(cli, "2026-05-01T14:00:00Z")
    assert doc["entries"] == 250 and doc["pages"] == 3 and len(doc["page_digests"]) == 3
    assert prepare(cli, "2026-05-01T16:59:00Z") == doc  # same period: the same frozen report
    run_dir = Path(doc["dir"])
    pages_file = run_dir / "pages.jsonl"
    original = pages_file.read_bytes()
    lines = original.splitlines(keepends=True)
    pages = [orjson.loads(line) for line in lines]
    assert [len(p["entries"]) for p in pages] == [100, 100, 50]
    assert pages[0]["entries"][0]["what"] == "l249"  # newest first
    r = cli("report", "commit", doc["run_id"], "--digest", "0" * 64)
    assert r.code == 1 and "nothing committed" in r.stderr
    pages_file.write_bytes(lines[0] + lines[1].replace(b"agent-a", b"agent-b", 1) + lines[2])
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"])
    assert r.code == 1 and "page 2 does not match its digest" in r.stderr
    pages_file.write_bytes(lines[0] + lines[1])
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"])
    assert r.code == 1 and "page 3 is missing" in r.stderr
    pages_file.write_bytes(original + lines[2])
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"])
    assert r.code == 1 and "page 4 is not in the manifest" in r.stderr
    pages_file.unlink()
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"])
    assert r.code == 1 and "pages.jsonl is missing" in r.stderr
    pages_file.write_bytes(original)
    head = run_dir / "head.json"
    head_bytes = head.read_bytes()
    head.write_bytes(head_bytes.replace(b'"entries":250', b'"entries":249'))
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"])
    assert r.code == 1 and "head.json does not match its digest" in r.stderr
    head.write_bytes(head_bytes)
    manifest = run_dir / "manifest.json"
    manifest_bytes = manifest.read_bytes()
    m = orjson.loads(manifest_bytes)
    m["pages"] = m["pages"][:2]
    manifest.write_bytes(orjson.dumps(m))
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"])
    assert r.code == 1 and "does not cover its pages" in r.stderr
    m["digest"] = store_digest(m)
    manifest.write_bytes(orjson.dumps(m))
    r = cli("report", "commit", doc["run_id"], "--digest", m["digest"])
    assert r.code == 1 and "page 3 is not in the manifest" in r.stderr
    assert cli("report", "status", "--json").json["profiles"]["twice-daily"]["cursor"] is None  # nothing moved
    # A frozen report that no longer verifies and was never committed is frozen again by prepare.
    again = prepare(cli, "2026-05-01T15:00:00Z")
    assert (again["run_id"], again["entries"], again["page_digests"]) == (doc["run_id"], 250, doc["page_digests"])
    assert cli("report", "commit", doc["run_id"], "--digest", again["digest"]).code == 0


def store_digest(manifest: dict) -> str:
    from m1nd.reports.store import report_digest

    return report_digest(manifest["head"], manifest["pages"])


def test_commit_refuses_a_stale_report_after_the_cursor_moved_or_the_profile_changed(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("x")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")  # observed before the 13:00Z boundary
    first = prepare(cli, "2026-05-01T14:00:00Z")
    assert cli("report", "commit", first["run_id"], "--digest", first["digest"]).code == 0
    again = cli("report", "commit", first["run_id"], "--digest", first["digest"], "--json")
    assert again.json["status"] == "already-committed"
    second = prepare(cli, "2026-05-01T22:00:00Z")
    # tamper with the cursor: the second report was frozen against another one
    state = m1nd_home / "records" / "reports" / "twice-daily" / "state.json"
    s = orjson.loads(state.read_bytes())
    s["cursor"] = "2026-05-01T12:00:00Z"
    state.write_bytes(orjson.dumps(s))
    r = cli("report", "commit", second["run_id"], "--digest", second["digest"])
    assert r.code == 1 and "stale" in r.stderr and "cursor moved" in r.stderr
    s["cursor"] = "2026-05-01T13:00:00Z"
    state.write_bytes(orjson.dumps(s))
    (m1nd_home / "config.toml").write_text('[report.profiles.twice-daily]\nrrules = ["FREQ=DAILY;BYHOUR=9"]\n')
    r = cli("report", "commit", second["run_id"], "--digest", second["digest"])
    assert r.code == 1 and "policy drift" in r.stderr
    state.write_bytes(b"{not json")
    r = cli("report", "status")
    assert r.code == 1 and "damaged" in r.stderr and "never taken as empty" in r.stderr


def test_manual_reports_move_no_cursor(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("m")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")
    r = cli("report", "--since", "2026-05-01T00:00:00Z", "--until", "2026-05-01T13:00:00Z", "--json")
    assert r.code == 0 and r.json["prepared"]["kind"] == "manual" and r.json["prepared"]["entries"] == 1
    assert cli("report", "status", "--json").json["profiles"]["twice-daily"]["cursor"] is None
    assert cli("report", "--until", "2026-05-01T13:00:00Z").code == 2
    assert cli("report", "--since", "yesterday").code == 2
    assert cli("report", "--since", "2026-05-02T00:00:00Z", "--until", "2026-05-01T00:00:00Z").code == 2


def test_alerts_print_once_and_never_move_the_cursor(cli, spool_path):
    write_spool(spool_path, [letter("wrong box", klass="memory_misdelivery"), letter("plain")])
    r = cli("report", "alert", "--json", "--now", "2026-05-01T12:00:00Z")
    assert r.json["count"] == 1 and r.json["alerts"][0]["what"] == "wrong box"
    assert cli("report", "alert", "--json").json["count"] == 0
    assert cli("report", "status", "--json").json["profiles"]["twice-daily"]["cursor"] is None
    doc = prepare(cli, "2026-05-01T21:30:00Z")
    assert doc["entries"] == 2  # both still in the next report


# -- sinks ---------------------------------------------------------------------

def test_directory_delivery_is_verified_and_delivering_twice_writes_nothing_new(cli, spool_path, tmp_path):
    write_spool(spool_path, [letter("d")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")  # observed before the 13:00Z boundary
    out = tmp_path / "out"
    r = cli("report", "--to", str(out), "--now", "2026-05-01T14:00:00Z")
    assert r.code == 0
    files = sorted(p.name for p in out.iterdir())
    assert len(files) == 4 and sum(f.endswith(".manifest.json") for f in files) == 1
    stamp = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    r = cli("report", "deliver", "--to", str(out), "--json")
    assert r.json["deliveries"] == []
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == stamp


def test_a_command_sink_that_fails_then_hangs_then_succeeds_delivers_once(cli, spool_path, tmp_path, monkeypatch):
    write_spool(spool_path, [letter("c")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")  # observed before the 13:00Z boundary
    log = tmp_path / "received"
    mode = tmp_path / "mode"
    script = tmp_path / "sink.sh"
    script.write_text('#!/bin/sh\ncase "$(cat "$1")" in\n fail) cat >/dev/null; echo "mailer down" >&2; exit 7;;\n'
                      ' hang) exec sleep 30;;\nesac\n{ echo "key=$M1ND_REPORT_KEY"; cat; } >> "$2"\n')
    sink = f"exec:sh {script} {mode} {log}"
    monkeypatch.setenv("M1ND_REPORT_TIMEOUT", "1")
    mode.write_text("fail")
    r = cli("report", "--to", sink, "--now", "2026-05-01T14:00:00Z")
    assert r.code == 1 and "exited 7: mailer down" in r.stderr and "stays in the outbox" in r.stderr
    mode.write_text("hang")
    r = cli("report", "deliver", "--to", sink, "--json")
    assert r.code == 1 and "did not finish within 1 s" in r.json["deliveries"][0]["message"]
    assert len(cli("report", "status", "--json").json["profiles"]["twice-daily"]["outbox"]) == 1
    mode.write_text("ok")
    r = cli("report", "deliver", "--to", sink, "--json")
    assert r.code == 0 and r.json["deliveries"][0]["verified"] is False
    assert cli("report", "deliver", "--to", sink, "--json").json["deliveries"] == []
    received = log.read_text()
    assert received.count("key=") == 1 and "# m1nd report: twice-daily" in received
    key = r.json["deliveries"][0]["key"]
    assert f"key={key}" in received
    receipt = cli("report", "status", "--json").json["profiles"]["twice-daily"]["receipts"][0]
    assert receipt["verified"] is False and receipt["sink"] == sink


def test_a_pending_delivery_blocks_nothing_else(cli, spool_path, monkeypatch):
    write_spool(spool_path, [letter("p")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")  # observed before the 13:00Z boundary
    assert cli("report", "--to", "exec:exit 1", "--now", "2026-05-01T14:00:00Z").code == 1
    assert cli("report", "--to", "exec:exit 1", "--now", "2026-05-01T22:00:00Z").code == 1
    status = cli("report", "status", "--json").json["profiles"]["twice-daily"]
    assert status["cursor"] == "2026-05-01T21:00:00Z" and len(status["outbox"]) == 2
    r = cli("report", "deliver", "--json")  # each waits for the sink it was made for
    assert [(d["status"], d["sink"]) for d in r.json["deliveries"]] == [("failed", "exec:exit 1")] * 2
    r = cli("report", "deliver", "--json", "--to", "exec:cat >/dev/null")  # or where the user sends it
    assert [d["status"] for d in r.json["deliveries"]] == ["delivered", "delivered"]


def test_nothing_due_answers_the_same_on_the_cron_path_and_the_ordinary_path(cli, spool_path, tmp_path):
    write_spool(spool_path, [letter("q")])
    assert cli("report", "--now", "2026-05-01T14:00:00Z").code == 0
    quick = cli("report", "--json", "--now", "2026-05-01T15:00:00Z")
    (tmp_path / "extra").mkdir()
    ordinary = cli("report", "--json", "--now", "2026-05-01T15:00:00Z", "--root", str(tmp_path / "extra"))
    assert quick.code == ordinary.code == 0 and quick.stdout == ordinary.stdout
    assert quick.json["status"] == "nothing-due" and quick.json["next_boundary"] == "2026-05-01T21:00:00Z"
    human = cli("report", "--now", "2026-05-01T15:00:00Z")
    assert human.stdout == "nothing due for profile twice-daily: next report at 2026-05-01T21:00:00Z\n"
    assert cli("report", "--now", "not-a-time").code == 2  # errors take the ordinary path


def test_alerts_keep_working_after_the_first_alert_was_recorded(cli, spool_path):
    write_spool(spool_path, [letter("one", klass="memory_misdelivery")])
    assert cli("report", "alert", "--json").json["count"] == 1
    write_spool(spool_path, [letter("two", klass="memory_misdelivery")])
    r = cli("report", "alert", "--json")
    assert r.code == 0 and [a["what"] for a in r.json["alerts"]] == ["two"]
    r = cli("report", "alert")
    assert r.code == 0 and r.stdout == "no new alerts (memory_misdelivery)\n"


def test_the_ledger_index_answers_membership_and_notices_a_replaced_ledger():
    from m1nd import ledger
    from m1nd.paths import resolve_paths

    paths = resolve_paths()
    first = [(f"{i:012x}", f"{i:012x}" + "a" * 52) for i in range(5000)]
    assert len(ledger.record(paths, first, "2026-05-01T00:00:00Z", create_home=True)) == 5000
    assert ledger.record(paths, first[:10], "2026-05-01T00:00:01Z", create_home=True) == []  # builds the index
    assert os.path.exists(os.path.join(paths.state, "ledger-index"))
    more = [(f"{i:012x}", f"{i:012x}" + "b" * 52) for i in range(3)]
    assert len(ledger.record(paths, more + first[:3], "2026-05-01T00:00:02Z", create_home=True)) == 3
    assert ledger.record(paths, more, "2026-05-01T00:00:03Z", create_home=True) == []
    # Another ledger in its place (restored from elsewhere): the index no longer matches it.
    path = ledger.ledger_path(paths)
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(data.splitlines(keepends=True)[-1])
    assert len(ledger.record(paths, first[:2], "2026-05-01T00:00:04Z", create_home=True)) == 2


def test_render_and_commit_errors_are_one_line_with_the_right_exit_code(cli, spool_path):
    r = cli("report", "render", "19990101T0000Z-s-000000000000")
    assert r.code == 3 and r.stderr == "m1nd: error: no frozen report 19990101T0000Z-s-000000000000\n"
    assert cli("report", "render", "../escape").code == 2
    write_spool(spool_path, [letter("r")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")  # observed before the 13:00Z boundary
    doc = prepare(cli, "2026-05-01T14:00:00Z")
    r = cli("report", "render", doc["run_id"], "--format", "pdf")
    assert r.code == 2 and "md, html or json" in r.stderr
    r = cli("report", "commit", "19990101T0000Z-s-000000000000", "--digest", "x", "--json")
    assert r.code == 3 and r.json["error"]["code"] == 3
    assert cli("report", "profile", "nope", "--json").json["error"]["code"] == 3


def test_profile_boxes_default_to_the_roster_labels_then_medulla(cli, make_repo, tmp_path):
    a, b = make_repo("repo-a"), make_repo("Repo-B")
    assert cli("roster", "add", str(a)).code == 0 and cli("roster", "add", str(b)).code == 0
    here = make_repo("repo-here")
    assert cli("report", "profile", "--json", cwd=here).json["boxes"] == ["repo-a", "Repo-B", "medulla"]


def test_any_read_command_records_first_seen_letters_and_the_report_selects_by_that_time(
        cli, spool_path, m1nd_home, monkeypatch):
    write_spool(spool_path, [letter("seen by a sweep")])
    monkeypatch.setenv("M1ND_NOW", "2026-05-01T10:00:00Z")
    assert cli("sweep", "--json", "--no-distribute").code == 0
    assert [l["observed_at"] for l in ledger_lines(m1nd_home)] == ["2026-05-01T10:00:00Z"]
    doc = prepare(cli, "2026-05-01T14:00:00Z")  # seen at 10:00, before the 13:00 boundary
    assert doc["entries"] == 1 and doc["period"]["start"] == "2026-05-01T10:00:00Z"


def test_a_read_without_a_home_records_nothing_and_creates_no_home(m1nd_home):
    from m1nd import ledger
    from m1nd.paths import resolve_paths

    assert ledger.record(resolve_paths(), [("a" * 12, "a" * 64)], "2026-05-01T00:00:00Z") == []
    assert not m1nd_home.exists()


@pytest.mark.parametrize("asked", [1, 7, 600, 9000])
def test_the_ledger_index_finds_exactly_the_digests_it_holds_however_many_are_asked(asked):
    import hashlib
    import random

    from m1nd import ledger
    from m1nd.paths import resolve_paths

    paths = resolve_paths()
    digests = [hashlib.sha256(b"letter %d" % i).hexdigest() for i in range(12000)]
    held = digests[::2]  # every other one is in the ledger
    assert len(ledger.record(paths, [(d[:12], d) for d in held], "2026-05-01T00:00:00Z", create_home=True)) == 6000
    ledger._known(paths, held[:1])  # builds the sorted index
    assert os.path.exists(os.path.join(paths.state, "ledger-index"))
    ask = random.Random(asked).sample(digests, asked)
    assert ledger._known(paths, ask) == set(ask) & set(held)
    as_bytes = [bytes.fromhex(d) for d in ask]
    assert ledger._known_of(paths, as_bytes) == {bytes.fromhex(d) for d in set(ask) & set(held)}


def test_the_ledger_index_rebuilt_chunk_by_chunk_knows_every_entry_and_fails_closed_at_the_true_line(monkeypatch):
    import shutil

    from m1nd import ledger, ledgerindex
    from m1nd.errors import M1ndError
    from m1nd.paths import resolve_paths

    monkeypatch.setattr(ledgerindex, "_REBUILD_CHUNK", 1000)  # several chunks, cut inside lines
    paths = resolve_paths()
    entries = [(f"{i:012x}", f"{i:012x}" + "c" * 52) for i in range(300)]
    assert len(ledger.record(paths, entries, "2026-05-01T00:00:00Z", create_home=True)) == 300
    shutil.rmtree(paths.state)  # the index goes with the state: rebuilt from the ledger
    absent = [(f"{i:012x}", f"{i:012x}" + "d" * 52) for i in range(5)]
    assert ledger._known(paths, [d for _, d in entries + absent]) == {d for _, d in entries}
    with open(os.path.join(paths.state, "ledger-index"), "rb") as fh:
        assert (len(fh.read()) - ledger._HEAD) // 32 == 300
    # a damaged line deep in the ledger is named by its line number in the whole file
    path = ledger.ledger_path(paths)
    with open(path, "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    lines[233] = b"not an entry\n"
    with open(path, "wb") as fh:
        fh.write(b"".join(lines))
    shutil.rmtree(paths.state)
    with pytest.raises(M1ndError, match="damaged at line 234"):
        ledger._known(paths, [entries[0][1]])


@pytest.mark.parametrize("appended", [10, 5000])
def test_the_ledger_index_with_a_short_or_long_tail_since_it_was_built_knows_every_entry(appended):
    """Entries appended after the index was built are read as a tail while few, and
    indexed again (not held as entries) once many: the same answers either way."""
    import hashlib

    from m1nd import ledger
    from m1nd.paths import resolve_paths

    paths = resolve_paths()
    digests = [hashlib.sha256(b"letter %d" % i).hexdigest() for i in range(6000 + 2 * appended)]
    first, later, never = digests[:6000], digests[6000:6000 + appended], digests[6000 + appended:]
    ledger.record(paths, [(d[:12], d) for d in first], "2026-05-01T00:00:00Z", create_home=True)
    ledger._known(paths, first[:1])  # builds the sorted index over the first 6,000
    with open(os.path.join(paths.state, "ledger-index"), "rb") as fh:
        covered = int.from_bytes(fh.read(16)[8:16], "little")  # magic, then the bytes covered
    ledger.record(paths, [(d[:12], d) for d in later], "2026-05-01T00:00:01Z", create_home=True)
    assert ledger.tail_lines(paths, covered) >= appended
    ask = first[::97] + later + never
    assert ledger._known(paths, ask) == set(first[::97]) | set(later)


def test_until_without_since_is_a_usage_error_for_report_and_prepare_alike(cli):
    for argv in (("report",), ("report", "prepare")):
        r = cli(*argv, "--until", "2026-05-01T00:00:00Z")
        assert r.code == 2 and r.stderr.startswith("m1nd: error: --until needs --since"), (argv, r.stderr)
