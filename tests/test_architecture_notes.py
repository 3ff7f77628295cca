"""The README's notes on where the code lives name only modules that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _development_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("### Development")
    end = text.find("\n## ", start)
    return text[start:] if end < 0 else text[start:end]


def test_every_module_the_development_notes_name_exists():
    named = set(re.findall(r"\b((?:m1nd|tests)/[\w/]*\w(?:\.py|/))", _development_section()))
    assert len(named) >= 15, named  # the notes do name the modules
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == []

