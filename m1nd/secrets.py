"""Likely secrets (contract section 4, "held letters").

Committing a box publishes its letters, so a letter carrying something that looks
like a credential is never filed into a project box.  This runs on every letter
bound for a project, so it works on whole batches: a cheap pass over the joined
bytes finds the few lines that could hold a secret, and only those are matched
against the precise patterns.

Every token pattern below needs a run of at least 20 token characters
([A-Za-z0-9_-]); private key blocks and `password=` style assignments are found by
their own literal markers.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_MIN_RUN = 20
_TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_RUN_TABLE = bytes(ord("a") if c in _TOKEN_CHARS else ord(" ") for c in range(256))
_ASSIGN_WORDS = (b"password", b"passwd", b"secret", b"token")
_WS = b" \t\n\r\x0b\x0c"

# A letter's raw bytes are JSON: a multi-line snippet reads `...\nghp_...`, a tab
# `password\t=`, a quoted token under an ASCII-only encoder `\u201cghp_...`.  Before
# matching, such escapes are blanked to spaces of the same length (offsets keep), so
# that they separate words as the characters they stand for do.
_CONTROL_ESCAPES = (b"\\n", b"\\t", b"\\r", b"\\b", b"\\f")
_UNICODE_ESCAPE = re.compile(rb"\\u[0-9A-Fa-f]{4}")

_PATTERNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("private key block", re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("cloud access key id", re.compile(rb"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")),
    ("github token", re.compile(rb"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab token", re.compile(rb"(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_\-]{20,}")),
    ("slack token", re.compile(rb"(?<![A-Za-z0-9_])xox[baprs]-[A-Za-z0-9\-]{15,}")),
    ("api secret key", re.compile(rb"(?<![A-Za-z0-9_\-])(?:sk-(?:[a-z]+-)?[A-Za-z0-9_\-]{20,}|[sr]k_live_[A-Za-z0-9]{20,})")),
    ("google api key", re.compile(rb"(?<![A-Za-z0-9_])AIza[A-Za-z0-9_\-]{35}")),
    # `password=hunter2`, `token = "abc123"`: a value that is not empty and not a
    # placeholder such as <redacted>, [REDACTED], (empty), {name}, ***, $VAR or ${VAR}
    # (a value opening with a bracket is taken for a placeholder).
    # Not a credential: a comparison (`token == x`), code that computes the value
    # (`get_token()`, `os.environ["TOKEN"]`, `config.token`), a literal such as
    # None/null/true, or a template (`%(pw)s`, `%TOKEN%`, `{{ token }}`).
    ("credential assignment", re.compile(
        rb"(?i)(?<![A-Za-z0-9])(?:password|passwd|secret|token)\s*=\s*(?:\\?[\"'])?"
        rb"(?!\*|[<\[({=%]|\$|\\?[\"']|redacted|xxx|\.\.\.)"
        rb"(?!(?:none|null|nil|true|false|undefined)(?![A-Za-z0-9_]))"
        # (code only when unmistakable: `f()`, `a.f(\"x\")`, `d[\"x\"]`; in doubt, hold)
        rb"(?![A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
        rb"(?:\((?:\)|\s*\\[\"'])|\[\s*\\[\"']))"
        rb"[^\s\"'\\,;&)]{3,}")),
)


def _blank_escapes(data: bytes) -> bytes:
    if b"\\" not in data:
        return data
    if b"\\\\" in data:  # escaped backslashes first: in the raw `\\token` the `t` is a letter
        data = data.replace(b"\\\\", b"\\/")  # (`\/` is an escape that stands for `/`)
    for escape in _CONTROL_ESCAPES:  # two bytes each: no two can overlap, so the order is free
        if escape in data:
            data = data.replace(escape, b"  ")
    if b"\\u" in data:
        data = _UNICODE_ESCAPE.sub(b"      ", data)
    return data


def _match(blanked: bytes) -> str | None:
    for name, pattern in _PATTERNS:
        if pattern.search(blanked):
            return name
    return None


def _kind(raw: bytes) -> str | None:
    """The precise patterns alone (no prefilter)."""
    return _match(_blank_escapes(raw))


def _assignment_word_before(big: bytes, at: int) -> bool:
    """Whether `password`, `passwd`, `secret` or `token` ends just before the `=` at
    `at`, past any whitespace, however long (the pattern puts no bound on it)."""
    end = at
    while True:
        start = max(0, end - 64)
        end = start + len(big[start:end].rstrip(_WS))
        if end > start or start == 0:
            return big[max(0, end - 8):end].lower().endswith(_ASSIGN_WORDS)


def held_in_batch(raws: list[bytes]) -> dict[int, str]:
    """Which of these lines carry a likely secret: {index: kind}.  Never the secret."""
    if not raws:
        return {}
    big = _blank_escapes(b"\n".join(raws))
    starts = []
    pos = 0
    for raw in raws:
        starts.append(pos)
        pos += len(raw) + 1
    candidates: set[int] = set()

    def line_at(offset: int) -> int:
        return bisect_right(starts, offset) - 1

    def next_line_start(line: int) -> int:
        return starts[line + 1] if line + 1 < len(starts) else len(big)

    runs = big.translate(_RUN_TABLE)
    needle = b"a" * _MIN_RUN
    at = runs.find(needle)
    while at != -1:
        line = line_at(at)
        candidates.add(line)
        at = runs.find(needle, next_line_start(line))
    at = big.find(b"PRIVATE KEY")
    while at != -1:
        line = line_at(at)
        candidates.add(line)
        at = big.find(b"PRIVATE KEY", next_line_start(line))
    at = big.find(b"=")
    while at != -1:
        before = big[max(0, at - 24):at].rstrip(_WS)
        if (before.lower().endswith(_ASSIGN_WORDS) if len(before) >= 8 or at <= 24
                else _assignment_word_before(big, at)):
            candidates.add(line_at(at))
        at = big.find(b"=", at + 1)

    found = {}
    for i in sorted(candidates):
        kind = _match(big[starts[i]:starts[i] + len(raws[i])])
        if kind:
            found[i] = kind
    return found


def likely_secret(raw: bytes) -> str | None:
    """The kind of likely secret one letter's bytes carry, or None."""
    return held_in_batch([raw]).get(0)
