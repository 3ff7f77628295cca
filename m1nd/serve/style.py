"""The look of every page, in one place so that one design can serve both the pages
and the HTML report. Pages inline it and allow exactly it by its CSP hash."""

from __future__ import annotations

import base64
import hashlib

CSS = """
:root{--bg:#f6f7f9;--card:#fff;--ink:#1c2430;--muted:#5b6675;--line:#dde2e8;--accent:#2f5bd3;
--open:#c26a00;--flight:#2f5bd3;--answered:#1f8a4c;--external:#7a8594;--warn:#b42318;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
font-size:15px;line-height:1.45;color:var(--ink);background:var(--bg)}
@media (prefers-color-scheme:dark){:root{--bg:#12161c;--card:#1a2029;--ink:#e6e9ee;--muted:#9aa5b4;
--line:#2c3440;--accent:#7fa2ff;--open:#f0a545;--flight:#7fa2ff;--answered:#4cc38a;--external:#98a3b3;--warn:#ff8b7b}}
*{box-sizing:border-box}
body{margin:0}
a{color:var(--accent);text-decoration:none}
a:hover,a:focus{text-decoration:underline}
header.top{background:var(--card);border-bottom:1px solid var(--line)}
header.top .bar{max-width:1100px;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;align-items:baseline}
.brand{font-weight:700;font-size:1.1rem;color:var(--ink)}
nav a{margin-right:1rem;color:var(--muted)}
nav a.here{color:var(--ink);font-weight:600}
main{max-width:1100px;margin:0 auto;padding:1rem}
h1{font-size:1.3rem;margin:.2rem 0 1rem}
h2{font-size:1.05rem;margin:1.4rem 0 .6rem}
.muted{color:var(--muted)}
.boxes{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:.6rem}
.box{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .75rem}
.box.here{border-color:var(--accent);box-shadow:0 0 0 1px var(--accent)}
.box .label{font-weight:600;overflow-wrap:anywhere}
.box .path{font-size:.8rem;color:var(--muted);overflow-wrap:anywhere}
.counts{display:flex;flex-wrap:wrap;gap:.25rem .8rem;margin-top:.35rem;font-size:.88rem}
.counts a,.counts span{color:var(--ink);white-space:nowrap}
.counts b{font-variant-numeric:tabular-nums}
.mark{display:inline-block;width:.65rem;height:.65rem;border-radius:50%;margin-right:.3rem;vertical-align:baseline;background:var(--muted)}
.s-wet_ink .mark,.mark.s-wet_ink,.mark.s-open_work{background:var(--open)}
.mark.s-in_flight{background:var(--flight)}
.mark.s-fired_clay{background:var(--answered)}
.mark.s-external{background:var(--external)}
.mark.s-total{background:transparent;border:1px solid var(--muted)}
form.filters{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.7rem .75rem;margin:1rem 0;
display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:.5rem .75rem;align-items:end}
form.filters label{display:flex;flex-direction:column;font-size:.8rem;color:var(--muted);gap:.15rem;min-width:0}
form.filters input,form.filters select{font:inherit;font-size:.92rem;padding:.3rem .4rem;border:1px solid var(--line);
border-radius:5px;background:var(--bg);color:var(--ink);width:100%;min-width:0}
form.filters label.wide{grid-column:1/-1}
form.filters label.check{flex-direction:row;align-items:center;gap:.4rem}
form.filters label.check input{width:auto}
.actions{display:flex;gap:.8rem;align-items:center}
button{font:inherit;padding:.35rem .9rem;border-radius:5px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
.chips{display:flex;flex-wrap:wrap;gap:.35rem;margin:.2rem 0 .8rem}
.chip{font-size:.82rem;border:1px solid var(--line);border-radius:999px;padding:.05rem .6rem;background:var(--card);color:var(--ink)}
.chip.here{border-color:var(--accent);color:var(--accent)}
ol.letters{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:.45rem}
ol.letters li,.letter{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--muted);border-radius:6px;padding:.5rem .7rem;min-width:0}
.st-wet_ink{border-left-color:var(--open)!important}.st-in_flight{border-left-color:var(--flight)!important}
.st-fired_clay{border-left-color:var(--answered)!important}.st-external{border-left-color:var(--external)!important}
.what{overflow-wrap:anywhere;font-weight:500}
.meta{font-size:.82rem;color:var(--muted);display:flex;flex-wrap:wrap;gap:.1rem .8rem;margin-top:.15rem}
.meta a{color:var(--muted);text-decoration:underline dotted}
.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
.badge{display:inline-block;font-size:.75rem;font-weight:600;border-radius:4px;padding:0 .4rem;margin-right:.4rem;color:#fff;background:var(--muted);white-space:nowrap}
.badge.s-wet_ink{background:var(--open)}.badge.s-in_flight{background:var(--flight)}
.badge.s-fired_clay{background:var(--answered)}.badge.s-external{background:var(--external)}
.badge.s-reply{background:transparent;color:var(--muted);border:1px solid var(--line)}
.st-reply{border-left-color:var(--line)!important}
.pager{display:flex;justify-content:space-between;gap:1rem;margin:1rem 0}
.thread{list-style:none;padding-left:0;margin:0}
.thread .thread{padding-left:1rem;border-left:2px solid var(--line);margin-left:.4rem;margin-top:.45rem}
.thread li{margin-bottom:.45rem}
.letter.focus{box-shadow:0 0 0 2px var(--accent)}
dl.fields{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem .9rem;margin:.5rem 0 0;font-size:.88rem}
dl.fields dt{color:var(--muted)}
dl.fields dd{margin:0;overflow-wrap:anywhere;min-width:0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
.notice{border:1px solid var(--warn);color:var(--warn);border-radius:6px;padding:.4rem .7rem;margin:.6rem 0;background:var(--card)}
table.plain{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);border-radius:6px;font-size:.9rem}
table.plain th,table.plain td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
footer{max-width:1100px;margin:2rem auto 1rem;padding:0 1rem;font-size:.8rem;color:var(--muted)}
@media (max-width:520px){main{padding:.6rem}dl.fields{grid-template-columns:minmax(0,1fr)}dl.fields dt{margin-top:.3rem}}
"""


# the page's icon: four dots in the colours of the four fates
ICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
        b'<rect width="32" height="32" rx="7" fill="#1c2430"/>'
        b'<circle cx="11" cy="11" r="5" fill="#c26a00"/><circle cx="21" cy="11" r="5" fill="#2f5bd3"/>'
        b'<circle cx="11" cy="21" r="5" fill="#1f8a4c"/><circle cx="21" cy="21" r="5" fill="#7a8594"/></svg>')


def csp_hash(css: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(css.encode()).digest()).decode() + "'"


CSS_HASH = csp_hash(CSS)
