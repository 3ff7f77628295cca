"""The rows of the read model's `letters` table: their columns, the row a letter line
is inserted as (update.py), and the LetterRow a query reads back (ReadModel.letters and the other queries).

The letter's string fields are m1nd.letters.TEXT_ATTRIBUTES; LetterRow and the column
lists below are built from it.  `letter_row` and `row` spell each field out (one `get` per field, no
loop): they run once per letter of a build, and must follow the lists.
"""

from __future__ import annotations

from typing import NamedTuple

import orjson

from m1nd.boxes import Box
from m1nd.letters import TEXT_ATTRIBUTES
from m1nd.timefmt import sort_key

SPOOL = "spool"
BOX = "box"
EXTRA = ("disposition", "fingerprint", "case_id", "sentinel")  # kept as text (JSON when not a string)


class Source(NamedTuple):
    """One letters file of the run: the spool, or a box."""

    kind: str  # SPOOL or BOX
    label: str  # the box label; "spool" for the spool
    path: str
    box: Box | None
    fid: int | None  # None when it could not be read (see problem)
    problem: str | None  # a refused or unreadable box

    @property
    def root(self) -> str | None:
        return self.box.root.path if self.box is not None and self.box.root is not None else None


def _with_sortkey(attributes: tuple) -> tuple:
    """The letter's (attribute, type) pairs with `sortkey` (`ts` in UTC, for sorting:
    timefmt.sort_key) right after `ts`."""
    at = [name for name, _ in attributes].index("ts") + 1
    return (*attributes[:at], ("sortkey", str), *attributes[at:])


class LetterRow(NamedTuple("LetterRowFields", [
        ("digest", str), ("id", str), *_with_sortkey(TEXT_ATTRIBUTES), ("answers", tuple[str, ...]),
        ("kind", str | None), *((name, str | None) for name in EXTRA)])):
    """One distinct letter: its full sha256 digest (hex), id, the letter's
    TEXT_ATTRIBUTES with `sortkey`, answers, kind and EXTRA.  The names are
    m1nd.letters.Letter's where they overlap, so fates.reply_graph and
    ReplyGraph.state take it."""

    __slots__ = ()


class Location(NamedTuple):
    kind: str  # SPOOL or BOX
    label: str
    path: str
    root: str | None
    line: int  # 1-based
    offset: int  # byte offset of the line's first byte
    length: int  # raw bytes (without `\n`)


# The columns of `letters` a LetterRow holds, in its order; then those only the
# update writes (what the queries filter on).
ROW_COLUMNS = tuple("class" if name == "klass" else name for name in LetterRow._fields)
INSERT_COLUMNS = (*ROW_COLUMNS, "mission", "reply", "secret", "first_gen")

COLS = ", ".join(ROW_COLUMNS)
COLS_OF_L = ", ".join("l." + c for c in ROW_COLUMNS)  # the same, of `letters l`
INSERT_LETTER = (f"INSERT OR IGNORE INTO letters ({', '.join(INSERT_COLUMNS)})"
                 f" VALUES ({','.join('?' * len(INSERT_COLUMNS))})")


def _extra(value) -> str | None:
    if value is None:
        return None
    if type(value) is str:
        return value
    return orjson.dumps(value).decode()


def letter_row(digest: bytes, obj: dict, gen: int, secret: str | None) -> tuple:
    """The values of INSERT_COLUMNS for one letter line's object."""
    get = obj.get
    answers = get("answers")
    kind = get("kind")
    ts = get("ts", "")
    return (
        digest, digest[:6].hex(), ts, sort_key(ts), get("agent", ""), get("class", ""), get("repo", ""),
        get("brain", ""), get("tool", ""), get("what", ""), get("expected", ""), get("snippet", ""),
        orjson.dumps(answers).decode() if answers else None, kind,
        _extra(get("disposition")), _extra(get("fingerprint")), _extra(get("case_id")), _extra(get("sentinel")),
        1 if kind == "mission" else 0, 1 if answers else 0,
        secret, gen,
    )


def row(r) -> LetterRow:
    """The LetterRow of a row of ROW_COLUMNS."""
    return LetterRow(r[0].hex(), r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11],
                     tuple(orjson.loads(r[12])) if r[12] else (), r[13], r[14], r[15], r[16], r[17])
