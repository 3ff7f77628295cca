"""The one function that makes text safe for a terminal (contract section 10).

Every string that came from a letter, a file or a path is data: it must never move
the cursor, write the clipboard (OSC 52), ring, or reorder what a person reads (the
bidirectional controls, a disguised probe).  `safe` escapes control characters (ESC,
other C0, DEL, C1), the line and paragraph separators and the bidi controls; callers
choose what a newline and a tab become.  Every human output goes through it: the CLI's
plain-text writers and every rich console (output.py) pass what they print through
`safe` at the last step, so a caller that forgets cannot leak a control character.
"""

from __future__ import annotations

import re

# C0 but tab and newline (handled apart), DEL, C1, U+2028/2029, the bidi controls, and
# surrogates (a path whose bytes are not UTF-8 reaches Python with them; no stream can
# write them, and what they stand for is a byte: shown as `\xNN`)
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
_ANY = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    o = ord(match[0])
    if 0xDC80 <= o <= 0xDCFF:  # an undecodable byte (surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}"


def safe(text: str, newline: str = "⏎", tab: str = " ") -> str:
    """`text` with nothing a terminal would act on: controls and bidi escaped (`\\x1b`,
    `\\u202e`), a newline shown as `newline`, a tab as `tab` (pass "\\n", "\\t" to keep them)."""
    if text.isprintable():  # the common case: nothing to do
        return text
    if newline == "\n" and tab == "\t":
        return _UNSAFE.sub(_escape, text)
    return _ANY.sub(lambda m: newline if m[0] == "\n" else tab if m[0] == "\t" else _escape(m), text)


def safe_lines(text: str) -> str:
    """Multi-line human output at the point it is written: its own newlines and tabs kept."""
    return safe(text, "\n", "\t")
