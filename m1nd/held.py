"""Held letters (mailbox contract, section 4): a held letter's text never leaves.

One place decides whether a letter is held, and one shape says so wherever a letter
is shown (views, `show`, reports, alerts, cases, serve): its id, `ts`, state and
`held: KIND`, none of its other fields.  Only `m1nd show ID --reveal` on a terminal,
and the v0 document, print it whole.
"""

from __future__ import annotations


def held_kind(model, digest: str) -> str | None:
    """The kind of likely secret holding this letter back, when it is held (in no box), else None."""
    if any(loc.kind == "box" for loc in model.locations(digest)):
        return None
    return model.secret_of(digest)


def held_text(kind: str) -> str:
    """What a held letter shows in place of its text."""
    return f"(held: {kind}; m1nd doctor says how to redact it)"


def held_row(row, kind: str):
    """A read-model row as a held letter shows: its id, ts and the kind of secret in
    place of its text; every other field blank (its answers kept, for its fate)."""
    return row._replace(agent="", klass="", repo="", brain="", tool="", what=held_text(kind), expected="",
                        snippet="", disposition=None, fingerprint=None, case_id=None, sentinel=None)
