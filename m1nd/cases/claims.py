"""Claims and labels (cases.md 5): honesty letters as labelled pairs of a tool's
claim and what was measured.

A honesty letter (class exactly `honesty`) is labelled by the receipt that answers
it: `wrong` when a `fixed` receipt does (the claim was wrong and got fixed),
`right` for `declined` or `moot`, `unresolved` when no receipt with a disposition
names it.  When several do, the latest (by ts, then id) speaks.  Honesty letters
without a fingerprint are counted apart (`kindless`), never guessed into a row.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import orjson

from m1nd.cases import fingerprints as fps
from m1nd.errors import M1ndError
from m1nd.held import held_kind

HONESTY = "honesty"
LABELS = {"fixed": "wrong", "declined": "right", "moot": "right"}
ROW_KEYS = ("ts", "signal", "fingerprint", "letter_id", "receipt_id", "label")


@dataclass(frozen=True)
class Claims:
    rows: tuple[dict, ...]  # one per honesty letter with a fingerprint, by (ts, id)
    table: tuple[dict, ...]  # per (tool_family, symptom_kind), sorted
    kindless: int

    def as_json(self) -> dict:
        return {"claims": list(self.table)}


def claims(model) -> Claims:
    """From the read model: honesty letters and the receipts with a disposition."""
    verdicts: dict[str, tuple[tuple[str, str, str], str, str]] = {}  # letter id -> (order, disposition, receipt)
    marks = ", ".join(f"'{d}'" for d in LABELS)
    for r in model.letters(where=f"{fps.RECEIPT_SQL} AND l.disposition IN ({marks})"):
        order = (r.ts, r.id, r.digest)
        for answered in r.answers:
            known = verdicts.get(answered)
            if known is None or order > known[0]:
                verdicts[answered] = (order, r.disposition, r.id)
    rows, kindless = [], 0
    counts: dict[tuple[str, str], dict[str, int]] = {}
    letters = sorted(model.letters(where="l.class = ?", args=(HONESTY,)), key=lambda l: (l.ts, l.id, l.digest))
    for letter in letters:
        if held_kind(model, letter.digest):
            # a held letter's fields never leave, and its tool names the fingerprint's
            # family: like a witness (cases), it is left out of the claims
            continue
        fingerprint = fps.derive(letter).fingerprint
        if fingerprint is None:
            kindless += 1
            continue
        family, kind = fps.split(fingerprint)
        verdict = verdicts.get(letter.id)
        label = LABELS[verdict[1]] if verdict else "unresolved"
        rows.append({"ts": letter.ts, "signal": letter.what, "fingerprint": fingerprint, "letter_id": letter.id,
                     "receipt_id": verdict[2] if verdict else None, "label": label})
        c = counts.setdefault((family, kind), {"wrong": 0, "right": 0, "unresolved": 0})
        c[label] += 1
    table = tuple(
        {"tool_family": family, "symptom_kind": kind, "wrong": c["wrong"], "right": c["right"],
         "unresolved": c["unresolved"], "total": c["wrong"] + c["right"] + c["unresolved"]}
        for (family, kind), c in sorted(counts.items()))
    return Claims(tuple(rows), table, kindless)


def row_bytes(row: dict) -> bytes:
    return orjson.dumps({k: row[k] for k in ROW_KEYS})


def export(rows: tuple[dict, ...], path: str) -> tuple[int, int]:
    """Append to FILE the rows it does not hold yet; returns (appended, unreadable lines in FILE)."""
    have: set[tuple] = set()
    unreadable = 0
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        data = b""
    except IsADirectoryError:
        raise M1ndError(f"cannot export to {path}: Is a directory") from None
    except OSError as exc:
        raise M1ndError(f"cannot read {path}: {exc.strerror}") from None
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
            have.add(tuple(obj.get(k) for k in ROW_KEYS))
        except (orjson.JSONDecodeError, AttributeError):
            unreadable += 1
    new = [row_bytes(r) for r in rows if tuple(r[k] for k in ROW_KEYS) not in have]
    if not new:
        return 0, unreadable
    payload = b"\n".join(new) + b"\n"
    if data and not data.endswith(b"\n"):
        payload = b"\n" + payload
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            from m1nd.fsutil import write_all

            write_all(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise M1ndError(f"cannot write {path}: {exc.strerror}") from None
    return len(new), unreadable
