"""The look of every page, in one place. One design serves the pages and the HTML
report: the report's stylesheet (m1nd/reports/style.css) first, then the few rules
only the pages need (the site bar, box cards, the filter form, threads), written
with the same colours. Pages inline it and allow exactly it by its CSP hash."""

from __future__ import annotations

import base64
import hashlib

from m1nd.reports.html import stylesheet

PAGE_RULES = """
/* the served pages: what a report does not have */
:root { --link: #1d4ed8; }
@media (prefers-color-scheme: dark) { :root { --link: #93b4ff; } }
a { color: var(--link); text-decoration: none; }
a:hover, a:focus-visible { text-decoration: underline; }
.site { background: var(--card); border-bottom: 1px solid var(--line); }
.site .bar { max-width: 960px; margin: 0 auto; padding: 10px 16px; display: flex; flex-wrap: wrap;
             gap: 4px 18px; align-items: baseline; }
.brand { font-weight: 700; font-size: 17px; color: var(--ink); }
.site nav a { margin-right: 14px; color: var(--muted); }
.site nav a.here { color: var(--ink); font-weight: 600; }
.boxes { display: grid; gap: 10px; grid-template-columns: repeat(auto-fill, minmax(240px, 1fr)); }
.boxes .card { min-width: 0; }
.boxes .card.here { border-color: var(--link); box-shadow: 0 0 0 1px var(--link); }
.boxes .label { font-weight: 700; overflow-wrap: anywhere; }
.counts { display: flex; flex-wrap: wrap; gap: 2px 14px; margin-top: 6px; font-size: 14px; }
.counts a, .counts span { color: var(--ink); white-space: nowrap; }
.counts b { font-variant-numeric: tabular-nums; }
.dot.open_work { background: var(--wet); }
.dot.total { background: transparent; border: 1px solid var(--muted); }
form.filters { display: grid; gap: 8px 12px; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
               align-items: end; margin: 16px 0 10px; }
form.filters label { display: flex; flex-direction: column; gap: 2px; font-size: 13px; color: var(--muted); min-width: 0; }
form.filters label.wide { grid-column: 1 / -1; }
form.filters label.check { flex-direction: row; align-items: center; gap: 6px; }
form.filters input, form.filters select { font: inherit; font-size: 14px; padding: 5px 7px; width: 100%; min-width: 0;
  color: var(--ink); background: var(--bg); border: 1px solid var(--line); border-radius: 6px; }
form.filters label.check input { width: auto; }
.actions { display: flex; gap: 14px; align-items: center; }
button { font: inherit; padding: 5px 16px; border-radius: 6px; border: 1px solid var(--link);
         background: var(--link); color: var(--card); cursor: pointer; font-weight: 600; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin: 4px 0 12px; }
.chip { font-size: 13px; border: 1px solid var(--line); border-radius: 999px; padding: 1px 10px;
        background: var(--card); color: var(--ink); }
.chip.here { border-color: var(--link); color: var(--link); font-weight: 600; }
ul.ledger li.reply, .card.reply { border-left-color: var(--line); }
.state.reply { color: var(--muted); }
ul.ledger .state, .card.letter > .state { margin-right: 8px; }
.muted { color: var(--muted); }
.standing { margin: 2px 0; }
.id { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.meta a { color: var(--muted); text-decoration: underline dotted; }
.meta > * { margin-right: 12px; }
.pager { display: flex; justify-content: space-between; gap: 16px; margin: 14px 0; }
.thread { list-style: none; margin: 0; padding: 0; }
.thread .thread { padding-left: 12px; margin: 8px 0 0 6px; border-left: 2px solid var(--line); }
.thread li { margin-bottom: 8px; }
.card.letter { border-left-width: 4px; }
.card.letter.wet_ink { border-left-color: var(--wet); } .card.letter.in_flight { border-left-color: var(--flight); }
.card.letter.fired_clay { border-left-color: var(--clay); } .card.letter.external { border-left-color: var(--ext); }
.card.letter.focus { box-shadow: 0 0 0 2px var(--link); }
.card .facts { margin-top: 8px; font-size: 14px; }
.facts dd { min-width: 0; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere;
      font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.notice { border: 1px solid var(--warn); color: var(--warn); border-radius: 8px; padding: 6px 12px; margin: 8px 0;
          background: var(--card); }
footer { max-width: 960px; margin: 0 auto; padding: 0 16px 24px; font-size: 13px; color: var(--muted); }
"""

CSS = stylesheet() + PAGE_RULES

# the page's icon: four dots in the colours of the four fates
ICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
        b'<rect width="32" height="32" rx="7" fill="#1d2330"/>'
        b'<circle cx="11" cy="11" r="5" fill="#c2410c"/><circle cx="21" cy="11" r="5" fill="#6d28d9"/>'
        b'<circle cx="11" cy="21" r="5" fill="#15803d"/><circle cx="21" cy="21" r="5" fill="#64748b"/></svg>')


def csp_hash(css: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(css.encode()).digest()).decode() + "'"


CSS_HASH = csp_hash(CSS)
