"""The one JSON format of every `--json` document.

Byte-identical to `json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\\n"`
(contract section 6), produced by orjson for speed; a test pins the equivalence.
"""

from __future__ import annotations

import orjson


def dumps(doc) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
