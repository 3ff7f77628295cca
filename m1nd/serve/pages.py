"""The HTML pages (serve.md §3): plain documents that work without JavaScript.

Every value that comes from a letter, a path or a query passes through `text()` or
`attr()`; nothing else is ever put into a page. No script, no external resource:
the stylesheet is inline and allowed by its hash.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, replace
from urllib.parse import quote, urlencode

import orjson

from m1nd import __version__
from m1nd.errors import UsageError
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, OPEN_STATES, WET_INK
from m1nd.serve.source import Snapshot, sort_key
from m1nd.serve.style import CSS, CSS_HASH

PAGE_CSP = (f"default-src 'none'; style-src {CSS_HASH}; img-src 'self' data:; form-action 'self'; "
            "base-uri 'none'; frame-ancestors 'none'")
STATE_WORD = {WET_INK: "open", IN_FLIGHT: "in flight", FIRED_CLAY: "answered", EXTERNAL: "external"}
# the page's state filter -> the fates it keeps
STATE_FILTER = {"open": OPEN_STATES, "in_flight": (IN_FLIGHT,), "answered": (FIRED_CLAY,),
                "external": (EXTERNAL,), "all": (WET_INK, IN_FLIGHT, FIRED_CLAY, EXTERNAL)}
STATE_CHOICE = {"open": "open", "in_flight": "in flight", "answered": "answered", "external": "external", "all": "all"}
PAGE_SIZE = 50
MAX_LIMIT = 500
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ID_PREFIX = re.compile(r"^[0-9a-fA-F]{4,64}$")


def _visible(match: re.Match) -> str:
    return f"\\x{ord(match.group()):02x}"


def text(value) -> str:
    """A value as page text: control characters shown as `\\xNN`, HTML escaped."""
    return html.escape(_CONTROL.sub(_visible, str(value)), quote=True)


def line(value) -> str:
    """One-line text for list views: a newline never starts a line of its own."""
    return text(str(value).replace("\r\n", "\n").replace("\n", " ⏎ ").replace("\t", " "))


def attr(value) -> str:
    return html.escape(str(value), quote=True)


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
        for key in ("since", "until"):
            if one(key) and sort_key(one(key)) == float("-inf"):
                raise UsageError(f"{key} {one(key)!r} is not an ISO 8601 time (for example 2026-05-01 or 2026-05-01T09:00:00Z)")

        def number(key: str, default: int, low: int, high: int) -> int:
            raw = one(key)
            if not raw:
                return default
            if not raw.isdigit() or not low <= int(raw) <= high:
                raise UsageError(f"{key} must be a whole number from {low} to {high}")
            return int(raw)

        return cls(state=state, box=one("box"), agent=one("agent"), klass=one("class"), tool=one("tool"),
                   since=one("since"), until=one("until"), q=one("q"), replies=one("replies") in ("1", "on", "yes"),
                   offset=number("offset", 0, 0, 10**9), limit=number("limit", PAGE_SIZE, 1, MAX_LIMIT))

    def query(self, **change) -> str:
        """This filter set (with `change` applied, offset reset unless given) as a link."""
        f = replace(self, **({"offset": 0} | change))
        pairs = [("state", f.state if f.state != "open" else ""), ("box", f.box), ("agent", f.agent),
                 ("class", f.klass), ("tool", f.tool), ("since", f.since), ("until", f.until), ("q", f.q),
                 ("replies", "1" if f.replies else ""), ("offset", str(f.offset) if f.offset else ""),
                 ("limit", str(f.limit) if f.limit != PAGE_SIZE else "")]
        qs = urlencode([(k, v) for k, v in pairs if v])
        return "/" + (f"?{qs}" if qs else "")

    def select(self, snap: Snapshot) -> list[str]:
        keep = STATE_FILTER[self.state]
        since = sort_key(self.since) if self.since else None
        until = sort_key(self.until) if self.until else None
        needle = self.q.casefold()
        agent, klass, tool = self.agent.casefold(), self.klass.casefold(), self.tool.casefold()
        out = []
        for i in snap.newest_first:
            letter = snap.letters[i]
            if snap.state[i] not in keep or (letter.answers and not self.replies):
                continue
            if self.box and snap.where[i] != self.box:
                continue
            if agent and letter.agent.casefold() != agent:
                continue
            if klass and letter.klass.casefold() != klass:
                continue
            if tool and letter.tool.casefold() != tool:
                continue
            if since is not None and snap.when[i] < since:
                continue
            if until is not None and snap.when[i] > until:
                continue
            if needle and needle not in letter.what.casefold():
                continue
            out.append(i)
        return out


NAV = (("letters", "/", "Letters"),)


def layout(title: str, body: str, here: str = "letters", nav=NAV) -> str:
    here_attr = ' class="here"'
    links = "".join(f'<a href="{attr(href)}"{here_attr if key == here else ""}>{text(word)}</a>'
                    for key, href, word in nav)
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta name=\"color-scheme\" content=\"light dark\"><title>{text(title)} · m1nd</title>"
        f"<style>{CSS}</style></head><body>"
        f"<header class=\"top\"><div class=\"bar\"><a class=\"brand\" href=\"/\">m1nd</a><nav>{links}</nav></div></header>"
        f"<main>{body}</main><footer>m1nd {text(__version__)} · read-only</footer></body></html>\n"
    )


def _count(f: Filters, label: str, key: str, number: int, state: str | None) -> str:
    inner = f'<span class="mark s-{key}"></span>{text(label)} <b>{number}</b>'
    if state is None:
        return f"<span>{inner}</span>"
    return f'<a href="{attr(f.query(state=state))}">{inner}</a>'


def boxes_section(snap: Snapshot, f: Filters) -> str:
    cards = []
    for row in snap.boxes:
        c, label = row["counts"], row["label"]
        g = replace(f, box=label)
        counts = "".join([
            _count(g, "open work", "open_work", c["open_work"], "open"),
            _count(g, "in flight", IN_FLIGHT, c[IN_FLIGHT], "in_flight"),
            _count(g, "answered", FIRED_CLAY, c[FIRED_CLAY], "answered"),
            _count(g, "external", EXTERNAL, c[EXTERNAL], "external"),
            _count(g, "total", "total", c["total"], "all"),
        ])
        where = row["path"] or ("letters that wait in the spool: not filed into any box yet"
                                if label == "spool" else "private to this home")
        here = " here" if f.box == label else ""
        cards.append(f'<div class="box{here}"><a class="label" href="{attr(f.query(box=label))}">{text(label)}</a>'
                     f'<div class="path">{text(where)}</div><div class="counts">{counts}</div></div>')
    if not cards:
        return '<p class="muted">No boxes yet: no letter has been filed.</p>'
    return '<div class="boxes">' + "".join(cards) + "</div>"


def _option(value: str, word: str, chosen: str) -> str:
    sel = " selected" if value == chosen else ""
    return f'<option value="{attr(value)}"{sel}>{text(word)}</option>'


def filter_form(snap: Snapshot, f: Filters) -> str:
    states = "".join(_option(k, w, f.state) for k, w in STATE_CHOICE.items())
    boxes = _option("", "every box", f.box) + "".join(_option(r["label"], r["label"], f.box) for r in snap.boxes)

    def field(name: str, label: str, value: str, kind: str = "text", extra: str = "") -> str:
        return (f'<label>{text(label)}<input type="{kind}" name="{name}" value="{attr(value)}"{extra}></label>')

    return (
        '<form class="filters" method="get" action="/">'
        f'<label class="wide">search in what<input type="search" name="q" value="{attr(f.q)}" placeholder="text in the letter"></label>'
        f'<label>state<select name="state">{states}</select></label>'
        f'<label>box<select name="box">{boxes}</select></label>'
        + field("agent", "agent", f.agent) + field("class", "class", f.klass) + field("tool", "tool", f.tool)
        + field("since", "since", f.since, extra=' placeholder="2026-05-01"')
        + field("until", "until", f.until, extra=' placeholder="2026-05-03T12:00Z"')
        + f'<label class="check"><input type="checkbox" name="replies" value="1"{" checked" if f.replies else ""}>include replies</label>'
        + '<div class="actions"><button type="submit">Filter</button><a href="/">clear</a></div></form>'
    )


def state_chips(f: Filters) -> str:
    chips = []
    for key, word in STATE_CHOICE.items():
        here = " here" if key == f.state else ""
        chips.append(f'<a class="chip{here}" href="{attr(f.query(state=key))}">{text(word)}</a>')
    return '<div class="chips">' + "".join(chips) + "</div>"


def letter_row(snap: Snapshot, f: Filters, i: str) -> str:
    letter, state = snap.letters[i], snap.state[i]
    box = snap.where[i]
    replies = snap.graph.answers_to(i)
    bits = [f'<span>{text(letter.ts) or "no time"}</span>',
            f'<a href="{attr(f.query(box=box))}">{text(box)}</a>']
    for key, word, value in (("agent", "agent", letter.agent), ("klass", "class", letter.klass),
                             ("tool", "tool", letter.tool)):
        if value:
            bits.append(f'<a href="{attr(f.query(**{key: value}))}" title="{attr(word)}">{line(value)}</a>')
    bits.append(f'<a class="id" href="/letters/{attr(quote(i))}">{text(i)}</a>')
    if replies:
        bits.append(f'<span>{len(replies)} repl{"y" if len(replies) == 1 else "ies"}</span>')
    what = line(letter.what) or '<span class="muted">(no text)</span>'
    return (f'<li class="st-{state}"><span class="badge s-{state}">{text(STATE_WORD[state])}</span>'
            f'<a class="what" href="/letters/{attr(quote(i))}">{what}</a><div class="meta">{"".join(bits)}</div></li>')


def index(snap: Snapshot, f: Filters) -> str:
    chosen = f.select(snap)
    page = chosen[f.offset:f.offset + f.limit]
    notices = "".join(f'<div class="notice">{text(p)}</div>' for p in snap.problems)
    notices += "".join(f'<div class="notice">box {text(label)} is unreachable (its root is not a directory here)</div>'
                       for label in snap.unreachable)
    what = STATE_CHOICE[f.state]
    if page:
        shown = f"{f.offset + 1}–{f.offset + len(page)} of {len(chosen)}"
    else:
        shown = f"0 of {len(chosen)}"
    rows = "".join(letter_row(snap, f, i) for i in page)
    pager = []
    if f.offset > 0:
        pager.append(f'<a href="{attr(f.query(offset=max(0, f.offset - f.limit)))}">← newer</a>')
    else:
        pager.append("<span></span>")
    if f.offset + f.limit < len(chosen):
        pager.append(f'<a href="{attr(f.query(offset=f.offset + f.limit))}">older →</a>')
    body = (
        f"{notices}<h1>Mailbox</h1>{boxes_section(snap, f)}"
        f"{filter_form(snap, f)}{state_chips(f)}"
        f'<h2>Letters: {text(what)}{", " + text(f.box) if f.box else ""} '
        f'<span class="muted">({text(shown)}, newest first)</span></h2>'
        + (f'<ol class="letters">{rows}</ol>' if rows else '<p class="muted">No letter matches these filters.</p>')
        + f'<div class="pager">{"".join(pager)}</div>'
    )
    return layout("Mailbox", body)


# the thread of one letter ------------------------------------------------------

def _fields(snap: Snapshot, i: str) -> str:
    letter = snap.letters[i]
    try:
        raw = orjson.loads(letter.raw)
    except orjson.JSONDecodeError:
        raw = {}
    state = snap.state[i]
    rows = [("id", f'<span class="id">{text(i)}</span>'),
            ("state", f'<span class="badge s-{state}">{text(STATE_WORD[state])}</span>'),
            ("box", text(snap.where[i]))]
    known = ("ts", "agent", "class", "kind", "repo", "brain", "tool")
    for key in known:
        if key in raw and raw[key] not in ("", None):
            rows.append((key, text(raw[key])))
    for key in ("what", "expected", "snippet"):
        if raw.get(key):
            rows.append((key, f"<pre>{text(raw[key])}</pre>"))
    if letter.answers:
        rows.append(("answers", " ".join(f'<a class="id" href="/letters/{attr(quote(a))}">{text(a)}</a>'
                                         for a in letter.answers)))
    replies = snap.graph.answers_to(i)
    if replies:
        rows.append(("answered by", " ".join(f'<a class="id" href="/letters/{attr(quote(a))}">{text(a)}</a>'
                                             for a in replies)))
    for key in sorted(k for k in raw if k not in known + ("what", "expected", "snippet", "answers")):
        value = raw[key]
        shown = value if isinstance(value, str) else orjson.dumps(value).decode()
        rows.append((key, f"<pre>{text(shown)}</pre>"))
    return '<dl class="fields">' + "".join(f"<dt>{text(k)}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _card(snap: Snapshot, i: str, focus: str) -> str:
    letter, state = snap.letters[i], snap.state[i]
    cls = " focus" if i == focus else ""
    head = f'<a class="what" href="/letters/{attr(quote(i))}">{line(letter.what) or "(no text)"}</a>'
    return f'<div class="letter st-{state}{cls}" id="l-{attr(i)}">{head}{_fields(snap, i)}</div>'


def thread_ids(snap: Snapshot, i: str) -> tuple[list[str], dict[str, list[str]]]:
    """The roots of the letter's thread (what it answers, up to letters that answer
    nothing known) and, for each letter shown, its replies oldest first."""
    roots, seen, todo = [], {i}, [i]
    while todo:
        cur = todo.pop()
        parents = [a for a in snap.letters[cur].answers if a in snap.letters]
        if not parents:
            roots.append(cur)
        for p in parents:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    roots = sorted(set(roots), key=lambda x: (snap.when[x], x))
    children: dict[str, list[str]] = {}
    placed = set(roots)
    queue = list(roots)
    while queue:
        cur = queue.pop(0)
        kids = [k for k in snap.graph.answers_to(cur) if k in snap.letters and k not in placed]
        kids = sorted(dict.fromkeys(kids), key=lambda x: (snap.when[x], x))
        placed.update(kids)
        children[cur] = kids
        queue.extend(kids)
    return roots, children


def thread(snap: Snapshot, i: str) -> str:
    roots, children = thread_ids(snap, i)

    def tree(ids: list[str]) -> str:
        return '<ul class="thread">' + "".join(
            f"<li>{_card(snap, k, i)}{tree(children[k]) if children.get(k) else ''}</li>" for k in ids) + "</ul>"

    count = 1 + sum(len(v) for v in children.values()) + len(roots) - 1
    body = (f'<p><a href="/">← mailbox</a></p><h1>Letter <span class="id">{text(i)}</span></h1>'
            f'<p class="muted">Its thread: {count} letter{"s" if count != 1 else ""}, oldest first; '
            f'this letter is outlined.</p>{tree(roots)}')
    return layout(f"Letter {i}", body)


def candidates(ident: str, ids: list[str]) -> str:
    links = "".join(f'<li><a class="id" href="/letters/{attr(quote(i))}">{text(i)}</a></li>' for i in ids)
    body = (f'<h1>Which letter?</h1><p>The prefix <span class="id">{text(ident)}</span> names '
            f"{len(ids)} letters:</p><ul>{links}</ul>")
    return layout("Ambiguous id", body)


def problem(status: int, message: str) -> str:
    titles = {400: "Bad request", 404: "Not found", 500: "Something went wrong"}
    title = titles.get(status, "Error")
    return layout(title, f'<h1>{text(title)}</h1><p>{text(message)}</p><p><a href="/">← mailbox</a></p>')
