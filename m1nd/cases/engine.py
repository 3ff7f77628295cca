"""The one writer of engine letters: escalations, sentinel regressions, abandonment.

An engine letter has `agent` `m1nd:engine`, a fixed key order and content derived
from its inputs only, so that its bytes, and so its id, are the same on every
machine and every run; filing it twice files it once (the box's dedup by id).  It
goes straight into a box through the ordinary locked append of `boxes.py`, never
into the spool.
"""

from __future__ import annotations

import hashlib

import orjson

from m1nd import boxes
from m1nd.boxes import Box
from m1nd.boxindex import BoxIndex
from m1nd.cases.fingerprints import ENGINE_AGENT
from m1nd.paths import ensure_home
from m1nd.run import Run

# Keys in this order; empty optional values are left out (as `m1nd write` does).
KEY_ORDER = ("ts", "agent", "class", "kind", "repo", "brain", "tool", "what", "fingerprint", "sentinel", "session")


def compose(**fields) -> bytes:
    fields["agent"] = ENGINE_AGENT
    unknown = set(fields) - set(KEY_ORDER)
    if unknown:
        raise ValueError(f"not an engine letter key: {sorted(unknown)}")
    return orjson.dumps({k: fields[k] for k in KEY_ORDER if fields.get(k) not in (None, "")})


def escalation(fingerprint: str, kind: str, first, second, holder=None) -> bytes:
    """cases.md 2: `ts` and `repo` of the witness whose box takes it (`holder`: the second
    witness unless that one is in no box here), the first two witnesses named in `what`."""
    holder = holder or second
    return compose(
        ts=holder.ts, **{"class": "triage"}, kind=kind, repo=holder.repo, brain=holder.brain,
        what=f"escalation: {fingerprint} has a second witness ({first.id} then {second.id})",
        fingerprint=fingerprint,
    )


def regression(fingerprint: str, family: str, kind: str, day: str, receipt) -> bytes:
    """cases.md 4: one per fingerprint per UTC day (the day is the only varying input)."""
    return compose(
        ts=day, **{"class": "bug"}, kind=kind, repo=receipt.repo, brain=receipt.brain, tool=family,
        what=f"sentinel regression: {fingerprint} resurfaced", fingerprint=fingerprint, sentinel=receipt.id,
    )


def abandonment(session: str, ts: str, tool: str, verb: str, outcome: str, repo: str) -> bytes:
    """cases.md 6: cites the tool, the last verb and the failing outcome, and the session id."""
    return compose(
        ts=ts, **{"class": "honesty"}, kind="overclaimed_verdict", repo=repo or "all",
        brain="" if repo else "medulla", tool=tool,
        what=f"abandonment: session {session} stopped after {tool} {verb} returned {outcome}",
        session=session,
    )


def file_into(run: Run, box: Box, raws: list[bytes], gate=None) -> int:
    """Append engine letters to a box (locked, deduplicated); returns how many were new.

    Raises boxes.Refused for a refused box and OSError when it cannot be written.  A
    letter that would look like a secret (its text comes from other letters) is never
    put into a project box.  `gate` (a consented box's, in a hook): nothing is written
    once the hook has no time left (the secret check may have taken it).
    """
    from m1nd.secrets import likely_secret

    if not box.is_medulla:
        raws = [r for r in raws if not likely_secret(r)]
    if not raws or (gate is not None and not gate.in_time()):
        return 0
    ensure_home(run.paths)
    index = BoxIndex(box.path, run.paths.state)
    # dedup by the full digest (mailbox.md 2: a shared 12-hex id is not the same letter)
    n = boxes.append(box, [hashlib.sha256(r).digest() for r in raws], raws, run.paths.locks, index)
    if n:
        boxes.sync(box.path)
    index.save()
    if n:
        _observed(run, raws)
    return n


def _observed(run: Run, raws: list[bytes]) -> None:
    """The engine's own letters are seen as they are filed (reports contract section 2):
    an escalation or a regression reaches the ledger now, where `m1nd report` looks for
    triggers, not at the next read."""
    observe_digests(run, dict.fromkeys(hashlib.sha256(r).digest() for r in raws))


def observe_digests(run: Run, digests: dict[bytes, None]) -> None:
    """Record these letters (raw sha256 digests, distinct, in order) in the coverage
    ledger, observed now.  A ledger that cannot be written never fails the filing."""
    from m1nd import ledger
    from m1nd.clock import parse_now, stamp
    from m1nd.errors import M1ndError

    try:
        # as digests (bytes), checked and written in blocks: after the state was deleted
        # every witness arrives again, and (id, digest) pairs of them all took 600 MB
        ledger.record_seen(run.paths, digests, stamp(parse_now()))
    except (M1ndError, OSError):
        pass  # the next read records them
