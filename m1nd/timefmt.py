"""Letter timestamps: parsed to UTC for sorting and for `m1nd write --ts`.

A letter's `ts` is kept as written (its bytes travel); views sort by the moment it
names.  `sort_key` is that moment in UTC as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (a
string that sorts in time order); a `ts` that is not ISO 8601 sorts before every
parseable one, by its text.
"""

from __future__ import annotations

from datetime import datetime, timezone


def parse_ts(ts: str) -> datetime | None:
    """The UTC moment of an ISO 8601 timestamp (a date alone is its midnight UTC;
    no offset means UTC), or None."""
    text = ts.strip()
    if not text or len(text) > 64:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except (OverflowError, ValueError):
        return None


def sort_key(ts: str) -> str:
    if len(ts) == 20 and ts[4] == "-" and ts[10] == "T" and ts[19] == "Z" and ts[:4].isdigit():
        # the common form `YYYY-MM-DDTHH:MM:SSZ`, checked cheaply
        try:
            datetime(int(ts[:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]), int(ts[17:19]))
        except ValueError:
            return "!" + ts
        return ts[:19] + ".000000Z"
    moment = parse_ts(ts)
    if moment is None:
        return "!" + ts  # "!" sorts before digits: unparseable times are oldest
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ").rjust(27, "0")


def to_utc_stamp(ts: str) -> str | None:
    """`YYYY-MM-DDTHH:MM:SSZ` (fractions kept when given) for an ISO 8601 input, else None."""
    moment = parse_ts(ts)
    if moment is None:
        return None
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
