"""Rendering a frozen report: Markdown (canonical), JSON, and the HTML page.

A renderer reads only the frozen run, so the same frozen report always renders to
the same bytes.  Letter text is data: in Markdown every markup character is escaped
and control characters are written as `\\xNN`; newlines never start a line.
"""

from __future__ import annotations

import re

from m1nd import jsonout
from m1nd.reports import store
from m1nd.safetext import safe
from m1nd.words import plural

STATE_ORDER = ("wet_ink", "in_flight", "fired_clay", "external")
STATE_WORD = {"wet_ink": "open", "in_flight": "in flight", "fired_clay": "answered", "external": "external"}
CLASSIFICATION_WORD = {
    "scheduled": "Scheduled",
    "partial-since-activation": "Partial since activation",
    "catch-up": "Catch-up (missed boundaries coalesced into one report)",
    "manual": "Manual (no cursor moved)",
    "update": "Update (an exception between reports; no cursor moved)",
}
CHANGES = "Changes made: none. This report read the spool and the boxes; it filed nothing and changed no box."
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")


def plain(text: str) -> str:
    """Letter text for one line of output: control and bidi characters escaped, no newline."""
    return safe(text.replace("\r\n", "\n"), tab="\\x09")


def md(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", plain(text))


def totals(summary: list[dict]) -> dict:
    keys = ("new", "open", "in_flight", "answered", "external")
    return {k: sum(row[k] for row in summary) for k in keys}


def label_of(row: dict) -> str:
    label = row["box"] if row["box"] != "waiting" else "waiting (not filed yet)"
    if not row.get("reachable", True):
        label += " (unreachable)"
    return f"{row['marker']} {label}" if row["marker"] else label


def period_line(head: dict) -> str:
    p, local = head["period"], head["local"]
    return (f"Period: {local['start']} → {local['end']} ({p['timezone']}), "
            f"{p['start']} → {p['end']} · {CLASSIFICATION_WORD[head['classification']]}")


def coverage_line(head: dict) -> str:
    cov = head["coverage"]
    if cov["status"] == "complete":
        return "Coverage: complete"
    return "Coverage: incomplete: " + "; ".join(cov["reasons"])


def next_action(head: dict) -> str:
    t = totals(head["summary"])
    reasons = " ".join(head["coverage"]["reasons"])
    steps = []
    if "unreachable" in reasons or "refused" in reasons or "unreadable" in reasons or "malformed" in reasons:
        steps.append("`m1nd doctor` to see what cannot be read")
    if "pending in the spool" in reasons:
        steps.append("`m1nd distribute` to file pending letters (or `m1nd roster add PATH` for unknown repositories)")
    if t["open"] or t["in_flight"]:
        work = [plural(t["open"], "open letter")] if t["open"] else []
        work += [plural(t["in_flight"], "letter") + " in flight"] if t["in_flight"] else []
        steps.append(f"`m1nd sweep` to read the {' and '.join(work)}")
    return "Next: " + ("; ".join(steps) if steps else "nothing to do") + "."


def outcome_of(e: dict) -> str:
    if e.get("outcome"):
        return e["outcome"]
    return ", ".join(e["answered_by"]) if e["answered_by"] else "open"  # a report frozen before outcomes


def outcome_counts(entries: list[dict]) -> dict[str, int]:
    """The ledger's outcomes counted (a reply counts as a receipt or a pickup)."""
    out: dict[str, int] = {}
    for e in entries:
        word = outcome_of(e)
        key = "receipts" if word.startswith("receipt of") else "pickups" if word.startswith("pickup of") else word
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def outcomes_line(entries: list[dict]) -> str:
    counts = outcome_counts(entries)
    if not counts:
        return "Outcomes: none."
    nouns = {"receipts": "receipt", "pickups": "pickup"}  # the other outcomes are words that take no plural
    return "Outcomes: " + ", ".join(plural(n, nouns[word], word) if word in nouns else f"{n} {word}"
                                    for word, n in counts.items()) + "."


def new_split(row: dict, entries: list[dict]) -> dict[str, int]:
    """The chart's split of a row's New: by state, replies apart."""
    if "new_split" in row:
        return row["new_split"]
    split = {s: 0 for s in STATE_ORDER} | {"reply": 0}
    for e in entries:
        if e["box"] == row["box"]:
            split["reply" if e["reply"] else e["state"]] += 1
    return split


def boxes_in_order(head: dict, entries: list[dict]) -> list[tuple[dict, list[dict]]]:
    by_box: dict[str, list[dict]] = {}
    for e in entries:
        by_box.setdefault(e["box"], []).append(e)
    return [(row, by_box.get(row["box"], [])) for row in head["summary"]]


def entry_fields(e: dict) -> list[tuple[str, str]]:
    """The ledger line's fields in order (label, value).  A held letter: id, ts,
    state and `held: KIND`, none of its text."""
    if e.get("held"):
        return _why(e) + [("state", e["state"]), ("id", e["id"]), ("ts", e["ts"] or "-"),
                          ("outcome", f"held: {e['held']}")]
    fields = [("state", e["state"]), ("class", e["class"] or "-"),
              ("tool", e["tool"] or "-"), ("what", e["what"] or "-"), ("agent", e["agent"] or "-"),
              ("ts", e["ts"] or "-"), ("id", e["id"]), ("outcome", outcome_of(e))]
    if e.get("pending"):
        fields.append(("waits for", e["pending"]))
    return _why(e) + fields + ([("case", e["case"])] if e.get("case") else [])


def _why(e: dict) -> list[tuple[str, str]]:
    """An update's letter starts with what made it urgent."""
    return [("trigger", e["trigger"])] if e.get("trigger") else []


def triggers_of(head: dict) -> list[dict]:
    update = head.get("update")
    return update["triggers"] if update else []


def trigger_counts(head: dict) -> str:
    counts: dict[str, int] = {}
    for t in triggers_of(head):
        counts[t["trigger"]] = counts.get(t["trigger"], 0) + 1
    return ", ".join(plural(n, *TRIGGER_WORDS.get(word, (word, word))) for word, n in sorted(counts.items()))


# a trigger's reason word (the JSON's `trigger`) counted in a sentence
TRIGGER_WORDS = {"alert class": ("letter of an alert class", "letters of an alert class"),
                 "escalation": ("escalation", "escalations"),
                 "sentinel red": ("sentinel gone red", "sentinels gone red")}


def trigger_line(t: dict) -> list[tuple[str, str]]:
    """An update's line: why, then the letter's line (its case, for an escalation or a regression)."""
    return [("box", t["box"])] + entry_fields(t)


def failed_line(head: dict) -> str | None:
    failed = head.get("failed_deliveries") or []
    if not failed:
        return None
    retry = f"`m1nd report deliver --retry {failed[0]}`" if len(failed) == 1 else \
        "`m1nd report deliver --retry RUN_ID` for each"
    return (f"Delivery failed: {', '.join(failed)} (refused by its sink too many times; "
            f"{'it stays' if len(failed) == 1 else 'they stay'} in the outbox: {retry}).")


def markdown(frozen: store.Frozen) -> bytes:
    head, entries = frozen.head, frozen.entries
    out = [f"# m1nd report: {head['profile']}, {head['local']['end']}", ""]
    out += [period_line(head), "", coverage_line(head), "", CHANGES, ""]
    if head["not_itemized"]:
        out += [f"Not itemized: {plural(head['not_itemized'], 'letter')} observed before "
                f"{head['period']['start']} (the first report covers at most 7 days).", ""]
    out += ["| Box | New | Open | In flight | Answered | External |", "|---|---:|---:|---:|---:|---:|"]
    for row in head["summary"]:
        out.append(f"| {md(label_of(row))} | {row['new']} | {row['open']} | {row['in_flight']} | "
                   f"{row['answered']} | {row['external']} |")
    t = totals(head["summary"])
    out += [f"| Total | {t['new']} | {t['open']} | {t['in_flight']} | {t['answered']} | {t['external']} |", ""]
    out += ["Open counts open work: replies (pickups and receipts) are listed below as replies to their "
            "letters and never counted open.", ""]
    triggers = triggers_of(head)
    if triggers:
        out += ["## Update", "", f"Triggered by: {trigger_counts(head)} since the last report or update.", ""]
        if head["kind"] != "update":  # an update's ledger is its triggers; a cadence report lists them here
            for t in triggers:
                out.append("- " + " · ".join(f"`{v}`" if k in ("state", "id") else md(v) for k, v in trigger_line(t)))
            out.append("")
    out += ["## Ledger", ""]
    if not entries:
        out += ["No new letters in this period.", ""]
    for row, items in boxes_in_order(head, entries):
        if not items:
            continue
        out += [f"### {md(label_of(row))} ({plural(len(items), 'letter')})", ""]
        for e in items:
            parts = [f"`{v}`" if k in ("state", "id") else md(v) for k, v in entry_fields(e)]
            out.append("- " + " · ".join(parts))
        out.append("")
    pages = head["pages"]
    out += ["## Status", "",
            coverage_line(head) + ".",
            "Cursor: unchanged (an update moves no cursor; its letters are in the next report too)."
            if head["kind"] == "update" else
            "Cursor: unchanged (a manual report moves no cursor)."
            if head["kind"] == "manual" else
            f"Cursor: {head['period']['end']} once committed"
            + (f" (was {head['cursor_before']})." if head["cursor_before"] else " (first report of this profile)."),
            f"Entries: {head['entries']} on {plural(pages, 'page')} of at most 100. Report digest: `{frozen.digest}`.",
            outcomes_line(entries)]
    if failed_line(head):
        out.append(failed_line(head))
    out += [next_action(head), ""]
    return "\n".join(out).encode("utf-8")


def json_doc(frozen: store.Frozen) -> bytes:
    head = frozen.head
    doc = {
        "schema": "m1nd-report-v1",
        "run_id": frozen.run_id,
        "profile": head["profile"],
        "kind": head["kind"],
        "classification": head["classification"],
        "period": head["period"],
        "coverage": head["coverage"],
        "changes_made": [],
        "not_itemized": head["not_itemized"],
        "summary": head["summary"],
        "total": totals(head["summary"]),
        "outcomes": outcome_counts(frozen.entries),
        "entries": frozen.entries,
        "pages": head["pages"],
        "page_digests": list(frozen.manifest["pages"]),
        "digest": frozen.digest,
        "cursor_before": head["cursor_before"],
        "next_action": next_action(head),
        "update": head.get("update"),
        "failed_deliveries": head.get("failed_deliveries") or [],
    }
    return jsonout.dumps(doc)
