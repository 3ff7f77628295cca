"""What case intelligence keeps of the letters: a fold over distinct letters.

Each distinct letter (by full digest) is folded in once, in any order, and the fold
comes out the same: maps keyed by digest, a set of closed ids and counts.  Only the
letters that matter are kept (witnesses, escalations, case receipts).  The fold is
derived: `source.py` caches it under `<home>/state/cases/`, keyed by the read
model's content, and deleting that cache rebuilds the same fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from m1nd.cases import fingerprints as fps
from m1nd.fates import is_receipt

DISPOSITIONS = ("fixed", "declined", "moot")


def sentinel_of(value: str | None) -> dict | None:
    """`{"probe": str, "expect": str}` from the read model's sentinel column (JSON text), else None."""
    if not value:
        return None
    try:
        obj = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is dict and type(obj.get("probe")) is str and type(obj.get("expect")) is str:
        return {"probe": obj["probe"], "expect": obj["expect"]}
    return None


@dataclass
class Fold:
    # fingerprint -> digest -> [id, ts, tool, repo, brain]
    witnesses: dict[str, dict[str, list]] = field(default_factory=dict)
    # fingerprint -> digest -> [id, ts]
    escalations: dict[str, dict[str, list]] = field(default_factory=dict)
    # fingerprint -> digest -> [id, ts, answers, disposition, sentinel, case_id, repo, brain]
    receipts: dict[str, dict[str, list]] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)  # ids in the answers of some receipt
    receipts_seen: int = 0  # receipts folded (of any kind)
    witness_count: int = 0  # letters with a fingerprint folded

    def add(self, row) -> None:
        """Fold in one distinct letter (a read-model row: a receipt, or a letter that may
        have a fingerprint).  Missions are never folded."""
        if row.kind == "mission":
            return
        if is_receipt(row):
            self.receipts_seen += 1
            self.closed.update(row.answers)
            fingerprint = row.fingerprint or ""
            if fps.split(fingerprint) is None:
                return
            disposition = row.disposition
            if disposition is None:
                if row.agent == fps.ENGINE_AGENT:
                    self.escalations.setdefault(fingerprint, {})[row.digest] = [row.id, row.ts]
            elif disposition in DISPOSITIONS:
                self.receipts.setdefault(fingerprint, {})[row.digest] = [
                    row.id, row.ts, list(row.answers), disposition, sentinel_of(row.sentinel), row.case_id,
                    row.repo, row.brain]
            return
        fingerprint = fps.derive(row).fingerprint
        if fingerprint is not None:
            self.witness_count += 1
            self.witnesses.setdefault(fingerprint, {})[row.digest] = [row.id, row.ts, row.tool, row.repo, row.brain]

    def as_json(self) -> dict:
        return {"witnesses": self.witnesses, "escalations": self.escalations, "receipts": self.receipts,
                "closed": sorted(self.closed), "receipts_seen": self.receipts_seen,
                "witness_count": self.witness_count}

    @classmethod
    def from_json(cls, doc: dict) -> "Fold":
        return cls(doc["witnesses"], doc["escalations"], doc["receipts"], set(doc["closed"]),
                   doc["receipts_seen"], doc["witness_count"])
