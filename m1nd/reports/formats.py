"""A frozen report's three artifacts: Markdown and JSON (render.py) and HTML (html.py).

The one place that puts the formats together, so render.py and html.py never import
each other (html.py builds on render.py's helpers).
"""

from __future__ import annotations

from m1nd.reports import store
from m1nd.reports.html import page
from m1nd.reports.render import json_doc, markdown


def artifacts(frozen: store.Frozen) -> dict[str, bytes]:
    text = markdown(frozen)
    return {
        f"{frozen.run_id}.md": text,
        f"{frozen.run_id}.html": page(frozen, store.sha256(text)),
        f"{frozen.run_id}.json": json_doc(frozen),
    }


def render(frozen: store.Frozen, fmt: str) -> bytes:
    return artifacts(frozen)[f"{frozen.run_id}.{fmt}"]
