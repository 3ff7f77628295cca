"""The cases page and the delivered reports' page (serve.md §3)."""

from __future__ import annotations

from urllib.parse import quote

from m1nd.serve.markup import attr, ids_links, layout, text

CASE_STATE = {"open": "wet_ink", "answered": "in_flight", "closed·guarded": "fired_clay"}


def cases(doc: dict) -> str:
    """Every fingerprint (a tool family and a symptom kind) with its witnesses, its
    escalation letter and its case, in the order and words of `m1nd cases`
    (m1nd/cases/display.py: most recent recurrence first, where each stands)."""
    items = []
    for entry in doc.get("fingerprints", []):
        case = entry.get("case")
        witnesses = entry.get("witnesses", [])
        if case:
            tone = CASE_STATE.get(case.get("state"), "external")
            head = f'<span class="state {tone}">case {text(case.get("state", ""))}</span>'
            extra = (f'<span>receipt {ids_links([case["receipt"]]) if case.get("receipt") else ""}</span>'
                     + (f'<span>disposition {text(case["disposition"])}</span>' if case.get("disposition") else ""))
        else:
            tone, head, extra = "reply", "", ""
        escalation = entry.get("escalation")
        esc = f"<span>escalation {ids_links([escalation])}</span>" if escalation else ""
        shown = ids_links(witnesses[:8]) + (f" and {len(witnesses) - 8} more" if len(witnesses) > 8 else "")
        n = len(witnesses)
        recent = f", {entry['recent']} in the last 7 days" if entry.get("recent") else ""
        items.append(
            f'<li class="{tone}">{head}<span class="what">{text(entry.get("name") or entry.get("fingerprint", ""))}</span>'
            f'<div class="standing">{n} witness{"es" if n != 1 else ""}{text(recent)}: {text(entry.get("standing", ""))}</div>'
            f'<div class="meta"><span>witnesses: {shown}</span>{esc}{extra}</div></li>')
    listing = (f'<ul class="ledger">{"".join(items)}</ul>' if items
               else '<p class="empty">No fingerprint yet: letters carry a <code>kind</code> to be grouped.</p>')
    kindless = doc.get("kindless", 0)
    body = (f"<h1>Cases</h1><p class=\"muted\">{len(items)} fingerprint{'s' if len(items) != 1 else ''}: what "
            f"recurs most in the last 7 days first, then most witnesses, then by name; {text(kindless)} kindless "
            f"letter{'s' if kindless != 1 else ''} (letters with no kind: m1nd never guesses one).</p>"
            f"{listing}")
    return layout("Cases", body, here="cases")


def reports(rows: list[dict]) -> str:
    """Delivered reports, newest first, each opening its stored HTML."""
    if not rows:
        listing = ('<p class="empty">No report delivered yet: <code>m1nd report</code> makes one '
                   "(see the README's Reports section).</p>")
    else:
        items = []
        for r in rows:
            period = r.get("period") or {}
            verified = ('<span class="badge ok">verified</span>' if r.get("verified")
                        else '<span class="badge warn">not read back</span>')
            items.append(
                f'<li><a class="what" href="/reports/{attr(quote(r["run_id"]))}">'
                f'{text(r.get("profile", ""))} · {text(period.get("start", ""))} → {text(period.get("end", ""))}</a>'
                f' {verified}<div class="meta"><span>delivered {text(r.get("delivered_at", ""))}</span>'
                f'<span>{text(r.get("kind", ""))}</span><span>{text(r.get("classification", ""))}</span>'
                f'<span>to {text(r.get("sink", ""))}</span><span class="id">{text(r["run_id"])}</span></div></li>')
        listing = f'<ul class="ledger">{"".join(items)}</ul>'
    return layout("Reports", f"<h1>Delivered reports</h1><p class=\"muted\">Newest first; "
                             f"{len(rows)} in all.</p>{listing}", here="reports")
