"""Report schedules: the RRULE subset, real IANA zones, DST exactness, snapping."""

from datetime import datetime, timezone

import pytest

from m1nd.errors import UsageError
from m1nd.reports.calendar import latest_at_or_before, load_zone, next_after, parse_rule


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def z(text: str) -> str:
    return text


def at(rules, zone, now):
    return latest_at_or_before(utc(now), tuple(parse_rule(r) for r in rules), load_zone(zone))


def after(rules, zone, moment):
    return next_after(utc(moment), tuple(parse_rule(r) for r in rules), load_zone(zone))


VECTORS = [
    # (rules, zone, now, latest boundary at or before now)
    # New York spring forward, 2026-03-08 02:00 EST -> 03:00 EDT: 02:30 does not exist that day
    (["FREQ=DAILY;BYHOUR=2;BYMINUTE=30"], "America/New_York", "2026-03-08T12:00:00Z", "2026-03-07T07:30:00Z"),
    (["FREQ=DAILY;BYHOUR=2;BYMINUTE=30"], "America/New_York", "2026-03-09T07:30:00Z", "2026-03-09T06:30:00Z"),
    # 09:00 is 14:00Z before the change and 13:00Z after it
    (["FREQ=DAILY;BYHOUR=9"], "America/New_York", "2026-03-07T23:00:00Z", "2026-03-07T14:00:00Z"),
    (["FREQ=DAILY;BYHOUR=9"], "America/New_York", "2026-03-08T23:00:00Z", "2026-03-08T13:00:00Z"),
    # New York fall back, 2026-11-01 02:00 EDT -> 01:00 EST: 01:30 happens twice, counted once at EDT
    (["FREQ=DAILY;BYHOUR=1;BYMINUTE=30"], "America/New_York", "2026-11-01T06:45:00Z", "2026-11-01T05:30:00Z"),
    (["FREQ=DAILY;BYHOUR=1;BYMINUTE=30"], "America/New_York", "2026-11-01T05:29:59Z", "2026-10-31T05:30:00Z"),
    # Berlin spring forward 2026-03-29 02:00 CET -> 03:00 CEST: a Sunday 02:30 rule skips that week
    (["FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=30"], "Europe/Berlin", "2026-03-29T12:00:00Z", "2026-03-22T01:30:00Z"),
    # Berlin fall back 2026-10-25 03:00 CEST -> 02:00 CET: 02:30 counted once, at CEST
    (["FREQ=DAILY;BYHOUR=2;BYMINUTE=30"], "Europe/Berlin", "2026-10-25T01:45:00Z", "2026-10-25T00:30:00Z"),
    # Kathmandu, UTC+05:45 all year
    (["FREQ=DAILY;BYHOUR=9"], "Asia/Kathmandu", "2026-06-01T03:15:00Z", "2026-06-01T03:15:00Z"),
    (["FREQ=DAILY;BYHOUR=9"], "Asia/Kathmandu", "2026-06-01T03:14:59Z", "2026-05-31T03:15:00Z"),
    # Adelaide, UTC+09:30 / +10:30: fall back 2026-04-05 03:00 -> 02:00, 02:30 once at +10:30
    (["FREQ=DAILY;BYHOUR=2;BYMINUTE=30"], "Australia/Adelaide", "2026-04-04T17:30:00Z", "2026-04-04T16:00:00Z"),
    # Adelaide spring forward 2026-10-04 02:00 -> 03:00: 02:30 skipped, so the 3rd (+09:30) is the latest
    (["FREQ=DAILY;BYHOUR=2;BYMINUTE=30"], "Australia/Adelaide", "2026-10-04T06:00:00Z", "2026-10-02T17:00:00Z"),
    # twice-daily: the later of the two rules that day
    (["FREQ=DAILY;BYHOUR=9", "FREQ=DAILY;BYHOUR=17"], "America/New_York", "2026-05-03T22:00:00Z", "2026-05-03T21:00:00Z"),
    # weekly preset: Friday 18:00 New York
    (["FREQ=WEEKLY;BYDAY=FR;BYHOUR=18"], "America/New_York", "2026-05-04T12:00:00Z", "2026-05-01T22:00:00Z"),
]


@pytest.mark.parametrize("rules,zone,now,expected", VECTORS)
def test_the_latest_boundary_at_or_before_now_is_exact_across_dst(rules, zone, now, expected):
    assert at(rules, zone, now) == utc(expected)


def test_a_fall_back_time_counts_once_so_the_next_boundary_is_the_next_day():
    rules = ["FREQ=DAILY;BYHOUR=1;BYMINUTE=30"]
    assert after(rules, "America/New_York", "2026-11-01T05:30:00Z") == utc("2026-11-02T06:30:00Z")


def test_a_skipped_spring_forward_time_is_not_a_next_boundary():
    rules = ["FREQ=DAILY;BYHOUR=2;BYMINUTE=30"]
    assert after(rules, "America/New_York", "2026-03-07T07:30:00Z") == utc("2026-03-09T06:30:00Z")
    assert after(rules, "Europe/Berlin", "2026-03-28T01:30:00Z") == utc("2026-03-30T00:30:00Z")


def test_the_exact_second_of_the_run_never_moves_the_period_end():
    rules = ["FREQ=DAILY;BYHOUR=9", "FREQ=DAILY;BYHOUR=17"]
    ends = {at(rules, "America/New_York", f"2026-05-03T{h}Z") for h in ("13:00:00", "13:00:01", "16:59:59", "20:59:59")}
    assert ends == {utc("2026-05-03T13:00:00Z")}
    assert at(rules, "America/New_York", "2026-05-03T12:59:59Z") == utc("2026-05-02T21:00:00Z")


def test_rules_are_written_out_in_full():
    assert parse_rule("FREQ=DAILY;BYHOUR=9").text() == "FREQ=DAILY;BYHOUR=9;BYMINUTE=0"
    assert parse_rule("freq=weekly;byday=fr;byhour=18").text() == "FREQ=WEEKLY;BYDAY=FR;BYHOUR=18;BYMINUTE=0"
    assert parse_rule("RRULE:FREQ=DAILY;BYHOUR=7;BYMINUTE=15;INTERVAL=1").text() == "FREQ=DAILY;BYHOUR=7;BYMINUTE=15"


@pytest.mark.parametrize("text,why", [
    ("FREQ=HOURLY;BYHOUR=9", "FREQ must be DAILY or WEEKLY"),
    ("FREQ=DAILY;BYHOUR=9;COUNT=3", "COUNT is not supported"),
    ("FREQ=DAILY;BYHOUR=9;UNTIL=20260101T000000Z", "UNTIL is not supported"),
    ("FREQ=DAILY;BYHOUR=9,17", "exactly one value"),
    ("FREQ=DAILY;BYHOUR=24", "BYHOUR must be a whole number 0-23"),
    ("FREQ=DAILY;BYHOUR=9;BYMINUTE=60", "BYMINUTE must be a whole number 0-59"),
    ("FREQ=DAILY;BYHOUR=9;BYHOUR=10", "BYHOUR given twice"),
    ("FREQ=DAILY;BYMINUTE=5", "BYHOUR is required"),
    ("FREQ=WEEKLY;BYHOUR=9", "needs exactly one BYDAY"),
    ("FREQ=WEEKLY;BYDAY=MO,TU;BYHOUR=9", "exactly one value"),
    ("FREQ=WEEKLY;BYDAY=XX;BYHOUR=9", "BYDAY must be one of"),
    ("FREQ=DAILY;BYDAY=MO;BYHOUR=9", "a daily rule takes no BYDAY"),
    ("FREQ=DAILY;BYHOUR=9;INTERVAL=2", "INTERVAL must be absent or 1"),
    ("FREQ=DAILY;BYHOUR=+9", "BYHOUR must be a whole number"),
    ("FREQ=DAILY;BYHOUR", "is not KEY=VALUE"),
    ("", "empty"),
])
def test_every_rule_outside_the_subset_is_rejected_with_its_reason(text, why):
    with pytest.raises(UsageError) as info:
        parse_rule(text)
    assert why in info.value.message


@pytest.mark.parametrize("name", ["Mars/Olympus", "America/New_Yrok", "../etc/passwd", "/etc/localtime", ""])
def test_an_unknown_zone_is_rejected(name):
    with pytest.raises(UsageError, match="unknown timezone"):
        load_zone(name)
