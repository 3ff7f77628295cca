"""The HTML page of a frozen report: one self-contained file.

No external resources and no script; a Content-Security-Policy that allows only the
page's own stylesheet (by its hash); every value escaped; the summary and the chart
on the first screen; the supporting detail in a collapsed appendix.  The stylesheet
lives in `style.css` beside this module (package data), shared with `m1nd serve`.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from html import escape
from importlib import resources
from typing import Iterator

from m1nd.reports import render, store

STATES = render.STATE_ORDER


@lru_cache(maxsize=1)
def stylesheet() -> str:
    """The shared stylesheet (m1nd/reports/style.css)."""
    return resources.files("m1nd.reports").joinpath("style.css").read_text(encoding="utf-8")


def csp(style: str) -> str:
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    return (f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; "
            "base-uri 'none'; form-action 'none'")


def e(value) -> str:
    return _e(str(value))


@lru_cache(maxsize=8192)  # a report repeats its states, classes, tools and agents on every line
def _e(text: str) -> str:
    return escape(render.plain(text), quote=True)


def chart(head: dict, tally: render.Tally) -> str:
    """Stacked bars: the period's new letters per box, split by state."""
    rows = head["summary"]
    counts = {r["box"]: tally.new_split(r) for r in rows}
    width, label_w, bar_w, row_h = 400, 0, 340, 46
    biggest = max([sum(counts.get(r["box"], {}).values()) for r in rows] + [1])
    height = 16 + row_h * max(len(rows), 1)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
             f'aria-labelledby="chart-title" xmlns="http://www.w3.org/2000/svg">',
             '<title id="chart-title">New letters this period, per box and state</title>']
    for i, row in enumerate(rows):
        y = 8 + i * row_h
        by_state = counts[row["box"]]
        total = sum(by_state.values())  # = the row's New
        parts.append(f'<text x="{label_w}" y="{y + 15}">{e(render.label_of(row))}</text>')
        x = float(label_w)
        if total == 0:
            parts.append(f'<rect x="{label_w}" y="{y + 22}" width="2" height="16" class="s-external"/>')
        for state in (*STATES, "reply"):
            n = by_state.get(state, 0)
            if not n:
                continue
            w = bar_w * n / biggest
            word = ("reply" if n == 1 else "replies") if state == "reply" else render.STATE_WORD[state]
            css = f"s-{state}"
            parts.append(f'<rect x="{x:.1f}" y="{y + 22}" width="{w:.1f}" height="16" rx="2" class="{css}">'
                         f'<title>{e(row["box"])}: {n} new {word}</title></rect>')
            x += w
        parts.append(f'<text class="muted" x="{x + 6:.1f}" y="{y + 35}">{total}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _summary_table(head: dict) -> str:
    rows = []
    for row in head["summary"]:
        rows.append(f"<tr><td>{e(render.label_of(row))}</td><td>{row['new']}</td><td>{row['open']}</td>"
                    f"<td>{row['in_flight']}</td><td>{row['answered']}</td><td>{row['external']}</td></tr>")
    t = render.totals(head["summary"])
    return ('<div class="scroll"><table><thead><tr><th scope="col">Box</th><th scope="col">New</th>'
            '<th scope="col">Open</th><th scope="col">In flight</th><th scope="col">Answered</th>'
            '<th scope="col">External</th></tr></thead><tbody>' + "".join(rows) + "</tbody>"
            f"<tfoot><tr><td>Total</td><td>{t['new']}</td><td>{t['open']}</td><td>{t['in_flight']}</td>"
            f"<td>{t['answered']}</td><td>{t['external']}</td></tr></tfoot></table></div>")


def _ledger(head: dict, tally: render.Tally) -> Iterator[str]:
    out = ['<section class="ledger-section"><h2>Ledger</h2>']
    if not head["entries"]:
        out.append('<p class="empty">No new letters in this period.</p>')
    for row, count, items in tally.boxes():
        out.append(f"<h3>{e(render.label_of(row))} · {e(render.plural(count, 'letter'))}</h3><ul class=\"ledger\">")
        for item in items:
            out.append(_item(item))
            if len(out) >= 1000:
                yield "".join(out)
                out = []
        out.append("</ul>")
    out.append("</section>")
    yield "".join(out)


def _item(item: dict) -> str:
    f = dict(render.entry_fields(item))
    if item.get("held"):  # itemized as held: never its text
        return (f'<li class="{e(item["state"])} held"><span class="state {e(item["state"])}">'
                f'{e(item["state"])}</span> <span class="what">{e(f["outcome"])}</span>'
                f'<div class="meta">{e(f["ts"])} · <code>{e(item["id"])}</code></div></li>')
    meta = " · ".join(e(x) for x in (f["class"], f["tool"], f["agent"], f["ts"]))
    extra = f" · waits for {e(f['waits for'])}" if "waits for" in f else ""
    extra += f" · case {e(f['case'])}" if "case" in f else ""
    reply = item["reply"]
    tag = '<span class="tag">reply</span>' if reply else ""
    tag += f'<span class="tag">{e(f["trigger"])}</span>' if "trigger" in f else ""
    return (f'<li class="{e(item["state"])}{" reply" if reply else ""}"><span class="state {e(item["state"])}">'
            f'{e(item["state"])}</span>{tag} '
            f'<span class="what">{e(f["what"])}</span><div class="meta">{meta} · <code>{e(item["id"])}</code>'
            f' · {e(f["outcome"])}{extra}</div></li>')


_LEDGER = "\x00ledger\x00"  # where the ledger goes in the page (a NUL is never in a page: e() escapes it)
_UPDATE = "\x00update\x00"  # and the update's section


def page(frozen: store.Frozen, markdown_digest: str, tally: render.Tally | None = None) -> bytes:
    return b"".join(page_chunks(frozen, markdown_digest, tally))


def page_chunks(frozen: store.Frozen, markdown_digest: str, tally: render.Tally | None = None) -> Iterator[bytes]:
    """The page, its ledger written a batch of entries at a time."""
    tally = tally or render.Tally(frozen)
    head = frozen.head
    body = (_document_head(frozen, markdown_digest) + "<main>\n" + _header(head) + _top(head, tally)
            + f"{_UPDATE}\n{_LEDGER}\n" + _status(head, tally) + _appendix(frozen, markdown_digest)
            + "</main>\n</body>\n</html>\n")
    before, _, after = body.partition(_UPDATE)
    between, _, after = after.partition(_LEDGER)
    yield before.encode("utf-8")
    for chunk in _update(frozen):
        yield chunk.encode("utf-8")
    yield between.encode("utf-8")
    for chunk in _ledger(head, tally):
        yield chunk.encode("utf-8")
    yield after.encode("utf-8")


def _document_head(frozen: store.Frozen, markdown_digest: str) -> str:
    """From the doctype to `<body>`: the policy, the run's digests, the title, the style."""
    head = frozen.head
    style = stylesheet()
    local = head["local"]
    title = f"m1nd report: {head['profile']}, {local['end']}"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{escape(csp(style), quote=False)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="m1nd-run-id" content="{e(frozen.run_id)}">
<meta name="m1nd-report-digest" content="{e(frozen.digest)}">
<meta name="m1nd-markdown-sha256" content="{e(markdown_digest)}">
<title>{e(title)}</title>
<style>{style}</style>
</head>
<body>
"""


def _header(head: dict) -> str:
    """The period, its coverage and what was not itemized."""
    cov = head["coverage"]
    complete = cov["status"] == "complete"
    reasons = "".join(f"<li>{e(r)}</li>" for r in cov["reasons"])
    p, local = head["period"], head["local"]
    not_itemized = ""
    if head["not_itemized"]:
        not_itemized = (f"<dt>Not itemized</dt><dd>{e(render.plural(head['not_itemized'], 'letter'))} observed "
                        f"before {e(p['start'])} (a first report covers at most 7 days)</dd>")
    return f"""<header>
<p class="eyebrow">m1nd report · {e(head['profile'])}</p>
<h1><span class="nw">{e(local['start'])}</span> → <span class="nw">{e(local['end'])}</span></h1>
<div class="card">
<dl class="facts">
<dt>Period</dt><dd>{e(p['start'])} → {e(p['end'])} ({e(p['timezone'])}) · <strong>{e(render.CLASSIFICATION_WORD[head['classification']])}</strong></dd>
<dt>Coverage</dt><dd><span class="badge {'ok' if complete else 'warn'}">{e(cov['status'])}</span>{'<ul class="reasons">' + reasons + '</ul>' if reasons else ''}</dd>
<dt>Changes</dt><dd>{e(render.CHANGES.removeprefix('Changes made: '))}</dd>
{not_itemized}</dl>
</div>
</header>
"""


def _top(head: dict, tally: render.Tally) -> str:
    """The summary table and the chart of New by state."""
    return f"""<div class="top">
<section class="card" aria-label="Summary">{_summary_table(head)}</section>
<section class="card" aria-label="Chart"><h2>New this period, by state</h2>{chart(head, tally)}
<ul class="legend">{''.join(f'<li><span class="dot {s}"></span>{e(render.STATE_WORD[s])}</li>' for s in STATES)}<li><span class="dot reply"></span>reply</li></ul></section>
</div>
<p class="meta">Open counts open work: replies (pickups and receipts) are listed as replies to their letters and never counted open.</p>
"""


def _update(frozen: store.Frozen) -> Iterator[str]:
    """The Update section: the same words and lines as the Markdown's (nothing without
    triggers), a batch of triggers at a time."""
    if not frozen.trigger_count:
        return
    yield (f'<section class="card" aria-label="Update"><h2>Update</h2>'
           f"<p>Triggered by: {e(render.trigger_counts(frozen))} since the last report or update.</p>")
    if frozen.head["kind"] != "update":  # an update's ledger is its triggers
        out = ["<ul>"]
        for t in frozen.iter_triggers():
            out.append("<li>" + " · ".join(f"<code>{e(v)}</code>" if k in ("state", "id") else e(v)
                                           for k, v in render.trigger_line(t)) + "</li>")
            if len(out) >= 500:
                yield "".join(out)
                out = []
        out.append("</ul>")
        yield "".join(out)
    yield "</section>"


def _status(head: dict, tally: render.Tally) -> str:
    failed = f"<p>{e(render.failed_line(head).replace('`', ''))}</p>" if render.failed_line(head) else ""
    return f"""<section class="status"><h2>Status</h2>
<p>{e(render.coverage_line(head))}. Entries: {head['entries']} on {e(render.plural(head['pages'], 'page'))} of at most 100.</p>
<p>{e(render.outcomes_sentence(tally.outcomes))}</p>
{failed}
<p>{e(render.next_action(head).replace('`', ''))}</p>
</section>
"""


def _appendix(frozen: store.Frozen, markdown_digest: str) -> str:
    """Digests, pages and policy, folded away."""
    head = frozen.head
    pages = "".join(f"<li>page {i}: <code>{e(d)}</code></li>" for i, d in enumerate(frozen.manifest["pages"], 1))
    return f"""<details>
<summary>Appendix: digests, pages and policy</summary>
<dl>
<dt>Run</dt><dd><code>{e(frozen.run_id)}</code></dd>
<dt>Report digest</dt><dd><code>{e(frozen.digest)}</code></dd>
<dt>Markdown twin</dt><dd>sha256 <code>{e(markdown_digest)}</code></dd>
<dt>Pages</dt><dd><ul>{pages or '<li>none</li>'}</ul></dd>
<dt>Policy digest</dt><dd><code>{e(head['policy_digest'])}</code></dd>
<dt>Rules</dt><dd>{e('; '.join(head['policy']['rrules']))} in {e(head['policy']['timezone'])}</dd>
<dt>Boxes</dt><dd>{e(', '.join(head['policy']['boxes']))}</dd>
<dt>Cursor before</dt><dd>{e(head['cursor_before'] or 'none')}</dd>
<dt>Frozen at</dt><dd>{e(head['frozen_at'])}</dd>
<dt>Receipts</dt><dd>recorded in the home at delivery: <code>m1nd report status</code></dd>
</dl>
</details>
"""
