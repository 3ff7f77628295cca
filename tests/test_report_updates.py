"""Exception updates: `m1nd report` (from cron) sends an update between cadence
boundaries when an alert-class letter arrives or a case escalates; the update moves
no cursor, is coalesced with a boundary due at the same run, and a cooldown keeps a
burst to one update.  The clock is walked with --now."""

from __future__ import annotations

import orjson
import pytest

from m1nd.reports import quick, updates
from tests.conftest import git_init, write_spool


@pytest.fixture(autouse=True, params=["by digest", "by class"])
def candidates(request, monkeypatch):
    """Every scenario twice: the new entries looked up by digest (few new letters) and
    matched against the trigger classes (many: here, a block of one entry is full
    already): the same updates either way."""
    if request.param == "by class":
        monkeypatch.setattr(updates, "BY_DIGEST", 1)
    return request.param


def letter(what, klass="bug", **more):
    return {"ts": "2026-05-01T00:30:00Z", "agent": "agent-a", "class": klass, "repo": "all", "what": what, **more}


def night(home, extra=""):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[report]\ndefault = "night"\n[report.profiles.night]\nrrules = ["FREQ=DAILY;BYHOUR=2"]\n'
        f'timezone = "UTC"\n{extra}')


def filed(cli, spool_path, now, *letters):
    write_spool(spool_path, list(letters))
    r = cli("distribute", "--now", now)
    assert r.code == 0, r.stderr


def first_report(cli, spool_path):
    filed(cli, spool_path, "2026-05-01T01:00:00Z", letter("an ordinary letter"))
    r = cli("report", "--json", "--now", "2026-05-01T03:00:00Z")
    assert r.code == 0 and r.json["prepared"]["kind"] == "scheduled", r.stderr


def status(cli, now):
    return cli("report", "status", "--json", "--now", now).json["profiles"]["night"]


def delivered_md(home, run_id) -> str:
    return (home / "reports" / f"{run_id}.md").read_text()


def test_an_alert_class_letter_between_boundaries_makes_an_update_that_moves_no_cursor(cli, spool_path, m1nd_home):
    night(m1nd_home)
    first_report(cli, spool_path)
    filed(cli, spool_path, "2026-05-01T10:00:00Z", letter("sent to the wrong box", "memory_misdelivery"))
    r = cli("report", "--json", "--now", "2026-05-01T10:05:00Z")
    assert r.code == 0, r.stderr
    prepared = r.json["prepared"]
    assert (prepared["kind"], prepared["classification"], prepared["entries"]) == ("update", "update", 1)
    assert prepared["period"]["start"] == "2026-05-01T03:00:00Z"  # since the last report
    assert prepared["period"]["end"] == "2026-05-01T10:05:00Z"
    assert [d["status"] for d in r.json["deliveries"]] == ["delivered"]
    text = delivered_md(m1nd_home, prepared["run_id"])
    assert "sent to the wrong box" in text and "Triggered by: 1 letter of an alert class" in text
    assert "Cursor: unchanged" in text
    assert "- alert class · `wet_ink` · memory\\_misdelivery" in text, "each letter of an update says what made it urgent"
    st = status(cli, "2026-05-01T10:06:00Z")
    assert st["cursor"] == "2026-05-01T02:00:00Z"
    assert (st["last_update"], st["cooldown_until"]) == ("2026-05-01T10:05:00Z", "2026-05-01T11:05:00Z")
    # the update's letter is in the next cadence report too
    nxt = cli("report", "--json", "--now", "2026-05-02T03:00:00Z").json["prepared"]
    assert nxt["kind"] == "scheduled" and nxt["entries"] == 1
    assert "sent to the wrong box" in delivered_md(m1nd_home, nxt["run_id"])


def test_ordinary_letters_make_no_update_and_the_cron_path_is_quick_again(cli, spool_path, m1nd_home, capsys):
    night(m1nd_home)
    first_report(cli, spool_path)
    filed(cli, spool_path, "2026-05-01T10:00:00Z", letter("just a bug"))
    args = ["--now", "2026-05-01T10:05:00Z", "--home", str(m1nd_home)]
    assert not quick.nothing_due(args), "the ledger grew: the ordinary path looks for triggers"
    r = cli("report", "--json", "--now", "2026-05-01T10:05:00Z")
    assert r.code == 0 and r.json["status"] == "nothing-due" and r.json["prepared"] is None
    capsys.readouterr()
    assert quick.nothing_due(args), "after one look, nothing new: the quick path answers again"
    assert status(cli, "2026-05-01T10:06:00Z")["last_update"] is None


def test_an_update_due_at_a_boundary_is_coalesced_into_one_scheduled_report(cli, spool_path, m1nd_home):
    night(m1nd_home)
    first_report(cli, spool_path)
    filed(cli, spool_path, "2026-05-02T01:30:00Z", letter("misdelivered before the boundary", "memory_misdelivery"))
    r = cli("report", "--json", "--now", "2026-05-02T02:10:00Z")
    assert r.code == 0, r.stderr
    prepared = r.json["prepared"]
    assert prepared["kind"] == "scheduled" and len(r.json["deliveries"]) == 1
    text = delivered_md(m1nd_home, prepared["run_id"])
    assert "## Update" in text and "Triggered by: 1 letter of an alert class" in text
    assert text.count("misdelivered before the boundary") == 2  # in the update's section and in the ledger
    doc = orjson.loads((m1nd_home / "reports" / f"{prepared['run_id']}.json").read_bytes())
    assert [t["trigger"] for t in doc["update"]["triggers"]] == ["alert class"]
    html = (m1nd_home / "reports" / f"{prepared['run_id']}.html").read_text()
    assert '<h2>Update</h2>' in html and "Triggered by: 1 letter of an alert class" in html
    assert html.count("misdelivered before the boundary") == 2
    st = status(cli, "2026-05-02T02:11:00Z")
    assert (st["cursor"], st["last_update"]) == ("2026-05-02T02:00:00Z", "2026-05-02T02:10:00Z")
    again = cli("report", "--json", "--now", "2026-05-02T02:20:00Z")
    assert again.json["status"] == "nothing-due", "the coalesced report was the update: no second one"


def test_a_burst_of_triggers_makes_one_update_per_cooldown(cli, spool_path, m1nd_home):
    night(m1nd_home)
    first_report(cli, spool_path)
    filed(cli, spool_path, "2026-05-01T10:00:00Z", letter("first of a burst", "memory_misdelivery"))
    assert cli("report", "--json", "--now", "2026-05-01T10:05:00Z").json["prepared"]["kind"] == "update"
    filed(cli, spool_path, "2026-05-01T10:20:00Z", letter("second of a burst", "memory_misdelivery"))
    held = cli("report", "--json", "--now", "2026-05-01T10:25:00Z")
    assert held.code == 0 and held.json["status"] == "nothing-due", "within the cooldown: no second update"
    said = cli("report", "--now", "2026-05-01T10:26:00Z")
    assert said.stdout == ("nothing due for profile night: next report at 2026-05-02T02:00:00Z; new letters wait "
                           "for the update cooldown to end at 2026-05-01T11:05:00Z\n"), "the cooldown is named"
    later = cli("report", "--json", "--now", "2026-05-01T11:10:00Z")
    assert later.json["prepared"]["kind"] == "update" and later.json["prepared"]["entries"] == 1
    text = delivered_md(m1nd_home, later.json["prepared"]["run_id"])
    assert "second of a burst" in text and "first of a burst" not in text


def test_a_shorter_cooldown_is_a_profile_key_and_a_bad_one_is_refused(cli, spool_path, m1nd_home):
    night(m1nd_home, "cooldown = 10\n")
    first_report(cli, spool_path)
    filed(cli, spool_path, "2026-05-01T10:00:00Z", letter("one", "memory_misdelivery"))
    assert cli("report", "--json", "--now", "2026-05-01T10:05:00Z").json["prepared"]["kind"] == "update"
    filed(cli, spool_path, "2026-05-01T10:20:00Z", letter("two", "memory_misdelivery"))
    assert cli("report", "--json", "--now", "2026-05-01T10:25:00Z").json["prepared"]["kind"] == "update"
    night(m1nd_home, 'cooldown = "soon"\n')
    bad = cli("report", "--now", "2026-05-01T10:30:00Z")
    assert bad.code == 2 and "cooldown must be a whole number of minutes" in bad.stderr


def test_a_disabled_profile_gets_no_update(cli, spool_path, m1nd_home):
    night(m1nd_home)
    first_report(cli, spool_path)
    night(m1nd_home, "enabled = false\n")
    filed(cli, spool_path, "2026-05-01T10:00:00Z", letter("misdelivered while off", "memory_misdelivery"))
    r = cli("report", "--json", "--now", "2026-05-01T10:05:00Z")
    assert r.code == 0 and r.json["status"] == "disabled" and r.json["prepared"] is None
    assert status(cli, "2026-05-01T10:06:00Z")["last_update"] is None
    assert not list((m1nd_home / "reports").glob("*-u-*"))


def test_a_case_escalated_by_filing_makes_an_update_with_its_case(cli, spool_path, m1nd_home, tmp_path):
    repo = git_init(tmp_path / "src" / "repo-a")
    assert cli("roster", "add", str(repo)).code == 0
    night(m1nd_home)
    first_report(cli, spool_path)
    crash = {"agent": "agent-b", "class": "bug", "repo": "repo-a", "tool": "index", "kind": "crash"}
    filed(cli, spool_path, "2026-05-01T10:00:00Z", {**crash, "ts": "2026-05-01T09:00:00Z", "what": "index crashed"})
    first = cli("report", "--json", "--now", "2026-05-01T10:01:00Z")
    assert first.json["status"] == "nothing-due", "one witness is no escalation"
    filed(cli, spool_path, "2026-05-01T10:30:00Z", {**crash, "ts": "2026-05-01T10:29:00Z", "what": "index crashed again"})
    r = cli("report", "--json", "--now", "2026-05-01T10:35:00Z")
    assert r.code == 0, r.stderr
    assert r.json["prepared"]["kind"] == "update" and r.json["prepared"]["entries"] == 1
    doc = orjson.loads((m1nd_home / "reports" / f"{r.json['prepared']['run_id']}.json").read_bytes())
    (trigger,) = doc["update"]["triggers"]
    assert (trigger["trigger"], trigger["case"], trigger["box"]) == ("escalation", "fp:index/crash", "repo-a")
    assert status(cli, "2026-05-01T10:36:00Z")["cursor"] == "2026-05-01T02:00:00Z"


def test_a_sentinel_gone_red_makes_an_update_with_its_case(cli, spool_path, m1nd_home, tmp_path, monkeypatch):
    from m1nd.letters import letter_id

    repo = git_init(tmp_path / "src" / "repo-a")
    assert cli("roster", "add", str(repo)).code == 0
    night(m1nd_home)
    fp = "fp:seek/false_absence"
    witness = orjson.dumps({"ts": "2026-05-01T00:10:00Z", "class": "bug", "kind": "false_absence", "repo": "repo-a",
                            "tool": "seek", "what": "gone"})
    receipt = orjson.dumps({"ts": "2026-05-01T00:20:00Z", "class": "triage", "repo": "repo-a", "what": "fixed",
                            "answers": [letter_id(witness)], "disposition": "fixed", "fingerprint": fp,
                            "sentinel": {"probe": "test ! -e ghost.txt", "expect": "absent"}})
    filed(cli, spool_path, "2026-05-01T01:00:00Z", witness, receipt)
    assert cli("report", "--json", "--now", "2026-05-01T03:00:00Z").json["prepared"]["kind"] == "scheduled"
    assert cli("sentinels", "allow", letter_id(receipt)).code == 0
    (repo / "ghost.txt").write_text("it came back\n")
    monkeypatch.setenv("M1ND_NOW", "2026-05-01T10:00:00Z")
    assert cli("sentinels", "run").code == 1  # red: a regression letter filed into repo-a's box
    r = cli("report", "--json", "--now", "2026-05-01T10:05:00Z")
    assert r.code == 0, r.stderr
    assert r.json["prepared"]["kind"] == "update" and r.json["prepared"]["entries"] == 1
    doc = orjson.loads((m1nd_home / "reports" / f"{r.json['prepared']['run_id']}.json").read_bytes())
    (trigger,) = doc["update"]["triggers"]
    assert (trigger["trigger"], trigger["case"], trigger["box"]) == ("sentinel red", fp, "repo-a")
    assert trigger["what"] == f"sentinel regression: {fp} resurfaced"


def test_an_alert_class_letter_still_waiting_in_the_spool_makes_an_update_without_a_filing(cli, spool_path,
                                                                                          m1nd_home, capsys):
    """An agent appends to the spool and nothing files it (no hook, no distribute): the
    cron `m1nd report` still sees it, records it in the ledger and sends the update."""
    night(m1nd_home)
    first_report(cli, spool_path)
    args = ["--now", "2026-05-01T10:05:00Z", "--home", str(m1nd_home)]
    capsys.readouterr()
    assert quick.nothing_due(args)
    with open(spool_path, "ab") as fh:  # as an agent writes: one line appended, no m1nd command
        fh.write(orjson.dumps(letter("wrong memory, unfiled", "memory_misdelivery")) + b"\n")
    assert not quick.nothing_due(args), "the spool grew: the cron path looks"
    r = cli("report", "--json", "--now", "2026-05-01T10:05:00Z")
    assert r.code == 0, r.stderr
    prepared = r.json["prepared"]
    assert (prepared["kind"], prepared["entries"]) == ("update", 1)
    assert "wrong memory, unfiled" in delivered_md(m1nd_home, prepared["run_id"])
    capsys.readouterr()
    assert quick.nothing_due(["--now", "2026-05-01T10:10:00Z", "--home", str(m1nd_home)]), "quick again"
    # an ordinary letter appended the same way is looked at once and makes no update
    with open(spool_path, "ab") as fh:
        fh.write(orjson.dumps(letter("just a bug, unfiled")) + b"\n")
    later = cli("report", "--json", "--now", "2026-05-01T12:30:00Z")
    assert later.code == 0 and later.json["prepared"] is None, later.stdout
    capsys.readouterr()
    assert quick.nothing_due(["--now", "2026-05-01T12:31:00Z", "--home", str(m1nd_home)])
