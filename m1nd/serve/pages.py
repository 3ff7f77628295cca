"""The HTML pages (serve.md §3): plain documents that work without JavaScript.

Every value that comes from a letter, a path or a query passes through `text()` or
`attr()`; nothing else is ever put into a page. No script, no external resource:
the stylesheet is inline and allowed by its hash.

The mailbox page (its filters, boxes and letters) is here; what every page is made of
is markup.py's, a letter's thread threadpage.py's, the cases and reports pages
listings.py's (each asked of this module too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from m1nd.errors import UsageError
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, OPEN_STATES, WET_INK
from m1nd.serve.listings import CASE_STATE, cases, reports  # noqa: F401  (asked of this module)
from m1nd.serve.markup import (  # noqa: F401  (asked of this module)
    NAV, PAGE_CSP, STATE_WORD, attr, badge, layout, letter_link, line, text)
from m1nd.serve.source import SPOOL_ROW, IndexData
from m1nd.serve.threadpage import candidates, thread  # noqa: F401  (asked of this module)

# the page's state filter -> the fates it keeps
STATE_FILTER = {"open": OPEN_STATES, "in_flight": (IN_FLIGHT,), "answered": (FIRED_CLAY,),
                "external": (EXTERNAL,), "all": (WET_INK, IN_FLIGHT, FIRED_CLAY, EXTERNAL)}
STATE_CHOICE = {"open": "open", "in_flight": "in flight", "answered": "answered", "external": "external", "all": "all"}
PAGE_SIZE = 50
MAX_LIMIT = 500
ID_PREFIX = re.compile(r"[0-9a-fA-F]{4,12}")  # the whole id: fullmatch (a "$" lets a newline through)


@dataclass(frozen=True)
class Filters:
    state: str = "open"
    box: str = ""
    agent: str = ""
    klass: str = ""
    tool: str = ""
    since: str = ""
    until: str = ""
    q: str = ""
    replies: bool = False
    offset: int = 0
    limit: int = PAGE_SIZE

    @classmethod
    def parse(cls, params) -> "Filters":
        def one(key: str) -> str:
            values = params.getlist(key)
            if len(values) > 1:
                raise UsageError(f"filter {key!r} given more than once")
            return values[0].strip() if values else ""

        state = one("state") or "open"
        if state not in STATE_FILTER:
            raise UsageError(f"unknown state {state!r} (choose from {', '.join(STATE_FILTER)})")

        def number(key: str, default: int, low: int, high: int) -> int:
            raw = one(key)
            if not raw:
                return default
            if not raw.isdigit() or not low <= int(raw) <= high:
                raise UsageError(f"{key} must be a whole number from {low} to {high}")
            return int(raw)

        made = cls(state=state, box=one("box"), agent=one("agent"), klass=one("class"), tool=one("tool"),
                   since=one("since"), until=one("until"), q=one("q"), replies=one("replies") in ("1", "on", "yes"),
                   offset=number("offset", 0, 0, 10**9), limit=number("limit", PAGE_SIZE, 1, MAX_LIMIT))
        made.core()  # the CLI's checks, with its messages
        return made

    def core(self):
        """The same filters as `m1nd sweep`'s options (m1nd.views), which decide the match."""
        from m1nd.views import make_filters

        return make_filters(self.state, self.agent or None, self.klass or None, self.tool or None,
                            self.since or None, self.until or None, default_state="open")

    def query(self, **change) -> str:
        """This filter set (with `change` applied, offset reset unless given) as a link."""
        f = replace(self, **({"offset": 0} | change))
        pairs = [("state", f.state if f.state != "open" else ""), ("box", f.box), ("agent", f.agent),
                 ("class", f.klass), ("tool", f.tool), ("since", f.since), ("until", f.until), ("q", f.q),
                 ("replies", "1" if f.replies else ""), ("offset", str(f.offset) if f.offset else ""),
                 ("limit", str(f.limit) if f.limit != PAGE_SIZE else "")]
        qs = urlencode([(k, v) for k, v in pairs if v], errors="surrogateescape")  # a label may not be UTF-8
        return "/" + (f"?{qs}" if qs else "")



def _count(f: Filters, label: str, key: str, number: int, state: str | None) -> str:
    inner = f'<span class="dot {key}"></span>{text(label)} <b>{number}</b>'
    if state is None:
        return f"<span>{inner}</span>"
    return f'<a href="{attr(f.query(state=state))}">{inner}</a>'


WAITING_LABEL = "waiting to be filed"  # the spool's row: what its letters are, not where they lie
WAITING = ("in the spool, in no box yet: for a repository this machine does not know yet, for the next "
           "safe filing (a commit with the --stage hook, or m1nd distribute), or held back (m1nd doctor says which)")
MARKERS = ("🟦", "🟪", "🟩", "🟧")  # beside each box's written label, never alone


def boxes_section(data: IndexData, f: Filters) -> str:
    cards = []
    # as in a report with the default boxes: the roster's roots in order, then medulla
    boxes = [b.label for b in data.boxes if b.label not in (SPOOL_ROW, "medulla")]
    boxes += [b.label for b in data.boxes if b.label == "medulla"]
    markers = {label: MARKERS[i % len(MARKERS)] for i, label in enumerate(boxes)}
    for box in data.boxes:
        c, label = box.counts, box.label
        marker = f'<span class="marker" aria-hidden="true">{markers[label]}</span> ' if label in markers else ""
        g = replace(f, box=label)
        # Work letters by fate, plus replies: the five add up to the total, as in the sweep's table.
        counts = "".join([
            _count(g, "open", "open_work", c["open_work"] - c.get("in_flight_work", 0), "open"),
            _count(g, "in flight", IN_FLIGHT, c.get("in_flight_work", 0), "in_flight"),
            _count(g, "answered", FIRED_CLAY, c.get("answered_work", 0), "answered"),
            _count(g, "external", EXTERNAL, c.get("external_work", 0), "external"),
            _count(g, "replies", "reply", c.get("replies", 0), None),
            _count(g, "total", "total", c["total"], "all"),
        ])
        where = box.path or (WAITING if label == SPOOL_ROW else "private to this home")
        here = " here" if f.box == label else ""
        shown = WAITING_LABEL if label == SPOOL_ROW else label
        cards.append(f'<div class="card box{here}">{marker}<a class="label" href="{attr(f.query(box=label))}">{text(shown)}</a>'
                     f'<div class="meta">{text(where)}</div><div class="counts">{counts}</div></div>')
    if not cards:
        return '<p class="empty">No boxes yet: no letter has been filed.</p>'
    return '<div class="boxes">' + "".join(cards) + "</div>"


def _option(value: str, word: str, chosen: str) -> str:
    sel = " selected" if value == chosen else ""
    return f'<option value="{attr(value)}"{sel}>{text(word)}</option>'


def filter_form(data: IndexData, f: Filters) -> str:
    states = "".join(_option(k, w, f.state) for k, w in STATE_CHOICE.items())
    labels = [b.label for b in data.boxes]
    if f.box and f.box not in labels:
        labels.append(f.box)
    boxes = _option("", "every box", f.box) + "".join(_option(label, label, f.box) for label in labels)

    def field(name: str, label: str, value: str, extra: str = "") -> str:
        return f'<label>{text(label)}<input type="text" name="{name}" value="{attr(value)}"{extra}></label>'

    return (
        '<form class="filters" method="get" action="/">'
        f'<label class="wide">search in what<input type="search" name="q" value="{attr(f.q)}" placeholder="text in the letter"></label>'
        f'<label>state<select name="state">{states}</select></label>'
        f'<label>box<select name="box">{boxes}</select></label>'
        + field("agent", "agent", f.agent) + field("class", "class", f.klass) + field("tool", "tool", f.tool)
        + field("since", "since", f.since, ' placeholder="2026-05-01"')
        + field("until", "until", f.until, ' placeholder="2026-05-03T12:00:00Z"')
        + f'<label class="check"><input type="checkbox" name="replies" value="1"{" checked" if f.replies else ""}>include replies</label>'
        + '<div class="actions"><button type="submit">Filter</button><a href="/">clear</a></div></form>'
    )


def state_chips(f: Filters) -> str:
    chips = []
    for key, word in STATE_CHOICE.items():
        here = " here" if key == f.state else ""
        chips.append(f'<a class="chip{here}" href="{attr(f.query(state=key))}">{text(word)}</a>')
    return '<div class="chips">' + "".join(chips) + "</div>"



def letter_row(item, f: Filters) -> str:
    letter, state, box = item.row, item.state, item.box
    bits = [f'<span>{line(letter.ts) or "no time"}</span>',
            f'<a href="{attr(f.query(box=box))}">{text(WAITING_LABEL if box == SPOOL_ROW else box)}</a>']
    for key, word, value in (("agent", "agent", letter.agent), ("klass", "class", letter.klass),
                             ("tool", "tool", letter.tool)):
        if value:
            bits.append(f'<a href="{attr(f.query(**{key: value}))}" title="{attr(word)}">{line(value)}</a>')
    bits.append(f'<a class="id" href="{attr(letter_link(letter.id))}">{text(letter.id)}</a>')
    if item.replies:
        bits.append(f'<span>{item.replies} repl{"y" if item.replies == 1 else "ies"}</span>')
    what = line(letter.what) or '<span class="muted">(no text)</span>'
    kind = "reply" if letter.answers else state
    return (f'<li class="{kind}">{badge(letter, state)}'
            f'<a class="what" href="{attr(letter_link(letter.id))}">{what}</a><div class="meta">{"".join(bits)}</div></li>')


def index(data: IndexData, f: Filters) -> str:
    notices = "".join(f'<div class="notice">{text(p)}</div>' for p in data.problems)
    notices += "".join(f'<div class="notice">box {text(label)} is unreachable (its root is not a directory here)</div>'
                       for label in data.unreachable)
    shown = (f"{f.offset + 1}–{f.offset + len(data.letters)} of {data.total}" if data.letters
             else f"0 of {data.total}")
    rows = "".join(letter_row(item, f) for item in data.letters)
    pager = [f'<a href="{attr(f.query(offset=max(0, f.offset - f.limit)))}">← newer</a>' if f.offset > 0
             else "<span></span>"]
    if f.offset + f.limit < data.total:
        pager.append(f'<a href="{attr(f.query(offset=f.offset + f.limit))}">older →</a>')
    body = (
        f"{notices}<h1>Mailbox</h1>{boxes_section(data, f)}"
        f"{filter_form(data, f)}{state_chips(f)}"
        f'<h2>Letters: {text(STATE_CHOICE[f.state])}{", " + text(f.box) if f.box else ""} '
        f'<span class="muted">({text(shown)}, newest first)</span></h2>'
        + (f'<ul class="ledger">{rows}</ul>' if rows else '<p class="empty">No letter matches these filters.</p>')
        + f'<div class="pager">{"".join(pager)}</div>'
    )
    return layout("Mailbox", body)


def problem(status: int, message: str) -> str:
    titles = {400: "Bad request", 404: "Not found", 500: "Something went wrong"}
    title = titles.get(status, "Error")
    return layout(title, f'<h1>{text(title)}</h1><p>{text(message)}</p><p><a href="/">← mailbox</a></p>')
