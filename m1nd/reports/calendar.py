"""Schedules (reports contract section 1): the RRULE subset and report boundaries.

A rule is a wall time in the profile's zone, daily or on one weekday.  Boundaries are
computed as wall times, then converted to UTC: a wall time that does not exist (spring
forward) is skipped, one that occurs twice (fall back) counts once, at its first offset.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

from m1nd.errors import UsageError

DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
# Far enough back or ahead to find a boundary of any weekly rule, even one whose
# wall time is skipped by a DST change one week.
_SEARCH_DAYS = 16


@dataclass(frozen=True)
class Rule:
    freq: str  # DAILY | WEEKLY
    hour: int
    minute: int
    day: int | None  # 0 = Monday, for weekly rules

    def text(self) -> str:
        """The rule written out in full, in one fixed key order."""
        parts = [f"FREQ={self.freq}"]
        if self.day is not None:
            parts.append(f"BYDAY={DAYS[self.day]}")
        parts += [f"BYHOUR={self.hour}", f"BYMINUTE={self.minute}"]
        return ";".join(parts)


def _integer(key: str, value: str, low: int, high: int, rule: str) -> int:
    if not value.isascii() or not value.isdigit() or not low <= int(value) <= high:
        raise UsageError(f"schedule rule {rule!r}: {key} must be a whole number {low}-{high}, not {value!r}")
    return int(value)


def parse_rule(text: str) -> Rule:
    """One rule of the subset, or a UsageError that names what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"schedule rule {text!r}: empty")
    body = text.strip()
    if body.upper().startswith("RRULE:"):
        body = body[6:]
    fields: dict[str, str] = {}
    for part in body.split(";"):
        key, sep, value = part.partition("=")
        key = key.strip().upper()
        value = value.strip()
        if not sep or not key or not value:
            raise UsageError(f"schedule rule {text!r}: {part!r} is not KEY=VALUE")
        if key in fields:
            raise UsageError(f"schedule rule {text!r}: {key} given twice")
        fields[key] = value
    allowed = {"FREQ", "BYHOUR", "BYMINUTE", "BYDAY", "INTERVAL"}
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise UsageError(f"schedule rule {text!r}: {', '.join(unknown)} is not supported "
                         "(only FREQ=DAILY|WEEKLY, BYHOUR, BYMINUTE, BYDAY, INTERVAL=1)")
    freq = fields.get("FREQ", "").upper()
    if freq not in ("DAILY", "WEEKLY"):
        raise UsageError(f"schedule rule {text!r}: FREQ must be DAILY or WEEKLY")
    if "INTERVAL" in fields and fields["INTERVAL"] != "1":
        raise UsageError(f"schedule rule {text!r}: INTERVAL must be absent or 1")
    for key in ("BYHOUR", "BYMINUTE", "BYDAY"):
        if "," in fields.get(key, ""):
            raise UsageError(f"schedule rule {text!r}: {key} takes exactly one value, not a list")
    if "BYHOUR" not in fields:
        raise UsageError(f"schedule rule {text!r}: BYHOUR is required")
    hour = _integer("BYHOUR", fields["BYHOUR"], 0, 23, text)
    minute = _integer("BYMINUTE", fields["BYMINUTE"], 0, 59, text) if "BYMINUTE" in fields else 0
    day = None
    if freq == "WEEKLY":
        if "BYDAY" not in fields:
            raise UsageError(f"schedule rule {text!r}: a weekly rule needs exactly one BYDAY (MO..SU)")
        name = fields["BYDAY"].upper()
        if name not in DAYS:
            raise UsageError(f"schedule rule {text!r}: BYDAY must be one of {', '.join(DAYS)}, not {fields['BYDAY']!r}")
        day = DAYS.index(name)
    elif "BYDAY" in fields:
        raise UsageError(f"schedule rule {text!r}: a daily rule takes no BYDAY")
    return Rule(freq, hour, minute, day)


def load_zone(name: str):
    """An IANA zone by name; tzdata supplies the database where the system has none."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not isinstance(name, str) or not name or name.startswith("/") or ".." in name:
        raise UsageError(f"unknown timezone {name!r} (use an IANA name such as America/New_York)")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise UsageError(f"unknown timezone {name!r} (use an IANA name such as America/New_York)") from None


def wall_to_utc(day: date, at: time, zone) -> datetime | None:
    """The UTC instant of a wall time, or None when that wall time does not exist.

    fold=0 is the first of two occurrences at a fall-back change.
    """
    wall = datetime.combine(day, at)
    moment = wall.replace(tzinfo=zone, fold=0).astimezone(timezone.utc)
    if moment.astimezone(zone).replace(tzinfo=None) != wall:
        return None  # skipped by a spring-forward change
    return moment


def _boundaries_on(day: date, rules: tuple[Rule, ...], zone) -> list[datetime]:
    found = []
    for rule in rules:
        if rule.day is not None and day.weekday() != rule.day:
            continue
        moment = wall_to_utc(day, time(rule.hour, rule.minute), zone)
        if moment is not None:
            found.append(moment)
    return found


def _local_day(moment: datetime, zone) -> date:
    return moment.astimezone(zone).date()


def latest_at_or_before(now: datetime, rules: tuple[Rule, ...], zone) -> datetime | None:
    """The latest boundary at or before `now` (UTC)."""
    today = _local_day(now, zone)
    for back in range(_SEARCH_DAYS):
        day = today - timedelta(days=back)
        found = [b for b in _boundaries_on(day, rules, zone) if b <= now]
        if found:
            return max(found)
    return None


def latest_before(moment: datetime, rules: tuple[Rule, ...], zone) -> datetime | None:
    """The latest boundary strictly before `moment`."""
    return latest_at_or_before(moment - timedelta(microseconds=1), rules, zone)


def next_after(moment: datetime, rules: tuple[Rule, ...], zone) -> datetime | None:
    """The first boundary strictly after `moment`."""
    today = _local_day(moment, zone)
    for ahead in range(-1, _SEARCH_DAYS):
        day = today + timedelta(days=ahead)
        found = [b for b in _boundaries_on(day, rules, zone) if b > moment]
        if found:
            return min(found)
    return None


def boundaries_between(start: datetime, end: datetime, rules: tuple[Rule, ...], zone) -> list[datetime]:
    """Every boundary b with start < b <= end, ascending (for tests and catch-up notes)."""
    out = []
    moment = start
    while True:
        b = next_after(moment, rules, zone)
        if b is None or b > end:
            return out
        out.append(b)
        moment = b
