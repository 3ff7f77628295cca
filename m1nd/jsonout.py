"""The one JSON format of every `--json` document.

Byte-identical to `json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\\n"`
(contract section 6), produced by orjson for speed; a test pins the equivalence.
"""

from __future__ import annotations

import orjson


def dumps(doc) -> bytes:
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    except orjson.JSONEncodeError:
        # A path whose bytes are not UTF-8 reaches Python with surrogate escapes, which
        # orjson refuses; the standard encoder keeps them, written as \uDCxx escapes.
        import json

        text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        return text.encode("utf-8", "backslashreplace")


def utf8_safe(value):
    """`value` with each string that holds surrogate escapes (a path whose bytes are not
    UTF-8 reaches Python so) spelled with `\\xNN` for those bytes: orjson refuses such
    strings.  Other values are returned as they are; applied only when needed."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {utf8_safe(k): utf8_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [utf8_safe(v) for v in value]
    return value


def record(value, option: int = 0) -> bytes:
    """orjson bytes of a record or key m1nd keeps (a cache, a digest's input): a path
    that is not UTF-8 is spelled with `\\xNN` escapes instead of failing the command."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return orjson.dumps(utf8_safe(value), option=option)
