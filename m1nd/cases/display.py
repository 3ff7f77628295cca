"""How a fingerprint is shown to a person, the same in `m1nd cases` and on the page:
what recurs most and most recently first, where it stands in words, and a readable
name (the fingerprint string itself never changes; `--json` keeps it and name order)."""

from __future__ import annotations

from datetime import timedelta

from m1nd.cases import fingerprints as fps

RECENT_DAYS = 7


def recent(entry, since) -> int:
    """How many of the entry's witnesses have a `ts` at or after `since`."""
    from m1nd.timefmt import parse_ts

    return sum(1 for w in entry.witnesses if (t := parse_ts(w.ts)) is not None and t >= since)


def by_what_matters(entries, now=None) -> list:
    """Most witnesses in the last 7 days first (by their `ts`), then most witnesses,
    then by name: what recurs most, and most recently, is what a person looks for."""
    from m1nd.clock import parse_now

    since = (now or parse_now()) - timedelta(days=RECENT_DAYS)
    return sorted(entries, key=lambda e: (-recent(e, since), -len(e.witnesses), e.fingerprint))


def standing(e) -> str:
    """Where a fingerprint stands, in words: "recurring, escalated, no receipt yet",
    "fixed, sentinel green"."""
    words = []
    if e.case:
        words.append(e.case.disposition)
        sentinel = {"green": "sentinel green", "red": "sentinel red: the symptom is back",
                    "not_run": "sentinel not run yet", "not_allowed": "sentinel not allowed here"}
        if e.case.sentinel in sentinel:
            words.append(sentinel[e.case.sentinel])
        if e.case.state == "open":
            words.append("a witness is still open")
        return ", ".join(words)
    words.append("recurring" if len(e.witnesses) > 1 else "seen once")
    if e.escalation:
        words.append("escalated")
    words.append("no receipt yet")
    return ", ".join(words)


def display_name(fingerprint: str) -> str:
    """`fp:/crash` reads like a path: say what it is.  Any other fingerprint is its own name."""
    family, kind = fps.split(fingerprint)
    if family == "":
        return f"{fingerprint} ({kind} in letters that name no tool)"
    return fingerprint


def page_doc(overlay, now=None) -> dict:
    """The page's document: `m1nd cases --json`'s entries in what-matters order, each
    with its display name and its standing in words."""
    from m1nd.clock import parse_now

    now = now or parse_now()
    since = now - timedelta(days=RECENT_DAYS)
    rows = []
    for e in by_what_matters(overlay.entries, now):
        rows.append(e.as_json() | {"name": display_name(e.fingerprint), "standing": standing(e),
                                   "recent": recent(e, since)})
    return {"fingerprints": rows, "kindless": overlay.kindless}
