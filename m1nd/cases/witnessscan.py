"""Looking at a file's bytes for the lines that can be a witness or an escalation
(cases.md 2): a line is parsed only when it holds a marker every such line must hold
(MARKERS), so new bytes cost a byte search and a parse of the few lines that may
matter.  What was looked at is given back as witnesses.py's index rows; `Looked`
carries what a filing already read, so the same bytes are not looked at twice.
"""

from __future__ import annotations

import hashlib
import os
import zlib

from m1nd.cases import fingerprints as fps
from m1nd.fates import is_receipt
from m1nd.letters import from_object, load

BLOCK = 4 << 20  # bytes read at a time: a block and its copy stay small beside what a filing holds
PRELOAD_BYTES = 4 << 20  # as distribution/reading.py: new bytes worth compiling the secret rules for
WITNESS, ESCALATION = "w", "e"
# Every witness's line holds one of these bytes exactly: a `"kind"` key (the eight, and
# the misdelivery mapping, both need one), a backfill rule's marker, or a `\u` escape
# (which could spell any of them); every escalation's line a `"fingerprint"` key.
# (marker, words the lowercased line must also hold)
MARKERS = (
    (b'"kind"', ()),
    (b'"fingerprint"', ()),
    (b"\\u", ()),
    (b"Traceback (most recent call last)", ()),  # traceback-crash
    (b'"honesty"', (b"north", b"memor")),  # north-memory-emptiness
)


def _classify(raw: bytes) -> tuple[str, str, dict] | None:
    """(role, fingerprint, fields) of a line that may be a witness or an escalation, else
    None: the same decision as the fold (fold.py) makes over read-model rows, but for
    one step, left to the caller because it is cheaper over many lines at once: a
    witness must not be held (`secrets.held_in_batch`; source.py: WANTED)."""
    obj = load(raw)
    if obj is None or obj.get("kind") == "mission":
        return None
    letter = from_object(raw, obj, "")  # the id is not needed here
    if is_receipt(letter):
        fingerprint = obj.get("fingerprint")
        if type(fingerprint) is not str or fps.split(fingerprint) is None:
            return None
        if obj.get("disposition") is None and letter.agent == fps.ENGINE_AGENT:
            return ESCALATION, fingerprint, obj
        return None
    fingerprint = fps.derive(letter).fingerprint
    if fingerprint is None:
        return None
    return WITNESS, fingerprint, obj


class Looked:
    """What one process already knows about lines, by their sha256 digest, so that a
    line seen twice (in the spool, then in the box a filing appended it to) is parsed
    once.  `rows`: the classification of each marked line judged (None: neither a
    witness nor an escalation), a pure function of its bytes; `observed`: letters the
    coverage ledger is known to hold (the filing just recorded them)."""

    def __init__(self, observed=None, appended=None, read=None) -> None:
        self.rows: dict[bytes, tuple | None] = {}
        self.observed = observed if observed is not None else {}
        # {box path: [(offset, length, crc32, digests)]}: what the filing appended
        self.appended = appended or {}
        self.read = read  # (dev, ino, start, end) of the spool stretch the filing read
        self.spool: tuple | None = None  # the same of the stretch this process looked at

    def covered(self) -> bool:
        """Whether every letter the filing read was on a spool line looked at here, so
        that one not classified here holds no marker."""
        if self.read is None or self.spool is None:
            return False
        return self.read[:2] == self.spool[:2] and self.spool[2] <= self.read[2] and self.read[3] <= self.spool[3]


def _marked_lines(block: bytes) -> list[tuple[int, bytes]]:
    """(start, raw) of every line of the block holding a marker, by marker order."""
    lines: list[tuple[int, bytes]] = []
    seen: set[int] = set()
    for marker, also in MARKERS:
        at = block.find(marker)
        while at >= 0:
            start = block.rfind(b"\n", 0, at) + 1
            end = block.find(b"\n", at)
            end = len(block) if end < 0 else end
            if start not in seen:
                seen.add(start)
                line = block[start:end]
                raw = line[:-1] if line.endswith(b"\r") else line  # letters.py: one `\r` goes
                if (not also or all(w in line.lower() for w in also)) and raw.strip():
                    lines.append((start, raw))
            at = block.find(marker, end)
    return lines


def _rows_in_block(block: bytes, base: int, rows: "_Rows") -> None:
    sha256 = hashlib.sha256
    rows.add([(start, raw, sha256(raw).digest()) for start, raw in _marked_lines(block)], base)


class _Rows:
    """The rows of one file's lines that may be a witness or an escalation, gathered
    block by block; the witnesses among them are judged for secrets at the end, in one
    batch (a held letter is never a witness)."""

    def __init__(self, path: bytes, looked: Looked | None) -> None:
        self.path = path
        self.looked = looked
        self.found: list[tuple[int, bytes, tuple | None]] = []  # (offset, digest, classification)
        self.judge: list[int] = []  # positions in `found` of witnesses whose bytes are not judged yet
        self.raws: list[bytes] = []

    def add(self, lines: list[tuple[int, bytes, bytes]], base: int) -> None:
        """These (start, raw, digest) lines, whose starts are relative to `base`."""
        known = self.looked.rows if self.looked is not None else {}
        found = self.found
        for start, raw, digest in lines:
            if digest in known:
                found.append((base + start, digest, known[digest]))
                continue
            kind = _classify(raw)
            if kind is not None:
                role, fingerprint, obj = kind
                get = obj.get
                kind = (role, fingerprint, get("ts", ""), get("tool", ""), get("repo", ""), get("brain", ""))
                if role == WITNESS:
                    self.judge.append(len(found))
                    self.raws.append(raw)
            found.append((base + start, digest, kind))

    def done(self) -> list[tuple]:
        from m1nd.secrets import compiling, held_in_batch, likely_secret

        found, raws = self.found, self.raws
        if raws:  # one batch, or one by one while the compiled rules still compile (never waiting)
            held = {i for i, raw in enumerate(raws) if likely_secret(raw)} if compiling() else held_in_batch(raws)
            for j, i in enumerate(self.judge):
                if j in held:
                    offset, digest, _ = found[i]
                    found[i] = (offset, digest, None)
        if self.looked is not None:
            self.looked.rows.update((digest, kind) for _, digest, kind in found)
        path = self.path
        return [(path, offset, digest, *kind) for offset, digest, kind in found if kind is not None]


def _marked(line: bytes) -> bool:
    """Whether _marked_lines would pick this line (without its `\\n`)."""
    return any(marker in line and (not also or all(w in line.lower() for w in also)) for marker, also in MARKERS)


def _appended_rows(data: bytes, base: int, digests: list[bytes], rows: _Rows, every: dict[bytes, None] | None,
                   looked: Looked) -> bool:
    """Rows (and letters for `every`) of lines this process appended to a box: `data`,
    at byte `base`, one line per digest in `digests` (sha256 of each line).  A line is
    judged from what `looked` knows of its digest where it can: a line classified
    before takes that classification, a letter the filing recorded is not parsed for
    the ledger, and a letter the filing read from a stretch of the spool this process
    looked at whole is unmarked when it was not classified.  None when `data` is not
    those lines (then it is scanned as any bytes are, and nothing was taken)."""
    from m1nd.letters import load

    lines = data.split(b"\n")
    if lines.pop() != b"" or len(lines) != len(digests):
        return False
    sha256 = hashlib.sha256
    known, observed, covered = looked.rows, looked.observed, looked.covered()
    marked: list[tuple[int, bytes, bytes]] = []
    at = 0
    for line, digest in zip(lines, digests):
        start, at = at, at + len(line) + 1
        raw = line
        if raw.endswith(b"\r"):  # letters.py: one `\r` goes, so the box line is another letter
            raw = raw[:-1]
            digest = sha256(raw).digest()
        if not raw.strip():
            continue
        if digest in known or not (covered and digest in observed) and _marked(line):
            marked.append((start, raw, digest))
        if every is not None and digest not in observed:
            obj = load(raw)
            if obj is not None and obj.get("kind") != "mission":
                every[digest] = None
    rows.add(marked, base)
    return True


def _letters_in_block(block: bytes, every: dict[bytes, None], observed=()) -> None:
    """The digests of the letters among these whole lines, for the coverage ledger, as
    a filing records its spool lines: malformed and blank lines and missions left out.
    A line whose digest is in `observed` is a letter the ledger holds: not parsed again."""
    from m1nd.letters import load

    sha256 = hashlib.sha256
    for line in block.split(b"\n"):
        raw = line[:-1] if line.endswith(b"\r") else line
        if raw.strip():
            digest = sha256(raw).digest()
            if digest in observed:
                continue
            obj = load(raw)
            if obj is not None and obj.get("kind") != "mission":
                every[digest] = None


def _scan(fd: int, start: int, size: int, path: bytes, every: dict[bytes, None] | None = None,
          looked: Looked | None = None, appended=()) -> tuple[list[tuple], int]:
    """Rows of the lines in [start, size), and the offset after the last `\\n` (a final
    unterminated line is looked at, but read again next time: it may still grow).  With
    `every`, the digest (raw) of each letter on a whole line is added to it too (but for
    letters `looked` says the ledger holds).  `appended`: (offset, length, crc32,
    digests) of stretches this process appended, whose lines are judged from their
    digests when the bytes there are still the ones written (_appended_rows)."""
    if looked is not None and size - start >= PRELOAD_BYTES:
        from m1nd.secrets import preload

        preload()  # many lines: their witnesses are judged in batches, by the compiled rules
    rows = _Rows(path, looked)
    at = start
    for offset, length, crc, digests in appended:
        if offset < at or offset + length > size:
            continue
        at = _scan_bytes(fd, at, offset, rows, every, looked, tail=False)
        if at != offset:
            break
        data = os.pread(fd, length, offset)
        if zlib.crc32(data) != crc or not _appended_rows(data, offset, digests, rows, every, looked):
            break
        at = offset + length
    end = _scan_bytes(fd, at, size, rows, every, looked)
    return rows.done(), end


def _scan_bytes(fd: int, start: int, size: int, rows: _Rows, every: dict[bytes, None] | None, looked: Looked | None,
                tail: bool = True) -> int:
    """_scan over bytes that are only bytes; `tail`: look at a final unterminated line.
    Returns the offset after the last `\\n`."""
    at, carry_at, carry = start, start, b""
    observed = looked.observed if looked is not None else ()
    while at < size:
        chunk = os.pread(fd, min(BLOCK, size - at), at)
        if not chunk:
            break
        at += len(chunk)
        data = carry + chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            _rows_in_block(data[:cut], carry_at, rows)
            if every is not None:
                _letters_in_block(data[:cut], every, observed)
        carry, carry_at = data[cut:], carry_at + cut
    if carry and tail:
        _rows_in_block(carry, carry_at, rows)
    return carry_at
