"""The letters case intelligence reads: the union of the spool and every reachable
box, each distinct letter once (by the full sha256 of its raw bytes), with the box
that holds it.

This is the adapter to the mailbox's reading side.  The fields cases need beyond a
Letter (`fingerprint`, `disposition`, `sentinel`, `case_id`) are read from the raw
bytes here, and only for receipts, which are the only letters that carry them.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

import orjson

from m1nd.boxes import Box, Refused, read_box
from m1nd.errors import M1ndError
from m1nd.fates import is_receipt
from m1nd.fsutil import gc_paused
from m1nd.letters import Letter, read_file
from m1nd.run import Run

EXTRA_KEYS = ("fingerprint", "disposition", "sentinel", "case_id")


def extras(raw: bytes) -> dict:
    """The extra keys of a letter, each kept only when it has the expected type."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    if type(obj) is not dict:
        return {}
    found = {}
    for key in ("fingerprint", "disposition", "case_id"):
        if type(obj.get(key)) is str:
            found[key] = obj[key]
    sentinel = obj.get("sentinel")
    if type(sentinel) is dict and type(sentinel.get("probe")) is str and type(sentinel.get("expect")) is str:
        found["sentinel"] = {"probe": sentinel["probe"], "expect": sentinel["expect"]}
    return found


@dataclass
class Item:
    letter: Letter
    digest: str  # full sha256 hex of the raw bytes
    box: Box | None  # the first box (run order) that holds it; None: only in the spool
    extra: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.letter.id

    @property
    def order(self) -> tuple[str, str, str]:
        """Witnesses and escalations are ordered by ts, then id (then digest: ids may collide)."""
        return (self.letter.ts, self.letter.id, self.digest)


@dataclass(frozen=True)
class Mailbox:
    items: dict[str, Item]  # by digest, missions included
    problems: tuple[str, ...]  # boxes that could not be read

    def by_id(self, lid: str) -> list[Item]:
        return [i for i in self.items.values() if i.letter.id == lid]

    def with_prefix(self, prefix: str) -> list[Item]:
        return [i for i in self.items.values() if i.letter.id.startswith(prefix)]


def _add(items: dict[str, Item], letter: Letter, box: Box | None) -> None:
    digest = hashlib.sha256(letter.raw).hexdigest()
    item = items.get(digest)
    if item is None:
        item = items[digest] = Item(letter, digest, box, extras(letter.raw) if is_receipt(letter) else {})
    elif item.box is None and box is not None:
        item.box = box


def read_mailbox(run: Run) -> Mailbox:
    """Read the spool and every reachable box (writes nothing)."""
    with gc_paused():
        items: dict[str, Item] = {}
        problems: list[str] = []
        for box in run.boxes():
            try:
                found = read_box(box)
            except Refused as exc:
                problems.append(f"box {box.label} refused: {exc}")
                continue
            except OSError as exc:
                problems.append(f"cannot read box {box.path}: {exc.strerror}")
                continue
            for _, letter in found.letters:
                _add(items, letter, box)
        try:
            if os.path.isdir(run.paths.spool):
                raise IsADirectoryError(21, "Is a directory")
            spool = read_file(run.paths.spool)
        except OSError as exc:
            raise M1ndError(f"cannot read spool {run.paths.spool}: {exc.strerror}") from None
        for _, letter in spool.letters:
            _add(items, letter, None)
        return Mailbox(items, tuple(problems))
