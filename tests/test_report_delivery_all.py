"""`m1nd report deliver` hands every outbox, `report commit` takes `--now`, and one
report is delivered once to each sink."""

from __future__ import annotations

from tests.conftest import write_spool


def letter(what):
    return {"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "class": "bug", "repo": "all", "what": what}


def test_deliver_without_a_profile_hands_every_outbox(cli, spool_path, m1nd_home, tmp_path):
    m1nd_home.mkdir(parents=True, exist_ok=True)
    (m1nd_home / "config.toml").write_text(
        '[report.profiles.night]\nrrules = ["FREQ=DAILY;BYHOUR=2"]\ntimezone = "UTC"\n')
    write_spool(spool_path, [letter("one")])
    cli("report", "alert", "--now", "2026-05-01T01:00:00Z")
    doc = cli("report", "prepare", "--json", "--profile", "night", "--now", "2026-05-01T03:00:00Z").json
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"], "--now", "2026-05-01T03:00:00Z")
    assert r.code == 0, r.stderr
    out = tmp_path / "out"
    r = cli("report", "deliver", "--to", str(out), "--now", "2026-05-01T03:01:00Z")
    assert r.code == 0, r.stderr
    assert f"delivered {doc['run_id']}" in r.stdout
    assert (out / f"{doc['run_id']}.md").exists()
    again = cli("report", "deliver", "--now", "2026-05-01T03:02:00Z")
    assert again.code == 0 and "every outbox is empty" in again.stdout


def test_commit_takes_now_and_rejects_a_bad_one(cli, spool_path):
    write_spool(spool_path, [letter("one")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")  # observed before the 13:00Z boundary
    doc = cli("report", "prepare", "--json", "--now", "2026-05-01T14:00:00Z").json
    assert cli("report", "commit", doc["run_id"], "--digest", doc["digest"], "--now", "not-a-time").code == 2
    r = cli("report", "commit", doc["run_id"], "--digest", doc["digest"], "--now", "2026-05-01T14:00:00Z", "--json")
    assert r.code == 0 and r.json["status"] == "committed"


def test_the_same_manual_window_is_delivered_once_to_each_sink(cli, spool_path, tmp_path):
    write_spool(spool_path, [letter("in the window")])
    cli("report", "alert", "--now", "2026-05-01T11:00:00Z")
    first, second = tmp_path / "first", tmp_path / "second"
    window = ("--since", "2026-05-01T10:00:00Z", "--until", "2026-05-01T12:00:00Z", "--now", "2026-05-01T12:30:00Z")
    assert cli("report", *window, "--to", str(first)).code == 0
    assert cli("report", *window, "--to", str(second)).code == 0
    assert [p.name for p in first.glob("*.md")] == [p.name for p in second.glob("*.md")] != []
    assert "in the window" in next(second.glob("*.md")).read_text()
    before = {p: p.stat().st_mtime_ns for p in second.iterdir()}
    assert cli("report", *window, "--to", str(second)).code == 0
    assert {p: p.stat().st_mtime_ns for p in second.iterdir()} == before, "delivering twice writes nothing new"


def night_profile(home, extra=""):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[report]\ndefault = "night"\n[report.profiles.night]\nrrules = ["FREQ=DAILY;BYHOUR=2"]\ntimezone = "UTC"\n{extra}')


def test_a_disabled_profile_makes_nothing_keeps_its_cursor_and_catches_up_when_on_again(cli, spool_path, m1nd_home):
    night_profile(m1nd_home)
    write_spool(spool_path, [letter("first night")])
    cli("report", "alert", "--now", "2026-05-01T01:00:00Z")
    assert cli("report", "--now", "2026-05-01T03:00:00Z").code == 0
    night_profile(m1nd_home, "enabled = false\n")
    write_spool(spool_path, [letter("while off")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")
    off = cli("report", "--now", "2026-05-03T03:00:00Z")
    assert off.code == 0 and "is off (enabled = false)" in off.stdout
    status = cli("report", "status", "--json", "--now", "2026-05-03T03:00:00Z").json["profiles"]["night"]
    assert status["cursor"] == "2026-05-01T02:00:00Z" and status["enabled"] is False
    night_profile(m1nd_home)
    on = cli("report", "--json", "--now", "2026-05-03T03:00:00Z").json
    assert on["prepared"]["classification"] == "catch-up" and on["prepared"]["entries"] == 1
    assert on["prepared"]["period"] == {"start": "2026-05-01T02:00:00Z", "end": "2026-05-03T02:00:00Z",
                                        "timezone": "UTC"}


def test_a_sink_is_tried_max_attempts_times_then_the_report_is_failed_until_retry(cli, spool_path, m1nd_home, tmp_path):
    night_profile(m1nd_home, "max_attempts = 2\n")
    write_spool(spool_path, [letter("one")])
    cli("report", "alert", "--now", "2026-05-01T01:00:00Z")
    assert cli("report", "--to", "exec:exit 1", "--now", "2026-05-01T03:00:00Z").code == 1
    second = cli("report", "deliver", "--to", "exec:exit 1", "--now", "2026-05-01T03:05:00Z")
    assert second.code == 1 and "marked failed after 2 attempts" in second.stderr
    status = cli("report", "status", "--json").json["profiles"]["night"]
    assert len(status["failed"]) == 1 and status["failed"] == status["outbox"]
    run_id = status["failed"][0]
    held = cli("report", "deliver", "--to", "exec:exit 1", "--now", "2026-05-01T03:10:00Z")
    assert held.code == 1 and f"not tried again until `m1nd report deliver --retry {run_id}`" in held.stderr
    text = cli("report", "status").stdout
    assert f"failed {run_id}" in text
    retried = cli("report", "deliver", "--retry", run_id, "--to", "exec:cat >/dev/null", "--now", "2026-05-01T03:15:00Z")
    assert retried.code == 0, retried.stderr
    assert cli("report", "status", "--json").json["profiles"]["night"]["outbox"] == []


def test_a_report_failed_past_max_attempts_shows_in_the_next_reports_status_section(cli, spool_path, m1nd_home, tmp_path):
    night_profile(m1nd_home, "max_attempts = 1\n")
    write_spool(spool_path, [letter("one")])
    cli("report", "alert", "--now", "2026-05-01T01:00:00Z")
    failing = cli("report", "--json", "--to", "exec:exit 1", "--now", "2026-05-01T03:00:00Z")
    assert failing.code == 1
    failed = failing.json["prepared"]["run_id"]
    write_spool(spool_path, [letter("two")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")
    out = tmp_path / "out"
    nxt = cli("report", "--json", "--to", str(out), "--now", "2026-05-02T03:00:00Z")
    run_id = nxt.json["prepared"]["run_id"]
    # the new report is delivered; the failed one still waits for its own sink (exit 1 says so)
    assert nxt.code == 1 and {(d["run_id"], d["status"]) for d in nxt.json["deliveries"]} == {
        (run_id, "delivered"), (failed, "failed")}
    text = (out / f"{run_id}.md").read_text()
    status = text[text.index("## Status"):]
    assert f"Delivery failed: {failed}" in status and f"`m1nd report deliver --retry {failed}`" in status
    doc = (out / f"{run_id}.json").read_text()
    assert f'"failed_deliveries": [\n    "{failed}"\n  ]' in doc
    html = (out / f"{run_id}.html").read_text()
    assert f"Delivery failed: {failed}" in html[html.index("<h2>Status</h2>"):]


def test_report_without_a_profile_runs_the_default_and_every_enabled_profile_of_the_config(cli, spool_path, m1nd_home,
                                                                                          tmp_path, capsys):
    from m1nd.reports import quick

    m1nd_home.mkdir(parents=True, exist_ok=True)
    (m1nd_home / "config.toml").write_text(
        '[report.profiles.night]\nrrules = ["FREQ=DAILY;BYHOUR=2"]\ntimezone = "UTC"\n'
        '[report.profiles.dawn]\nrrules = ["FREQ=DAILY;BYHOUR=5"]\ntimezone = "UTC"\n'
        '[report.profiles.later]\nrrules = ["FREQ=DAILY;BYHOUR=3"]\ntimezone = "UTC"\nenabled = false\n')
    write_spool(spool_path, [letter("one")])
    assert cli("distribute", "--now", "2026-05-01T01:00:00Z").code == 0
    r = cli("report", "--json", "--to", str(tmp_path / "out"), "--now", "2026-05-01T14:00:00Z")
    assert r.code == 0, r.stderr
    ran = [(p["profile"], p["status"]) for p in r.json["profiles"]]
    assert ran == [("twice-daily", "done"), ("dawn", "done"), ("night", "done")], "weekly and the disabled never run"
    assert all(p["prepared"]["entries"] == 1 for p in r.json["profiles"])
    capsys.readouterr()
    args = ["--now", "2026-05-01T14:05:00Z", "--home", str(m1nd_home)]
    assert quick.nothing_due(args)
    lines = capsys.readouterr().out.splitlines()
    assert [l.split(":")[0] for l in lines] == ["nothing due for profile twice-daily", "nothing due for profile dawn",
                                                "nothing due for profile night"]
    one = cli("report", "--json", "--profile", "night", "--now", "2026-05-01T14:06:00Z")
    assert one.json["profile"] == "night" and one.json["status"] == "nothing-due"


def test_a_report_bound_for_a_one_off_sink_waits_for_that_sink_not_the_profiles(cli, spool_path, m1nd_home,
                                                                                 tmp_path):
    """The outbox holds (run, sink) pairs: a report whose one-off `--to exec:…` failed
    is retried there by the next plain run, never handed to the profile's own sink."""
    own = tmp_path / "own-sink"
    night_profile(m1nd_home, f'sink = "{own}"\n')
    write_spool(spool_path, [letter("one")])
    cli("report", "alert", "--now", "2026-05-01T01:00:00Z")
    failed = cli("report", "--json", "--to", "exec:exit 1", "--now", "2026-05-01T03:00:00Z")
    assert failed.code == 1
    run_id = failed.json["committed"]["run_id"]
    mail = tmp_path / "mail"
    plain = cli("report", "--json", "--now", "2026-05-01T04:00:00Z")  # nothing due; the outbox is tried
    assert plain.code == 1
    assert [(d["run_id"], d["sink"], d["status"]) for d in plain.json["deliveries"]] == [
        (run_id, "exec:exit 1", "failed")]
    assert not own.exists() or not list(own.glob("*.md")), "handed to the profile's sink instead"
    assert cli("report", "deliver", "--now", "2026-05-01T04:10:00Z").code == 1  # to its own sink again
    assert not own.exists() or not list(own.glob("*.md"))
    assert cli("report", "status", "--json").json["profiles"]["night"]["outbox"] == [run_id]
    # the next cadence report goes to the profile's sink; the failed one still waits for exec
    write_spool(spool_path, [letter("one"), letter("two")])
    cli("report", "alert", "--now", "2026-05-01T12:00:00Z")
    nightly = cli("report", "--json", "--now", "2026-05-02T03:00:00Z")
    sinks = {d["run_id"]: (d["sink"], d["status"]) for d in nightly.json["deliveries"]}
    assert sinks[run_id][0] == "exec:exit 1"
    second = nightly.json["committed"]["run_id"]
    assert sinks[second] == (f"dir:{own}", "delivered") and (own / f"{second}.md").exists()
    assert not (own / f"{run_id}.md").exists()
    # an explicit `deliver --to` sends it where the user says
    took = cli("report", "deliver", "--to", f"exec:cat > {mail}", "--now", "2026-05-02T04:00:00Z")
    assert took.code == 0, took.stderr
    assert mail.read_text().startswith("# m1nd report: night, 2026-05-01 02:00 UTC")  # the first report
    assert cli("report", "status", "--json").json["profiles"]["night"]["outbox"] == []


def test_retry_of_a_report_no_outbox_holds_is_not_found(cli, spool_path, m1nd_home):
    write_spool(spool_path, [letter("one")])
    r = cli("report", "deliver", "--retry", "20260501T0200Z-s-ca07f4c5fc24")
    assert r.code == 3 and "no report 20260501T0200Z-s-ca07f4c5fc24 waits in an outbox" in r.stderr, r.stderr


def test_a_bad_report_timeout_is_a_usage_error_before_anything_is_frozen(cli, spool_path, m1nd_home, monkeypatch):
    night_profile(m1nd_home)
    write_spool(spool_path, [letter("one")])
    cli("report", "alert", "--now", "2026-05-01T01:00:00Z")
    for bad in ("1e9", "nan", "inf", "abc", "0", "-5"):
        monkeypatch.setenv("M1ND_REPORT_TIMEOUT", bad)
        r = cli("report", "--to", "exec:cat >/dev/null", "--now", "2026-05-01T03:00:00Z")
        assert r.code == 2 and r.stderr.startswith("m1nd: error: M1ND_REPORT_TIMEOUT must be"), (bad, r.stderr)
        assert len(r.stderr.splitlines()) == 1
    monkeypatch.delenv("M1ND_REPORT_TIMEOUT")
    status = cli("report", "status", "--json").json["profiles"]["night"]
    assert status["cursor"] is None and status["outbox"] == [], "nothing was frozen or committed"


def test_a_built_in_profile_is_turned_off_with_enabled_false_alone(cli, spool_path, m1nd_home):
    m1nd_home.mkdir(parents=True, exist_ok=True)
    (m1nd_home / "config.toml").write_text('[report.profiles.twice-daily]\nenabled = false\n')
    write_spool(spool_path, [letter("one")])
    r = cli("report", "--now", "2026-05-01T22:00:00Z")
    assert r.code == 0 and "profile twice-daily is off (enabled = false)" in r.stdout, r.stdout + r.stderr
    shown = cli("report", "profile", "twice-daily", "--json").json
    assert shown["rrules"] == ["FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "FREQ=DAILY;BYHOUR=17;BYMINUTE=0"]
    (m1nd_home / "config.toml").write_text('[report.profiles.daily]\nenabled = false\n')
    assert cli("report", "profile", "day", "--json").json["name"] == "daily"  # its alias kept


def test_a_sink_in_the_config_is_an_absolute_directory_or_a_command(cli, spool_path, m1nd_home):
    m1nd_home.mkdir(parents=True, exist_ok=True)
    write_spool(spool_path, [letter("one")])
    for bad in ("reports", "ftp://x", "exec:", "exec:   "):
        (m1nd_home / "config.toml").write_text(f'[report.profiles.night]\nrrules = ["FREQ=DAILY;BYHOUR=2"]\n'
                                               f'sink = "{bad}"\n')
        for args in (("report", "--profile", "night"), ("report", "profile", "night")):
            r = cli(*args)
            assert r.code == 2 and "sink must be an absolute directory (or ~/…) or 'exec:COMMAND'" in r.stderr, (bad, r.stderr)
    (m1nd_home / "config.toml").write_text('[report.profiles.night]\nrrules = ["FREQ=DAILY;BYHOUR=2"]\n'
                                           'sink = "~/night-reports"\n')
    assert cli("report", "profile", "night").code == 0


def test_a_config_that_is_wrong_names_the_file_in_one_line(cli, spool_path, m1nd_home):
    """A config that cannot be parsed fails closed (exit 1, as a file that cannot be
    read); a value that names nothing is a usage error (exit 2)."""
    m1nd_home.mkdir(parents=True, exist_ok=True)
    config = m1nd_home / "config.toml"
    report = ("report", "--now", "2026-05-01T22:00:00Z")
    for text, why, code in (("[report\n", "is not valid TOML", 1),
                            ('[report]\ndefault = "nope"\n', "report.default names no profile 'nope'", 2)):
        config.write_text(text)
        r = cli(*report)
        assert r.code == code and str(config) in r.stderr and why in r.stderr, (text, r.code, r.stderr)
        assert len(r.stderr.splitlines()) == 1
