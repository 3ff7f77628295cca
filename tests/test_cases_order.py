"""`m1nd cases` lists what recurs most, and most recently, first, and says in words
where each fingerprint stands."""

from __future__ import annotations

from conftest import run_cli


def test_cases_list_what_recurs_most_recently_first_and_say_where_each_stands(spool_path):
    # FIXED_NOW is 2026-05-03: beta's two witnesses are this week, alpha's three are old.
    for ts in ("2026-01-01T09:00:00Z", "2026-01-02T09:00:00Z", "2026-01-03T09:00:00Z"):
        run_cli("write", "--brain", "medulla", "--tool", "alpha", "--kind", "crash", "--what", "old", "--ts", ts)
    for ts in ("2026-05-01T09:00:00Z", "2026-05-02T09:00:00Z"):
        run_cli("write", "--brain", "medulla", "--tool", "beta", "--kind", "crash", "--what", "new", "--ts", ts)
    run_cli("write", "--brain", "medulla", "--tool", "gamma", "--kind", "crash", "--what", "once",
            "--ts", "2026-01-01T09:00:00Z")
    assert run_cli("distribute").code == 0
    heads = [line for line in run_cli("cases").stdout.splitlines() if line.startswith("fp:")]
    assert [h.split(" — ")[0] for h in heads] == ["fp:beta/crash", "fp:alpha/crash", "fp:gamma/crash"]
    assert heads[0].endswith("2 witnesses: recurring, escalated, no receipt yet")
    assert heads[2].endswith("1 witness: seen once, no receipt yet")
    names = [f["fingerprint"] for f in run_cli("cases", "--json").json["fingerprints"]]
    assert names == sorted(names), "--json keeps name order"


def test_a_fingerprint_without_a_tool_gets_a_readable_name_and_keeps_its_string(spool_path):
    for ts in ("2026-05-01T09:00:00Z", "2026-05-02T09:00:00Z"):
        run_cli("write", "--brain", "medulla", "--kind", "crash", "--what", "it fell over", "--ts", ts)
    assert run_cli("distribute").code == 0
    head = [line for line in run_cli("cases").stdout.splitlines() if line.startswith("fp:")][0]
    assert head.startswith("fp:/crash (crash in letters that name no tool) — 2 witnesses")
    assert run_cli("cases", "--json").json["fingerprints"][0]["fingerprint"] == "fp:/crash"
