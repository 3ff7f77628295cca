"""The first report after install: distribution records coverage as it reads the spool,
so letters filed before a boundary are in the report of that boundary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.conftest import write_spool

BEFORE_NINE = "2026-05-01T12:50:00Z"  # 08:50 in New York (EDT)
AFTER_NINE = "2026-05-01T13:05:00Z"  # the 09:00 boundary is 13:00Z


def letter(what, repo="all"):
    return {"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "class": "bug", "repo": repo, "what": what}


def distribute_at(now: str, **env) -> subprocess.CompletedProcess:
    e = dict(os.environ, M1ND_NOW=now, **env)
    done = subprocess.run([sys.executable, "-m", "m1nd", "distribute"], env=e, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def ledger_stamps(home: Path) -> list[str]:
    return [orjson.loads(l)["observed_at"] for l in (home / "records" / "ledger.jsonl").read_bytes().splitlines()]


def test_a_new_installs_first_report_holds_the_letters_filed_before_the_boundary(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter(f"finding {i}") for i in range(8)])
    distribute_at(BEFORE_NINE)
    assert ledger_stamps(m1nd_home) == [BEFORE_NINE] * 8, "distribution recorded what it read, at its read time"
    r = cli("report", "--json", "--now", AFTER_NINE)
    assert r.code == 0, r.stderr
    assert r.json["prepared"]["entries"] == 8
    assert r.json["prepared"]["period"]["end"] == "2026-05-01T13:00:00Z"
    md = next((m1nd_home / "reports").glob("*.md")).read_text()
    assert all(f"finding {i}" in md for i in range(8))


def test_a_letter_filed_after_the_boundary_waits_for_the_next_report(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("early")])
    distribute_at(BEFORE_NINE)
    write_spool(spool_path, [letter("late")])
    distribute_at("2026-05-01T13:01:00Z")
    first = cli("report", "--now", AFTER_NINE)
    assert "early" in first.stdout and "late" not in first.stdout
    second = cli("report", "--now", "2026-05-01T21:05:00Z")
    assert "late" in second.stdout and "early" not in second.stdout


def test_230_letters_filed_before_a_boundary_make_three_pages(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter(f"finding {i}") for i in range(230)])
    distribute_at(BEFORE_NINE)
    doc = cli("report", "prepare", "--json", "--now", AFTER_NINE).json
    assert doc["entries"] == 230 and doc["pages"] == 3


def test_a_daily_0230_profile_prepared_days_later_covers_from_the_first_filing(cli, spool_path, m1nd_home):
    m1nd_home.mkdir(parents=True, exist_ok=True)
    (m1nd_home / "config.toml").write_text(
        '[report.profiles.night]\nrrules = ["FREQ=DAILY;BYHOUR=2;BYMINUTE=30"]\ntimezone = "UTC"\n')
    write_spool(spool_path, [letter("filed on the first night")])
    distribute_at("2026-05-01T01:00:00Z")
    doc = cli("report", "prepare", "--json", "--profile", "night", "--now", "2026-05-04T07:30:00Z").json
    assert doc["period"]["start"] == "2026-05-01T01:00:00Z" and doc["period"]["end"] == "2026-05-04T02:30:00Z"
    assert doc["entries"] == 1


def test_a_crash_between_prepare_and_commit_then_report_to_a_directory_delivers_the_letters(
        cli, spool_path, m1nd_home, tmp_path):
    write_spool(spool_path, [letter(f"finding {i}") for i in range(5)])
    distribute_at(BEFORE_NINE)
    e = dict(os.environ, M1ND_NOW=AFTER_NINE, M1ND_TEST_CRASH="prepare-after-freeze")
    crashed = subprocess.run([sys.executable, "-m", "m1nd", "report"], env=e, capture_output=True, timeout=120)
    assert crashed.returncode != 0
    out = tmp_path / "out"
    r = cli("report", "--to", str(out), "--now", "2026-05-01T13:10:00Z")
    assert r.code == 0, r.stderr
    md = "".join(p.read_text() for p in out.glob("*.md"))
    assert all(f"finding {i}" in md for i in range(5))
    assert "Entries: 5 on 1 page" in md


def test_a_ledger_that_cannot_be_written_warns_and_the_letters_are_still_filed(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("still filed")])
    (m1nd_home / "records").mkdir(parents=True)
    (m1nd_home / "records" / "ledger.jsonl").write_bytes(b"not a ledger line\n")
    done = distribute_at(BEFORE_NINE)
    assert b"coverage ledger not updated" in done.stdout + done.stderr
    assert b"still filed" in (m1nd_home / "inbox.jsonl").read_bytes()  # the medulla box


def test_a_held_letter_is_itemized_as_held_and_an_answered_box_row_adds_up(cli, spool_path, m1nd_home, make_repo):
    repo = make_repo("repo-a")
    assert cli("roster", "add", str(repo)).code == 0
    token = "ghp_" + "A1b2C3d4E5f6G7h8" * 2 + "Zz9y"  # made up, built from parts
    first = {"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "class": "bug", "repo": "repo-a",
             "what": "the depth limit is ignored"}
    raw = orjson.dumps(first)
    import hashlib

    lid = hashlib.sha256(raw).hexdigest()[:12]
    receipt = {"ts": "2026-05-01T11:00:00Z", "agent": "agent-b", "class": "triage", "repo": "repo-a",
               "what": "fixed in abc123", "answers": [lid], "disposition": "fixed"}
    leaked = {"ts": "2026-05-01T11:30:00Z", "agent": "agent-a", "class": "bug", "repo": "repo-a",
              "what": f"login fails with token {token}"}
    write_spool(spool_path, [raw, receipt, leaked])
    distribute_at(BEFORE_NINE)
    r = cli("report", "--json", "--now", AFTER_NINE)
    assert r.code == 0, r.stderr
    run_id, out = r.json["prepared"]["run_id"], m1nd_home / "reports"
    md, html, js = ((out / f"{run_id}.{ext}").read_text() for ext in ("md", "html", "json"))
    for text in (md, html, js):
        assert token not in text and "login fails" not in text
    assert "held: " in md and "held: " in html
    assert f"receipt of {lid} (fixed)" in md and f"`{lid}` · fixed" in md
    doc = orjson.loads(js)
    row = next(x for x in doc["summary"] if x["box"] == "repo-a")
    assert (row["new"], row["open"], row["answered"]) == (3, 0, 1)
    assert doc["outcomes"] == {"fixed": 1, "held": 1, "receipts": 1}


def test_distribute_takes_now_for_the_ledger_and_rejects_a_bad_one(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("filed at ten to nine")])
    bad = cli("distribute", "--now", "not-a-time")
    assert bad.code == 2 and "not an ISO 8601 time" in bad.stderr
    assert not (m1nd_home / "records" / "ledger.jsonl").exists(), "a refused clock files nothing"
    r = cli("distribute", "--now", BEFORE_NINE)
    assert r.code == 0, r.stderr
    assert ledger_stamps(m1nd_home) == [BEFORE_NINE]
    report = cli("report", "--json", "--now", AFTER_NINE).json["prepared"]
    assert report["period"]["end"] == "2026-05-01T13:00:00Z" and report["entries"] == 1


def test_distribution_records_exactly_the_whole_letter_lines_it_read_by_their_full_digest(cli, spool_path, m1nd_home):
    import hashlib

    kept = orjson.dumps(letter("a letter"))
    write_spool(spool_path, [kept, {"kind": "mission", "repo": "all", "what": "the plan"}, b"", b"{not json",
                             letter("filed twice, recorded once")])
    twice = orjson.dumps(letter("filed twice, recorded once"))
    with open(spool_path, "ab") as fh:
        fh.write(twice + b"\n" + orjson.dumps(letter("a writer is still appending")))  # no newline yet
    assert cli("distribute", "--now", BEFORE_NINE).code == 0
    lines = [orjson.loads(l) for l in (m1nd_home / "records" / "ledger.jsonl").read_bytes().splitlines()]
    tail = orjson.dumps(letter("a writer is still appending"))
    # the spool's whole letter lines; then the box lines the filing looked at, where the
    # unterminated tail it filed now stands as a whole line (as the next read would see it)
    want = [hashlib.sha256(raw).hexdigest() for raw in (kept, twice, tail)]
    assert [(e["digest"], e["id"], e["observed_at"]) for e in lines] == [(d, d[:12], BEFORE_NINE) for d in want]


def test_a_first_report_waits_for_a_boundary_after_the_first_letter_never_an_empty_one(cli, spool_path, m1nd_home):
    """Installed mid-period (the first letter after the latest boundary): the first
    report is the next boundary's, with the letter, never a report of no length."""
    write_spool(spool_path, [letter("the first finding")])
    distribute_at("2026-05-01T05:00:00Z")  # 01:00 in New York: after the 17:00 boundary of the day before
    early = cli("report", "--json", "--now", "2026-05-01T07:35:00Z")
    assert early.code == 0 and early.json["status"] == "nothing-due", early.stdout
    assert early.json["next_boundary"] == "2026-05-01T13:00:00Z"
    said = cli("report", "--now", "2026-05-01T07:36:00Z")
    assert said.stdout == "nothing due for profile twice-daily: next report at 2026-05-01T13:00:00Z\n"
    assert cli("report", "list", "--json").json["reports"] == []
    first = cli("report", "--json", "--now", "2026-05-01T13:05:00Z").json["prepared"]
    assert first["entries"] == 1 and first["classification"] == "partial-since-activation"
    assert first["period"]["start"] == "2026-05-01T05:00:00Z" and first["period"]["end"] == "2026-05-01T13:00:00Z"


def test_a_box_line_that_came_by_git_is_observed_by_the_next_filing_not_the_next_read(cli, spool_path, m1nd_home,
                                                                                     make_repo):
    repo = make_repo("repo-a")
    assert cli("roster", "add", str(repo)).code == 0
    write_spool(spool_path, [letter("ours", repo="repo-a")])
    distribute_at("2026-05-01T12:00:00Z")
    pulled = {"ts": "2026-05-01T12:10:00Z", "agent": "agent-b", "class": "bug", "repo": "repo-a",
              "what": "a teammate's letter, pulled"}
    with (repo / ".m1nd" / "inbox.jsonl").open("ab") as fh:  # as a pull extends the box
        fh.write(orjson.dumps(pulled) + b"\n{not a letter\n")
    distribute_at(BEFORE_NINE)  # a filing, no read command in between
    assert ledger_stamps(m1nd_home) == ["2026-05-01T12:00:00Z", BEFORE_NINE], "the pulled letter, once"
    first = cli("report", "--now", AFTER_NINE)
    assert "a teammate's letter, pulled" in first.stdout, "in the report of the boundary after the filing"


def test_letters_held_in_the_spool_are_not_pending_and_the_report_does_not_send_you_to_distribute(
        cli, spool_path, m1nd_home, make_repo):
    repo = make_repo("repo-a")
    assert cli("roster", "add", str(repo)).code == 0
    token = "ghp_" + "A1b2C3d4E5f6G7h8" * 2 + "Zz9y"  # made up, built from parts
    write_spool(spool_path, [{"ts": "2026-05-01T11:30:00Z", "agent": "agent-a", "class": "bug", "repo": "repo-a",
                              "what": f"login fails with token {token} #{i}"} for i in range(3)])
    distribute_at(BEFORE_NINE)
    md = cli("report", "--now", AFTER_NINE).stdout
    assert "Coverage: complete" in md and "pending in the spool" not in md
    assert "m1nd distribute" not in md.split("Next:")[1]
    assert "Outcomes: 3 held." in md
