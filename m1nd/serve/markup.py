"""What every page is made of: the escaping every value from a letter, a path or a
query passes through (`text`, `line`, `attr`), the layout, the policy, and the
small parts more than one page shows (a fate's badge, links to letters)."""

from __future__ import annotations

import html
from urllib.parse import quote

from m1nd import __version__
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, WET_INK, is_receipt
from m1nd.safetext import safe_lines
from m1nd.serve.style import CSS, CSS_HASH

PAGE_CSP = (f"default-src 'none'; style-src {CSS_HASH}; img-src 'self' data:; form-action 'self'; "
            "base-uri 'none'; frame-ancestors 'none'")
STATE_WORD = {WET_INK: "open", IN_FLIGHT: "in flight", FIRED_CLAY: "answered", EXTERNAL: "external"}


def text(value) -> str:
    """A value as page text: control characters shown as `\\xNN`, HTML escaped."""
    return html.escape(safe_lines(str(value)), quote=True)


def line(value) -> str:
    """One-line text for list views: a newline never starts a line of its own."""
    return text(str(value).replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " "))


def attr(value) -> str:
    return html.escape(str(value), quote=True)


NAV = (("letters", "/", "Letters"), ("cases", "/cases", "Cases"), ("reports", "/reports", "Reports"))


def layout(title: str, body: str, here: str = "letters", nav=NAV) -> str:
    here_attr = ' class="here"'
    links = "".join(f'<a href="{attr(href)}"{here_attr if key == here else ""}>{text(word)}</a>'
                    for key, href, word in nav)
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta name=\"color-scheme\" content=\"light dark\"><title>{text(title)} · m1nd</title>"
        "<link rel=\"icon\" href=\"/favicon.svg\" type=\"image/svg+xml\">"
        f"<style>{CSS}</style></head><body>"
        f"<header class=\"site\"><div class=\"bar\"><a class=\"brand\" href=\"/\">m1nd</a><nav>{links}</nav></div></header>"
        f"<main>{body}</main><footer>m1nd {text(__version__)} · read-only</footer></body></html>\n"
    )


def badge(letter, state: str) -> str:
    """The fate, or for a reply (work done, not work to do) what kind of reply."""
    if letter.answers:
        word = "receipt" if is_receipt(letter) else "reply"
        return f'<span class="state reply" title="{attr(STATE_WORD[state])}">{word}</span>'
    return f'<span class="state {state}">{text(STATE_WORD[state])}</span>'


def letter_link(lid: str) -> str:
    return f"/letters/{quote(lid)}"


def ids_links(ids) -> str:
    return " ".join(f'<a class="id" href="{attr(letter_link(a))}">{text(a)}</a>' for a in ids)
