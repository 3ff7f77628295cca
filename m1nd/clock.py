"""The clock of a run: `--now`, else env M1ND_NOW, else the real clock; always UTC."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from m1nd.errors import UsageError


def parse_now(value: str | None = None) -> datetime:
    text = value or os.environ.get("M1ND_NOW")
    if not text:
        return datetime.now(timezone.utc)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"not an ISO 8601 time: {text!r} (e.g. 2026-05-01T09:00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        moment = moment.astimezone(timezone.utc)
    except OverflowError:
        moment = None
    # a run adds days and weeks to its clock (report windows, cooldowns): keep room for them
    if moment is None or not 1000 <= moment.year <= 9000:
        raise UsageError(f"time out of range: {text!r} (a year from 1000 to 9000)")
    return moment


def stamp(moment: datetime) -> str:
    """`YYYY-MM-DDTHH:MM:SSZ`."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
