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

# A token starts after a non-token character or after a JSON escape: in a letter's raw
# bytes a multi-line snippet reads `...\nghp_...` and a quoted one `\u201cghp_...`, so
# the byte before the token is a letter or a hex digit.
_AFTER_ESCAPE = rb"|(?<=\\[nrtbf])|(?<=\\u[0-9A-Fa-f]{4})"


def _start(not_after: bytes) -> bytes:
    return rb"(?:(?<![" + not_after + rb"])" + _AFTER_ESCAPE + rb")"


# Padding around `=`: whitespace, or a tab as JSON escapes it.
_PAD = rb"(?:\s|\\t)*"

_PATTERNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("private key block", re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("cloud access key id", re.compile(_start(rb"A-Z0-9") + rb"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")),
    ("github token", re.compile(_start(rb"A-Za-z0-9_") + rb"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("gitlab token", re.compile(_start(rb"A-Za-z0-9_") + rb"glpat-[A-Za-z0-9_\-]{20,}")),
    ("slack token", re.compile(_start(rb"A-Za-z0-9_") + rb"xox[baprs]-[A-Za-z0-9\-]{15,}")),
    ("api secret key", re.compile(_start(rb"A-Za-z0-9_\-") + rb"(?:sk-(?:[a-z]+-)?[A-Za-z0-9_\-]{20,}|[sr]k_live_[A-Za-z0-9]{20,})")),
    ("google api key", re.compile(_start(rb"A-Za-z0-9_") + rb"AIza[A-Za-z0-9_\-]{35}")),
    # `password=hunter2`, `token = "abc123"`: a value that is not empty and not a
    # placeholder such as <redacted>, [REDACTED], (empty), {name}, ***, $VAR or ${VAR}
    # (a value opening with a bracket is taken for a placeholder).
    ("credential assignment", re.compile(
        rb"(?i)" + _start(rb"A-Za-z0-9") + rb"(?:password|passwd|secret|token)" + _PAD + rb"=" + _PAD
        + rb"(?:\\?[\"'])?(?!\*|[<\[({]|\$|\\?[\"']|redacted|xxx|\.\.\.)[^\s\"'\\,;&)]{3,}")),
)


def _assignment_word_before(big: bytes, at: int) -> bool:
    """Whether `password`, `passwd`, `secret` or `token` ends just before the `=` at
    `at`, past any padding the credential pattern allows (however long)."""
    end = at
    while end > 0:
        c = big[end - 1]
        if c in _WS:
            end -= 1
        elif c == 0x74 and end >= 2 and big[end - 2] == 0x5C:  # `\t`
            end -= 2
        else:
            break
    return big[max(0, end - 8):end].lower().endswith(_ASSIGN_WORDS)


def _kind(raw: bytes) -> str | None:
    for name, pattern in _PATTERNS:
        if pattern.search(raw):
            return name
    return None


def held_in_batch(raws: list[bytes]) -> dict[int, str]:
    """Which of these lines carry a likely secret: {index: kind}.  Never the secret."""
    if not raws:
        return {}
    big = b"\n".join(raws)
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
        if _assignment_word_before(big, at):
            candidates.add(line_at(at))
        at = big.find(b"=", at + 1)

    found = {}
    for i in sorted(candidates):
        kind = _kind(raws[i])
        if kind:
            found[i] = kind
    return found


def likely_secret(raw: bytes) -> str | None:
    """The kind of likely secret one letter's bytes carry, or None."""
    return held_in_batch([raw]).get(0)
