"""Letters: lines, ids, strict parsing, streaming reads (contract section 2).

A file is split on `\\n` only; a line's raw bytes lose one trailing `\\r`.  The id of
a letter is the first 12 hex digits of sha256 over those raw bytes, so a letter keeps
its id wherever its bytes travel.  Nothing here knows about routing or boxes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator, NamedTuple

import orjson

from m1nd.fsutil import open_regular

STRING_FIELDS = ("ts", "agent", "class", "repo", "brain", "tool", "what", "expected", "snippet")
_STRING_FIELD_SET = frozenset(STRING_FIELDS)
_ONLY_STR = frozenset((str,))

# Outcomes of reading one line.
LETTER = "letter"
MALFORMED = "malformed"
BLANK = "blank"
TAIL = "tail"  # a final unterminated line that does not parse: a writer may be mid-append


def attribute(field: str) -> str:
    """The attribute that holds a letter field (`class` is a keyword: `klass`)."""
    return "klass" if field == "class" else field


# The string fields as attributes, declared once: Letter here and the read model's
# LetterRow (readmodel/rows.py) are both built from this list.
TEXT_ATTRIBUTES = tuple((attribute(f), str) for f in STRING_FIELDS)


class Letter(NamedTuple("LetterFields", [("id", str), ("raw", bytes), *TEXT_ATTRIBUTES,
                                         ("answers", tuple[str, ...]), ("kind", str | None)])):
    """One parsed letter (a named tuple: sweeps build a million of them): id, raw, the
    TEXT_ATTRIBUTES (ts, agent, klass, repo, brain, tool, what, expected, snippet),
    answers and kind."""

    __slots__ = ()

    @property
    def is_mission(self) -> bool:
        return self.kind == "mission"


MAX_LETTER_BYTES = 64 << 10  # a longer letter is held, never filed into a project box (section 2)
OVERSIZED = "oversized"


def is_oversized(raw: bytes) -> bool:
    return len(raw) > MAX_LETTER_BYTES


def letter_id(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


MAX_DEPTH = 64  # the top-level object is level 1; a deeper value makes the line malformed (section 2)


def too_deep(obj: dict) -> bool:
    """Whether any value nests more than MAX_DEPTH levels (arrays and objects alike).

    Iterative, so no line can exhaust a stack here; only containers are walked, so a
    letter of plain strings costs one pass over its top-level values.  Deep values
    would otherwise make every later `orjson.dumps` of the line fail.
    """
    stack = [(v, 2) for v in obj.values() if type(v) is dict or type(v) is list]
    while stack:
        value, level = stack.pop()
        if level > MAX_DEPTH:
            return True
        items = value.values() if type(value) is dict else value
        stack.extend((v, level + 1) for v in items if type(v) is dict or type(v) is list)
    return False


def is_blank(raw: bytes) -> bool:
    return not raw.strip()


def load(raw: bytes) -> dict | None:
    """The JSON object of a well-formed letter line, or None when it is malformed.

    Checks every listed field's type; the distribution hot path uses this directly
    so that it need not build a Letter.
    """
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict:
        return None
    # The listed fields' types, checked at C speed: the types of the string fields present.
    if not _ONLY_STR.issuperset(map(type, map(obj.__getitem__, obj.keys() & _STRING_FIELD_SET))):
        return None
    if "answers" in obj:
        value = obj["answers"]
        if type(value) is not list or not _ONLY_STR.issuperset(map(type, value)):
            return None
    if "kind" in obj:
        value = obj["kind"]
        if value is not None and type(value) is not str:
            return None
    # Nesting deeper than MAX_DEPTH takes more opening brackets than that: most lines
    # hold a few, counted at C speed, and are never walked.
    if raw.count(b"{") + raw.count(b"[") > MAX_DEPTH and too_deep(obj):
        return None
    return obj


def parse(raw: bytes, lid: str | None = None) -> Letter | None:
    """The letter these raw bytes hold, or None when they are malformed."""
    obj = load(raw)
    if obj is None:
        return None
    return from_object(raw, obj, lid or letter_id(raw))


def from_object(raw: bytes, obj: dict, lid: str) -> Letter:
    """The letter of a line `load` already gave the object of."""
    get = obj.get
    return Letter(
        lid, raw, get("ts", ""), get("agent", ""), get("class", ""), get("repo", ""),
        get("brain", ""), get("tool", ""), get("what", ""), get("expected", ""), get("snippet", ""),
        tuple(get("answers", ())), get("kind"),
    )


@dataclass(frozen=True, slots=True)
class Line:
    number: int  # 1-based
    end: int  # byte offset just after this line (and its `\n`, when terminated)
    raw: bytes
    terminated: bool
    outcome: str
    letter: Letter | None


def classify(raw: bytes, terminated: bool) -> tuple[str, Letter | None]:
    if is_blank(raw):
        return BLANK, None
    letter = parse(raw)
    if letter is not None:
        return LETTER, letter
    return (MALFORMED if terminated else TAIL), None


def iter_raw(fh: BinaryIO, start: int = 0) -> Iterator[tuple[int, int, bytes, bool]]:
    """(start offset, end offset, raw bytes, terminated) for every line from `start`.

    The one place a file is split into lines: on `\n` only, one trailing `\r`
    dropped from the raw bytes.
    """
    fh.seek(start)
    offset = start
    for chunk in fh:
        terminated = chunk[-1:] == b"\n"
        raw = chunk[:-1] if terminated else chunk
        if raw[-1:] == b"\r":
            raw = raw[:-1]
        end = offset + len(chunk)
        yield offset, end, raw, terminated
        offset = end


def iter_lines(fh: BinaryIO, start: int = 0, number: int = 0) -> Iterator[Line]:
    """Every line of an open binary file from byte offset `start` onward, classified.

    `number` is the count of lines before `start`, so line numbers stay 1-based
    for the whole file.
    """
    for _, end, raw, terminated in iter_raw(fh, start):
        number += 1
        outcome, letter = classify(raw, terminated)
        yield Line(number, end, raw, terminated, outcome, letter)


@dataclass(frozen=True)
class FileRead:
    """Everything one read of a letters file found."""

    path: str
    letters: list[tuple[int, Letter]]  # (line number, letter), file order, missions included
    malformed: list[int]  # 1-based line numbers
    unfinished_tail: int | None  # line number of an unfinished tail, if any
    size: int


def read_file(path: str, known: dict[str, Letter] | None = None) -> FileRead:
    """Read a whole letters file.  A missing file reads as empty.

    `known` maps ids to letters already parsed elsewhere: a line with one of those
    ids and the same bytes is taken from there instead of parsed again (the bytes
    are compared: two different lines can share an id).
    """
    letters: list[tuple[int, Letter]] = []
    malformed: list[int] = []
    tail = None
    size = 0
    fh = open_regular(path)  # a FIFO or a device: NotRegular (an OSError), never a hang
    if fh is None:
        return FileRead(path, letters, malformed, tail, 0)
    known = known if known is not None else {}
    sha256 = hashlib.sha256
    number = 0
    with fh:
        for _, size, raw, terminated in iter_raw(fh):
            number += 1
            if not raw or raw.isspace():
                continue
            lid = sha256(raw).hexdigest()[:12]
            letter = known.get(lid)
            if letter is None or letter.raw != raw:
                letter = parse(raw, lid)
            if letter is not None:
                letters.append((number, letter))
            elif terminated:
                malformed.append(number)
            else:
                tail = number
    return FileRead(path, letters, malformed, tail, size)
