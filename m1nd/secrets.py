"""Likely secrets (contract section 4, "held letters").

Committing a box publishes its letters, so a letter carrying something that looks
like a credential is never filed into a project box.  Two layers:

- the Kingfisher scanner's rule catalog (`kingfisher_sdk`, a compiled multi-pattern
  engine over several hundred provider formats, gitleaks' rules among them), loaded
  lazily, only when some letter needs a closer look;
- m1nd's own rules (secret_rules.py) for what a catalog made for source files
  misses in field reports: keyword assignments in every syntax, credentials in URLs,
  headers and command lines, key bodies without their BEGIN line, and known prefixes
  in any shape.

Both see each letter's raw bytes first, and again with its JSON escapes decoded
(`\\u0067hp_…`, a `json.dumps`-escaped non-ASCII password, a `\\n`-joined snippet).

Speed: a first distribution scans every letter bound for a project.  One pass of
the compiled engine over the joined batch (chunk by chunk, with m1nd's anchor rules:
keyword assignments, commands, prefixes, provider names, random runs) picks the few
lines that could hold a secret; only those are judged in Python.  A credential word
in prose ("the token step") or an exception's name (`KeyError:`) is no hit at all:
each hit the engine reports costs it microseconds.  Hashes, digests, UUIDs and identifiers
carry no anchor, so they cost nothing beyond that pass.  Small batches (a hook
filing a few new letters) are prefiltered by the same anchors in Python, and the
catalog is loaded only when a line has an anchor or a long mixed token.
"""

from __future__ import annotations

import os

from bisect import bisect_right
from itertools import accumulate

from m1nd import secret_rules as rules
from m1nd.letters import MAX_LETTER_BYTES, OVERSIZED

SMALL_BATCH = 64  # lines: below this, prefilter in Python before loading the engine
CHUNK = 4096  # lines per engine pass: a joined chunk stays in the cache, a whole spool does not
_RULES_FILE = os.path.join(os.path.dirname(__file__), "secret_anchor.yml")
_JOIN = b"\n"


class _Engine:
    """The Kingfisher scanner, compiled once per process (or None when unavailable).

    Compiling the catalog takes seconds when it is not cached yet (a new home) and
    releases the GIL: a large read starts it in a thread (`preload`), so that it
    compiles on another core while the letters are read and parsed."""

    scanner = None
    tried = False
    cache_dir: str | None = None
    _lock = None  # threading.Lock, made by preload (get without preload needs none)
    _thread = None

    @classmethod
    def get(cls):
        if cls.tried:
            return cls.scanner
        if cls._lock is not None:
            with cls._lock:
                return cls._load()
        return cls._load()

    @classmethod
    def preload(cls) -> None:
        if cls.tried or cls._thread is not None:
            return
        import threading

        cls._lock = threading.Lock()
        cls._thread = threading.Thread(target=cls.get, name="m1nd-secret-rules", daemon=True)
        cls._thread.start()

    @classmethod
    def _load(cls):
        if cls.tried:
            return cls.scanner
        try:
            import kingfisher_sdk
        except ImportError:  # no wheel for this platform: m1nd's own rules alone
            cls.tried = True
            return None
        cache_dir = os.environ.get("M1ND_RULE_CACHE") or cls.cache_dir
        try:
            # m1nd's anchor rule alone: the built-in catalog of several hundred
            # provider rules took 6-9 s to compile in a new home and added nothing
            # m1nd's own rules do not hold on the external corpus (docs/secrets.md)
            catalog = kingfisher_sdk.Rules(
                [_RULES_FILE], builtins=False, confidence="low",
                cache=cache_dir is not None, cache_dir=cache_dir)
            cls.scanner = kingfisher_sdk.Scanner(catalog, base64=False, dedup=False)
        except Exception:  # a broken install must not stop filing: own rules still hold
            cls.scanner = None
        cls.tried = True
        return cls.scanner


def use_cache(directory: str | None) -> None:
    """Where the compiled catalog is cached (under `<home>/state/`); None: no cache.
    Never the OS cache directory: m1nd writes nothing outside the home and the roots."""
    if not _Engine.tried:
        _Engine.cache_dir = directory


def preload() -> None:
    """Start compiling (or loading) the catalog in a thread, for a read about to
    check many letters; `held_in_batch` waits for it when it needs it."""
    _Engine.preload()


def compiling() -> bool:
    """Whether the catalog is being compiled in a thread right now (see preload)."""
    return not _Engine.tried and _Engine._thread is not None and _Engine._thread.is_alive()


def _engine_findings(data: bytes) -> list[tuple[int, str]]:
    """(start offset, rule id) of every engine finding in `data` that makes its line
    worth judging (secret_rules.anchor_hit_counts)."""
    scanner = _Engine.get()
    if scanner is None or not data:
        return []
    # Invisible findings are the supporting parts of a rule (a tenant id beside a
    # client secret): identifiers on their own, not secrets.
    found = []
    for f in scanner.scan(data):
        start = f.location["start_offset"]
        if f.visible and rules.anchor_hit_counts(data[start:f.location["end_offset"]]):
            found.append((start, f.rule_id))
    return found


def _kind(raw: bytes) -> str | None:
    """The full judgement of one line: m1nd's rules on its text with JSON escapes
    decoded (once, and again for JSON carried inside a JSON string)."""
    text = raw.decode("utf-8", "replace")
    decoded = rules.decode_escapes(text)
    kind = rules.match(decoded)
    deeper = decoded
    for _ in range(2):  # JSON inside a JSON string, escaped once or twice more
        if kind or not ('\\"' in deeper or "\\u" in deeper):  # a path's backslashes stay
            break
        deeper, before = rules.decode_escapes(deeper), deeper
        if deeper == before:
            break
        kind = rules.match(deeper)
    return kind


def _lines_of(raws: list[bytes], offsets: list[int]) -> set[int]:
    """The indexes of the lines of `_JOIN.join(raws)` holding these offsets."""
    ends = list(accumulate(map(len, raws)))  # line i starts at ends[i-1] + i
    return {bisect_right(range(len(raws)), off, key=lambda i: ends[i] + i) for off in offsets}


def _python_candidates(raws: list[bytes]) -> set[int]:
    return {i for i, raw in enumerate(raws) if rules.has_anchor(raw)}


def held_in_batch(raws: list[bytes]) -> dict[int, str]:
    """Which of these lines are held: {index: kind}, the kind of likely secret, or
    "oversized" for a letter over 64 KiB (section 2: held all the same, and never
    scanned).  Never the secret."""
    if max(map(len, raws), default=0) > MAX_LETTER_BYTES:  # at C speed: ordinary batches have none
        kept = [i for i, raw in enumerate(raws) if len(raw) <= MAX_LETTER_BYTES]
        found = {i: OVERSIZED for i, raw in enumerate(raws) if len(raw) > MAX_LETTER_BYTES}
        found.update((kept[j], kind) for j, kind in _held(raws=[raws[i] for i in kept]).items())
        return dict(sorted(found.items()))
    return _held(raws)


def _held(raws: list[bytes]) -> dict[int, str]:
    if not raws:
        return {}
    # A small batch (a hook filing a few letters) never loads the engine.
    if len(raws) < SMALL_BATCH or _Engine.get() is None:
        return {i: k for i in sorted(_python_candidates(raws)) if (k := _kind(raws[i]))}
    # One pass of the compiled engine over the whole batch; every line it flags is
    # judged again on its own (a finding never spans two letters).
    candidates: set[int] = set()
    for first in range(0, len(raws), CHUNK):
        chunk = raws[first:first + CHUNK]
        found = _engine_findings(_JOIN.join(chunk))
        if found:  # most chunks of ordinary letters have none
            candidates.update(first + i for i in _lines_of(chunk, [off for off, _ in found]))
    return {i: k for i in sorted(candidates) if (k := _kind(raws[i]))}


def likely_secret(raw: bytes) -> str | None:
    """The kind of likely secret one letter's bytes carry, or None."""
    return held_in_batch([raw]).get(0)


def anchor_pattern() -> str:
    """The anchor rule's pattern (the engine's YAML holds the same text)."""
    return rules.ANCHOR


def rules_file_text() -> str:
    """The engine's rule file for the current anchor, one rule per part (what
    `secret_anchor.yml` must hold; write it with
    `python -c "from m1nd.secrets import rules_file_text as t; print(t(), end='')" > m1nd/secret_anchor.yml`)."""
    out = ["# The anchor rules of m1nd's own secret rules (m1nd/secret_rules.py ANCHOR_PARTS, generated",
           "# by m1nd.secrets.rules_file_text, kept equal by tests/test_secret_corpus.py): lines they",
           "# match are judged by those rules.", "rules:"]
    for n, part in enumerate(rules.ANCHOR_PARTS):
        quoted = part.replace("'", "''")
        out += [f"  - name: m1nd anchor {n}", f"    id: m1nd.anchor.{n}", f"    pattern: '{quoted}'",
                "    confidence: low", "    min_entropy: 0"]
    return "\n".join(out) + "\n"


def _check_rules_file() -> bool:
    """Whether the shipped engine rule file holds the current anchor (tests)."""
    with open(_RULES_FILE, encoding="utf-8") as fh:
        return fh.read() == rules_file_text()


__all__ = ["held_in_batch", "likely_secret", "preload", "use_cache"]

