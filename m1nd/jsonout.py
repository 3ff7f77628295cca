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
