"""Held letters (mailbox contract, section 4): a held letter's text never leaves.

One place decides whether a letter is held, and one shape says so wherever a letter
is shown (views, `show`, reports, alerts, cases, serve): its id, `ts`, state and
`held: KIND`, none of its other fields.  Only `m1nd show ID --reveal` on a terminal,
and the v0 document, print it whole.
"""

from __future__ import annotations

import re

_ID = re.compile(r"[0-9a-f]{12}")
_TS_CHARS = re.compile(r"[0-9T:.,+\- Z]{4,40}")  # the characters of an ISO 8601 moment


def held_kind(model, digest: str) -> str | None:
    """The kind of likely secret holding this letter back, else None.  Judged wherever
    the letter lives: a box line that arrived by git is held too.  Only a letter of
    the medulla box (private to the home) is never held: one that lives there, or
    waits in the spool routed there, and is in no project box."""
    kind = model.secret_of(digest)  # judged once, when the line was indexed
    if not kind:
        return None
    boxes = [loc for loc in model.locations(digest) if loc.kind == "box"]
    if boxes:
        return kind if any(loc.root is not None for loc in boxes) else None
    row = model.by_digest(digest)
    return None if row is not None and for_medulla(model.run, row.brain, row.repo) else kind


def held_off_machine(model, digest: str) -> str | None:
    """`held_kind` for what leaves the machine (reports, alerts, their sinks): there a
    letter with a likely secret is held whatever box it is in, the medulla box's too
    (private to the home, but a report goes to a mailer)."""
    return model.secret_of(digest) or None


def for_medulla(run, brain: str, repo: str) -> bool:
    from m1nd.routing import MEDULLA

    return run.roots.resolve(brain, repo).kind == MEDULLA


def held_text(kind: str) -> str:
    """What a held letter shows in place of its text."""
    return f"(held: {kind}; m1nd doctor says how to redact it)"


def held_ts(ts: str) -> str:
    """A held letter's `ts` as it may be shown: a secret may sit in any field, so only a
    `ts` that is a timestamp is shown; any other text shows as ""."""
    from m1nd.timefmt import parse_ts

    return ts if _TS_CHARS.fullmatch(ts) and parse_ts(ts) is not None else ""


def held_answers(answers) -> tuple[str, ...]:
    """A held letter's `answers` as they may be shown: only entries that are letter ids
    (12 lowercase hex digits; nothing else can name a letter, so its fate is the same)."""
    return tuple(a for a in answers if _ID.fullmatch(a))


def held_row(row, kind: str):
    """A read-model row as a held letter shows: its id, ts and the kind of secret in
    place of its text; every other field blank (its answers kept, those that are ids,
    for its fate)."""
    ts = held_ts(row.ts)
    return row._replace(ts=ts, sortkey=row.sortkey if ts else "!", agent="", klass="", repo="", brain="", tool="",
                        what=held_text(kind), expected="", snippet="", answers=held_answers(row.answers),
                        kind=row.kind if row.kind in (None, "mission") else None,
                        disposition=None, fingerprint=None, case_id=None, sentinel=None)
