"""Fingerprints (cases.md section 1): `fp:<tool_family>/<symptom_kind>`.

Where a letter's kind comes from, first match wins: its own `kind` when it is one
of the eight; the `memory_misdelivery` mapping; then the backfill rules below, in
order, for letters written before kinds existed.  Otherwise the letter has no
fingerprint (it is kindless): a kind is never guessed.  Everything here is a pure
function of the letter's fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from m1nd.fates import is_receipt
from m1nd.letters import Letter
from m1nd.routing import cut_annotation

VOCABULARY = (
    "false_absence",
    "stale_claim",
    "overclaimed_verdict",
    "wrong_route",
    "scope_escape",
    "silent_drop",
    "crash",
    "ux_confusion",
)
KINDS = frozenset(VOCABULARY)
MISDELIVERY = "memory_misdelivery"
MISDELIVERY_KINDS = {
    "false_absence": "false_absence",
    "vanished": "false_absence",
    "leak": "scope_escape",
    "wrong_store_write": "wrong_route",
    "misattribution": "wrong_route",
}
ENGINE_AGENT = "m1nd:engine"

# Sources of a kind, as `m1nd cases explain` names them.
SOURCE_KIND = "kind"
SOURCE_MISDELIVERY = "misdelivery"
SOURCE_NONE = "none"

_FP = re.compile(r"fp:(.*)/([a-z_]+)", re.S)  # the kind after the last "/": a family may hold one (`mcp/north`)
_WORD = re.compile(r"[a-z0-9_']+")

# Words that say "nothing here" (rule north-memory-emptiness).  Single words match a
# whole word of `what`; two-word phrases match two consecutive words.
EMPTINESS_WORDS = frozenset({"nothing", "empty", "none", "zero", "absent", "blank"})
EMPTINESS_PHRASES = frozenset({("no", "results"), ("no", "result"), ("no", "memories"), ("no", "entries"),
                               ("no", "matches"), ("not", "found"), ("found", "no")})


def tool_family(tool: str) -> str:
    """The `tool` field cut at the first `(`, trimmed, lowercased; no fuzzy matching."""
    return cut_annotation(tool).lower()


def make(family: str, kind: str) -> str:
    return f"fp:{family}/{kind}"


def split(fingerprint: str) -> tuple[str, str] | None:
    """(family, kind) of a well-formed fingerprint string, else None."""
    m = _FP.fullmatch(fingerprint) if isinstance(fingerprint, str) else None
    if m is None or m[2] not in KINDS:
        return None
    return m[1], m[2]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _mentions_emptiness(words: list[str]) -> bool:
    if any(w in EMPTINESS_WORDS for w in words):
        return True
    return any(pair in EMPTINESS_PHRASES for pair in zip(words, words[1:]))


def _north_memory_emptiness(letter: Letter) -> bool:
    if letter.klass != "honesty" or tool_family(letter.tool) != "north":
        return False
    words = _words(letter.what)
    return any(w.startswith("memor") for w in words) and _mentions_emptiness(words)


def _traceback_crash(letter: Letter) -> bool:
    if letter.klass != "bug":
        return False
    return "Traceback (most recent call last)" in letter.what or "Traceback (most recent call last)" in letter.snippet


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    says: str  # what the rule matches, in words (README and `cases explain`)
    test: Callable[[Letter], bool]
    sql: str  # a prefilter over the read model's `letters l`: true for every letter the rule may match


BACKFILL_RULES: tuple[Rule, ...] = (
    Rule("north-memory-emptiness", "false_absence",
         "class `honesty`, tool family `north`, and `what` mentions memory (a word starting `memor`) and "
         "emptiness (nothing, empty, none, zero, absent, blank, or: no results, no result, no memories, "
         "no entries, no matches, not found, found no)",
         _north_memory_emptiness, "l.class = 'honesty' AND l.tool LIKE '%north%'"),
    Rule("traceback-crash", "crash",
         "class `bug` and `what` or `snippet` holds a Python traceback header "
         "(`Traceback (most recent call last)`)",
         _traceback_crash, "l.class = 'bug' AND (instr(l.what, 'Traceback (most recent call last)') > 0"
                           " OR instr(l.snippet, 'Traceback (most recent call last)') > 0)"),
)


@dataclass(frozen=True)
class Derivation:
    fingerprint: str | None
    source: str  # `kind`, `misdelivery`, a backfill rule's name, or `none`
    why: str  # one sentence for `cases explain`


def candidates_sql() -> str:
    """SQL over `letters l` true for every letter that may have a fingerprint (a superset:
    `derive` decides).  Every other letter that is neither a mission nor a receipt is kindless."""
    kinds = ", ".join(f"'{k}'" for k in VOCABULARY)
    rules = " OR ".join(f"({r.sql})" for r in BACKFILL_RULES)
    return f"l.kind IN ({kinds}) OR l.class = '{MISDELIVERY}' OR {rules}"


RECEIPT_SQL = "lower(l.class) = 'triage'"  # fates.is_receipt (a non-ASCII class never lowers to `triage`)


def derive(letter: Letter) -> Derivation:
    """Which fingerprint the letter has, and which rule gave its kind (or why none)."""
    family = tool_family(letter.tool)
    kind = letter.kind
    if kind in KINDS:
        return Derivation(make(family, kind), SOURCE_KIND, f"its kind {kind!r} is one of the eight")
    if letter.klass == MISDELIVERY:
        mapped = MISDELIVERY_KINDS.get(kind) if kind is not None else None
        if mapped:
            return Derivation(make(family, mapped), SOURCE_MISDELIVERY,
                              f"class memory_misdelivery with kind {kind!r} maps to {mapped}")
    for rule in BACKFILL_RULES:
        if rule.test(letter):
            return Derivation(make(family, rule.kind), rule.name, f"backfill rule {rule.name}: {rule.says}")
    if kind is None:
        why = "it has no kind, and no backfill rule matched"
    elif letter.klass == MISDELIVERY:
        why = (f"class memory_misdelivery with kind {kind!r}, which the mapping does not name "
               f"({', '.join(MISDELIVERY_KINDS)}), and no backfill rule matched")
    else:
        why = f"its kind {kind!r} is not one of the eight, and no backfill rule matched"
    return Derivation(None, SOURCE_NONE, why)


def witness_refusal(letter) -> str | None:
    """Why a letter can never be a witness, or None when it can be one."""
    if letter.kind == "mission":
        return "mission letters are never witnesses"
    if is_receipt(letter):
        return "receipts (class triage, escalations included) are never witnesses"
    return None
