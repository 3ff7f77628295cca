"""Letters: lines, ids, strict parsing, streaming reads (contract section 2).

A file is split on `\\n` only; a line's raw bytes lose one trailing `\\r`.  The id of
a letter is the first 12 hex digits of sha256 over those raw bytes, so a letter keeps
its id wherever its bytes travel.  Nothing here knows about routing or boxes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import BinaryIO, Iterator

import orjson

STRING_FIELDS = ("ts", "agent", "class", "repo", "brain", "tool", "what", "expected", "snippet")

# Outcomes of reading one line.
LETTER = "letter"
MALFORMED = "malformed"
BLANK = "blank"
TAIL = "tail"  # a final unterminated line that does not parse: a writer may be mid-append


@dataclass(frozen=True, slots=True)
class Letter:
    id: str
    raw: bytes
    ts: str
    agent: str
    klass: str
    repo: str
    brain: str
    tool: str
    what: str
    expected: str
    snippet: str
    answers: tuple[str, ...]
    kind: str | None

    @property
    def is_mission(self) -> bool:
        return self.kind == "mission"


def letter_id(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


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
    get = obj.get
    for name in STRING_FIELDS:
        if type(get(name, "")) is not str:
            return None
    answers = get("answers", [])
    if type(answers) is not list:
        return None
    for item in answers:
        if type(item) is not str:
            return None
    kind = get("kind")
    if kind is not None and type(kind) is not str:
        return None
    return obj


def parse(raw: bytes, lid: str | None = None) -> Letter | None:
    """The letter these raw bytes hold, or None when they are malformed."""
    obj = load(raw)
    if obj is None:
        return None
    get = obj.get
    return Letter(
        lid or letter_id(raw), raw, *[get(name, "") for name in STRING_FIELDS],
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


def read_file(path: str) -> FileRead:
    """Read a whole letters file.  A missing file reads as empty."""
    letters: list[tuple[int, Letter]] = []
    malformed: list[int] = []
    tail = None
    size = 0
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return FileRead(path, letters, malformed, tail, 0)
    with fh:
        for line in iter_lines(fh):
            size = line.end
            if line.outcome == LETTER:
                letters.append((line.number, line.letter))
            elif line.outcome == MALFORMED:
                malformed.append(line.number)
            elif line.outcome == TAIL:
                tail = line.number
    return FileRead(path, letters, malformed, tail, size)
