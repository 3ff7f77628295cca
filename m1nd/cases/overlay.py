"""Fingerprints, witnesses, escalations and cases over the letters (cases.md 1-3, 7).

A pure function of the fold (plus the sentinel records for the sentinel state):
nothing here writes, and the same letters in any order give the same overlay.
"""

from __future__ import annotations

from dataclasses import dataclass

from m1nd.cases.fold import Fold

DISPOSITIONS = ("fixed", "declined", "moot")
OPEN, ANSWERED, GUARDED = "open", "answered", "closed·guarded"
GREEN, RED, NOT_ALLOWED, NOT_RUN = "green", "red", "not_allowed", "not_run"


@dataclass(frozen=True)
class Witness:
    id: str
    ts: str
    digest: str
    tool: str
    repo: str
    brain: str

    @property
    def order(self) -> tuple[str, str, str]:
        """Witnesses and escalations are ordered by ts, then id (then digest: ids may collide)."""
        return (self.ts, self.id, self.digest)


@dataclass(frozen=True)
class Escalation:
    id: str
    ts: str
    digest: str

    @property
    def order(self) -> tuple[str, str, str]:
        return (self.ts, self.id, self.digest)


@dataclass(frozen=True)
class Receipt:
    id: str
    ts: str
    digest: str
    answers: tuple[str, ...]
    disposition: str
    sentinel: dict | None
    case_id: str | None
    repo: str
    brain: str

    @property
    def order(self) -> tuple[str, str, str]:
        return (self.ts, self.id, self.digest)

    @property
    def probe(self) -> str | None:
        """Only `fixed` receipts guard anything, and only probes expecting absence."""
        s = self.sentinel
        if self.disposition != "fixed" or not s or s.get("expect") != "absent":
            return None
        return s["probe"]


def sentinel_state(receipt: Receipt, allowed: dict, runs: dict) -> str | None:
    probe = receipt.probe
    if probe is None:
        return None
    grant = allowed.get(receipt.digest)
    if not isinstance(grant, dict) or grant.get("probe") != probe:
        return NOT_ALLOWED
    last = runs.get(receipt.digest)
    if not isinstance(last, dict) or last.get("probe") != probe or last.get("status") not in (GREEN, RED):
        return NOT_RUN
    return last["status"]


@dataclass(frozen=True)
class Case:
    receipt: Receipt
    disposition: str
    state: str
    sentinel: str | None
    members: tuple[str, ...]  # ids, ascending

    @property
    def case_id(self) -> str | None:
        return self.receipt.case_id

    def as_json(self) -> dict:
        return {"receipt": self.receipt.id, "disposition": self.disposition, "state": self.state,
                "sentinel": self.sentinel}


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    witnesses: tuple[Witness, ...]  # ordered by ts, then id
    escalations: tuple[Escalation, ...]  # ordered by ts, then id: the first is the escalation
    receipts: tuple[Receipt, ...]  # case receipts, ordered by ts, then id
    case: Case | None

    @property
    def escalation(self) -> Escalation | None:
        return self.escalations[0] if self.escalations else None

    def as_json(self) -> dict:
        return {
            "fingerprint": self.fingerprint,
            "witnesses": sorted(w.id for w in self.witnesses),
            "escalation": self.escalation.id if self.escalation else None,
            "case": self.case.as_json() if self.case else None,
        }

    def line(self) -> str:
        """The one receipt line: `case fp:north/false_absence — 3 witnesses · fixed · sentinel green`."""
        n = len(self.witnesses)
        parts = [f"{n} witness" if n == 1 else f"{n} witnesses"]
        if self.case:
            parts.append(self.case.disposition)
            if self.case.sentinel:
                parts.append(f"sentinel {self.case.sentinel.replace('_', ' ')}")
            return f"case {self.fingerprint} — " + " · ".join(parts)
        if self.escalation:
            parts.append("escalated")
        return f"{self.fingerprint} — " + " · ".join(parts)


@dataclass(frozen=True)
class Overlay:
    entries: tuple[Entry, ...]  # sorted by fingerprint
    kindless: int

    def entry(self, fingerprint: str) -> Entry | None:
        for e in self.entries:
            if e.fingerprint == fingerprint:
                return e
        return None

    def as_json(self) -> dict:
        return {"fingerprints": [e.as_json() for e in self.entries], "kindless": self.kindless}


def compute(fold: Fold, kindless: int, markers: tuple[str, ...], allowed: dict | None = None,
            runs: dict | None = None) -> Overlay:
    allowed = allowed or {}
    runs = runs or {}
    markers = tuple(m.lower() for m in markers)

    def order(x):
        return x.order

    def external(tool: str) -> bool:
        lowered = tool.lower()
        return any(m in lowered for m in markers)

    entries = []
    for fingerprint in sorted(set(fold.witnesses) | set(fold.escalations) | set(fold.receipts)):
        ws = tuple(sorted((Witness(r[0], r[1], d, r[2], r[3], r[4])
                           for d, r in fold.witnesses.get(fingerprint, {}).items()), key=order))
        es = tuple(sorted((Escalation(r[0], r[1], d)
                           for d, r in fold.escalations.get(fingerprint, {}).items()), key=order))
        rs = tuple(sorted((Receipt(r[0], r[1], d, tuple(r[2]), r[3], r[4], r[5], r[6], r[7])
                           for d, r in fold.receipts.get(fingerprint, {}).items()), key=order))
        case = None
        if rs:
            # The latest receipt speaks for the case (a regression fixed again gets a new
            # one); every receipt's answers are members, each closed by that receipt.
            receipt = rs[-1]
            members = {w.id for w in ws} | {a for r in rs for a in r.answers}
            still_open = any(w.id not in fold.closed and not external(w.tool) for w in ws)
            sentinel = sentinel_state(receipt, allowed, runs)
            state = OPEN if still_open else ANSWERED
            if state == ANSWERED and receipt.disposition == "fixed" and sentinel == GREEN:
                state = GUARDED
            case = Case(receipt, receipt.disposition, state, sentinel, tuple(sorted(members)))
        entries.append(Entry(fingerprint, ws, es, rs, case))
    return Overlay(tuple(entries), kindless)
