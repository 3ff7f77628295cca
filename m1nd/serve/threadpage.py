"""The page of one letter's thread (serve.md §3), and of an id prefix that names
more than one letter."""

from __future__ import annotations

from urllib.parse import quote

import orjson

from m1nd.fates import is_receipt
from m1nd.serve.markup import STATE_WORD, attr, badge, ids_links, layout, letter_link, line, text
from m1nd.serve.source import ThreadData

KNOWN_FIELDS = ("ts", "agent", "class", "kind", "repo", "brain", "tool")
TEXT_FIELDS = ("what", "expected", "snippet")


def _fields(card) -> str:
    raw, state = card.fields, card.state
    rows = [("id", f'<span class="id nw">{text(card.row.id)}</span>'),
            ("state", _state_words(card)),
            ("box", text(card.box))]
    for key in KNOWN_FIELDS:
        if raw.get(key) not in ("", None):
            rows.append((key, text(raw[key])))
    for key in TEXT_FIELDS:
        if raw.get(key):
            rows.append((key, f"<pre>{text(raw[key])}</pre>"))
    if card.row.answers:
        rows.append(("answers", ids_links(card.row.answers)))
    if card.answered_by:
        rows.append(("answered by", ids_links(card.answered_by)))
    for key in sorted(k for k in raw if k not in KNOWN_FIELDS + TEXT_FIELDS + ("answers",)):
        value = raw[key]
        shown = value if isinstance(value, str) else orjson.dumps(value).decode()
        rows.append((key, f"<pre>{text(shown)}</pre>"))
    return '<dl class="facts">' + "".join(f"<dt>{text(k)}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _state_words(card) -> str:
    """A reply is work done, not work to do: it says what it is, never "open"."""
    if card.row.answers:
        word = "a receipt" if is_receipt(card.row) else "a reply"
        n = len(card.row.answers)
        return (f'<span class="state reply">{word}</span> <span class="muted">to {n} letter{"s" if n != 1 else ""}: '
                f"work done, not work to do</span>")
    return f'<span class="state {card.state}">{text(STATE_WORD[card.state])}</span>'


def _card(card, focus: str) -> str:
    lid = card.row.id
    cls = " focus" if lid == focus else ""
    head = (f'{badge(card.row, card.state)}<a class="what" href="{attr(letter_link(lid))}">'
            f'{line(card.row.what) or "(no text)"}</a>')
    kind = "reply" if card.row.answers else card.state
    return f'<div class="card letter {kind}{cls}" id="l-{attr(lid)}">{head}{_fields(card)}</div>'


def thread(data: ThreadData) -> str:
    def tree(ids: list[str]) -> str:
        return '<ul class="thread">' + "".join(
            f"<li>{_card(data.cards[k], data.focus)}{tree(data.children[k]) if data.children.get(k) else ''}</li>"
            for k in ids) + "</ul>"

    count = len(data.roots) + sum(len(v) for v in data.children.values())
    body = (f'<p><a href="/">← mailbox</a></p><h1>Letter <span class="id nw">{text(data.focus)}</span></h1>'
            f'<p class="muted">Its thread: {count} letter{"s" if count != 1 else ""}, oldest first; '
            f'this letter is outlined.</p>{tree(data.roots)}')
    return layout(f"Letter {data.focus}", body)


def candidates(ident: str, ids: list[str]) -> str:
    links = "".join(f'<li><a class="id" href="/letters/{attr(quote(i))}">{text(i)}</a></li>' for i in ids)
    body = (f'<h1>Which letter?</h1><p>The prefix <span class="id nw">{text(ident)}</span> names '
            f"{len(ids)} letters:</p><ul>{links}</ul>")
    return layout("Ambiguous id", body)
