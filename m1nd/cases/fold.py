"""What case intelligence keeps of the letters: a fold over distinct letters.

Each distinct letter (by full digest) is folded in once, in any order, and the fold
comes out the same: maps keyed by digest, a set of closed ids and a count.  Only the
letters that matter are kept (witnesses, escalations, case receipts); every other
letter adds to a count at most.  The fold is derived: `index.py` caches it under
`<home>/state/cases/`, and deleting that cache rebuilds the same fold from the letters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from m1nd.cases import fingerprints as fps
from m1nd.cases.source import extras
from m1nd.fates import is_receipt
from m1nd.letters import Letter

DISPOSITIONS = ("fixed", "declined", "moot")


@dataclass
class Fold:
    # fingerprint -> digest -> [id, ts, tool, repo, brain, box path or None]
    witnesses: dict[str, dict[str, list]] = field(default_factory=dict)
    # fingerprint -> digest -> [id, ts, box]
    escalations: dict[str, dict[str, list]] = field(default_factory=dict)
    # fingerprint -> digest -> [id, ts, answers, disposition, sentinel, case_id, repo, brain, box]
    receipts: dict[str, dict[str, list]] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)  # ids in the answers of some receipt
    kindless: int = 0
    letters: int = 0  # distinct letters folded, missions included

    def add(self, letter: Letter, digest: str, box: str | None) -> None:
        """Fold in a letter seen for the first time."""
        self.letters += 1
        if letter.is_mission:
            return
        if is_receipt(letter):
            self.closed.update(letter.answers)
            extra = extras(letter.raw)
            fingerprint = extra.get("fingerprint", "")
            if fps.split(fingerprint) is None:
                return
            disposition = extra.get("disposition")
            if disposition is None:
                if letter.agent == fps.ENGINE_AGENT:
                    self.escalations.setdefault(fingerprint, {})[digest] = [letter.id, letter.ts, box]
            elif disposition in DISPOSITIONS:
                self.receipts.setdefault(fingerprint, {})[digest] = [
                    letter.id, letter.ts, list(letter.answers), disposition, extra.get("sentinel"),
                    extra.get("case_id"), letter.repo, letter.brain, box]
            return
        fingerprint = fps.derive(letter).fingerprint
        if fingerprint is None:
            self.kindless += 1
        else:
            self.witnesses.setdefault(fingerprint, {})[digest] = [
                letter.id, letter.ts, letter.tool, letter.repo, letter.brain, box]

    def seen_in_box(self, digest: str, box: str, rank) -> None:
        """A letter already folded was also seen in `box`: keep the box first in run order."""
        for table, at in ((self.witnesses, 5), (self.escalations, 2), (self.receipts, 8)):
            for rows in table.values():
                row = rows.get(digest)
                if row is not None and (row[at] is None or rank(box) < rank(row[at])):
                    row[at] = box

    def interesting(self) -> set[str]:
        """Digests whose box matters (for `seen_in_box`)."""
        found: set[str] = set()
        for table in (self.witnesses, self.escalations, self.receipts):
            for rows in table.values():
                found.update(rows)
        return found

    def as_json(self) -> dict:
        return {"witnesses": self.witnesses, "escalations": self.escalations, "receipts": self.receipts,
                "closed": sorted(self.closed), "kindless": self.kindless, "letters": self.letters}

    @classmethod
    def from_json(cls, doc: dict) -> "Fold":
        return cls(doc["witnesses"], doc["escalations"], doc["receipts"], set(doc["closed"]),
                   doc["kindless"], doc["letters"])
