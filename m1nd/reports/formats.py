"""A frozen report's three artifacts: Markdown and JSON (render.py) and HTML (html.py).

The one place that puts the formats together, so render.py and html.py never import
each other (html.py builds on render.py's helpers).  Each artifact is made a batch
of lines at a time (`streams`), so a report of any size renders in the memory of a
page; `artifacts` and `render` join them for the callers that want bytes.
"""

from __future__ import annotations

import hashlib
from typing import Iterator

from m1nd.reports import store
from m1nd.reports.html import page_chunks
from m1nd.reports.render import Tally, json_chunks, markdown_chunks


def streams(frozen: store.Frozen) -> Iterator[tuple[str, Iterator[bytes]]]:
    """(file name, its bytes in chunks) for the Markdown, the HTML and the JSON, in
    that order; each must be read to its end before the next is asked for (the HTML
    names the Markdown's digest)."""
    tally = Tally(frozen)
    text = hashlib.sha256()

    def markdown() -> Iterator[bytes]:
        for chunk in markdown_chunks(frozen, tally):
            text.update(chunk)
            yield chunk

    yield f"{frozen.run_id}.md", markdown()
    yield f"{frozen.run_id}.html", page_chunks(frozen, text.hexdigest(), tally)
    yield f"{frozen.run_id}.json", json_chunks(frozen, tally)


def artifacts(frozen: store.Frozen) -> dict[str, bytes]:
    return {name: b"".join(chunks) for name, chunks in streams(frozen)}


def render(frozen: store.Frozen, fmt: str) -> bytes:
    want = f"{frozen.run_id}.{fmt}"
    for name, chunks in streams(frozen):
        data = b"".join(chunks)
        if name == want:
            return data
    raise KeyError(want)
