"""Long because every human view is here, so that they all look alike.

Human views (rich).  Only the CLI prints; this module decides how things look."""

from __future__ import annotations

from m1nd.cli import output
from m1nd.safetext import safe
from m1nd.fates import EXTERNAL, FIRED_CLAY, IN_FLIGHT, is_receipt
from m1nd.held import held_ts
from m1nd.words import plural

STATE_LABEL = {"wet_ink": "open", IN_FLIGHT: "in flight", FIRED_CLAY: "answered", EXTERNAL: "external"}


def shorten(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(title: str | None = None):
    from rich import box as rich_box
    from rich.table import Table

    return Table(title=title, box=rich_box.SIMPLE_HEAD, title_justify="left", pad_edge=False)


def receipt_line(receipt) -> None:
    pending = (f"; {plural(receipt.pending_letters, 'letter')} pending for {', '.join(receipt.pending)}"
               if receipt.pending else "")
    held = f"; {receipt.held} held back (likely secrets: m1nd doctor)" if receipt.held else ""
    text = (f"{plural(receipt.spool_total, 'letter')} in the spool: {receipt.appended} newly filed; "
            f"{receipt.to_project} to project boxes, {receipt.to_medulla} to medulla{pending}{held}")
    output.emit_text("\n".join(_wrap(text, output.width())))


# -- letter text is data: never markup, never terminal control (contract section 10) ----

def inline(text: str) -> str:
    """One line of plain text: a newline shows as ⏎, a tab as a space, every other
    control or bidi character escaped (`\\x1b`, `\\u202e`)."""
    return safe(text)


def block_lines(text: str) -> list[str]:
    """A field for `m1nd show`: one output line per line of the text (the caller
    puts a gutter before each), control characters escaped, tabs kept."""
    return [safe(part, tab="\t") for part in text.split("\n")]


def _cells(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def fit(text: str, width: int) -> str:
    """`text` cut to at most `width` terminal cells, with … when cut."""
    if width <= 0:
        return ""
    if len(text) <= width and _cells(text) <= width:
        return text
    from rich.cells import set_cell_size

    return set_cell_size(text, width - 1).rstrip() + "…"


def pad(text: str, width: int) -> str:
    text = fit(text, width)
    return text + " " * (width - _cells(text))


class Printer(output.LineWriter):
    """Writes lines of plain text to the console (colour only when allowed)."""

    STYLES = {"wet_ink": "bold", IN_FLIGHT: "yellow", FIRED_CLAY: "green", EXTERNAL: "dim"}


# -- the box table --------------------------------------------------------------------

COLUMNS = (("Open", "open_work"), ("In flight", "in_flight_work"), ("Answered", "answered_work"),
           ("External", "external_work"), ("Replies", "replies"), ("Total", "total"))
SHORT = {"Open": "Open", "In flight": "Flight", "Answered": "Ans.", "External": "Ext.", "Replies": "Repl.",
         "Total": "Total"}


def _work_counts(c: dict) -> dict:
    return {
        "open_work": c["open_work"], "in_flight_work": c.get("in_flight_work", 0),
        "answered_work": c.get("answered_work", 0), "external_work": c.get("external_work", 0),
        "replies": c["replies"], "total": c["total"],
    }


def box_table(p: Printer, rows: list[tuple[str, dict]]) -> None:
    labels = [inline(label) for label, _ in rows]
    values = [[str(_work_counts(c)[key]) for _, key in COLUMNS] for _, c in rows]
    heads = [h for h, _ in COLUMNS]
    label_w = max([3] + [_cells(x) for x in labels])

    def widths(names):
        return [max([len(n)] + [len(v[i]) for v in values]) for i, n in enumerate(names)]

    w = widths(heads)
    if min(label_w, 24) + sum(w) + 2 * len(w) > p.width:
        heads = [SHORT[h] for h in heads]
        w = widths(heads)
    label_w = max(3, min(label_w, p.width - sum(w) - 2 * len(w)))
    p.line(pad("Box", label_w) + "".join("  " + h.rjust(n) for h, n in zip(heads, w)))
    p.line("─" * min(p.width, label_w + sum(w) + 2 * len(w)))
    for label, vals in zip(labels, values):
        p.line(pad(label, label_w) + "".join("  " + v.rjust(n) for v, n in zip(vals, w)))


# -- letters ----------------------------------------------------------------------------


def short_ts(letter) -> str:
    key = getattr(letter, "sortkey", None)
    if key is None:
        from m1nd.timefmt import sort_key

        key = sort_key(letter.ts)
    if key.startswith("!"):
        return inline(letter.ts) or "-"
    return key[:10] + " " + key[11:16]


CLASS_CELLS = len("memory_misdelivery")  # the longest class in use is never cut
# `what`'s least room on one line: 36 keeps a 120-column sweep with memory_misdelivery on one line
WHAT_CELLS = 36


def _column_widths(listing, show_box: bool) -> dict[str, int]:
    def widest(values, cap):
        return min(cap, max([1] + [_cells(v) for v in values]))

    cells = [_shown_cells(sh) for sh in listing.shown]
    return {
        "ts": max([1] + [len(ts) for ts, _, _ in cells]),
        "box": widest([inline(sh.box) for sh in listing.shown], 16) if show_box else 0,
        "agent": widest([agent for _, agent, _ in cells], 14),
        "class": widest([klass for _, _, klass in cells], CLASS_CELLS),
    }


def _shown_cells(shown) -> tuple[str, str, str]:
    """(ts, agent, class) as a listing prints them.  A held letter (wherever it lives)
    never has its fields printed, not even their widths: a secret may sit in any of
    them, its `ts` included unless that is a timestamp."""
    letter = shown.letter
    if shown.held:
        return (short_ts(letter) if held_ts(letter.ts) else "-"), "", ""
    return short_ts(letter), inline(letter.agent), inline(letter.klass)


def _letter_lines(p: Printer, shown, widths: dict[str, int]) -> None:
    """One line when `what` can keep at least WHAT_CELLS beside the other columns, else
    two: the id and its facts, then `what` with the whole width.  The id comes first
    and is never cut."""
    letter = shown.letter
    state = STATE_LABEL[shown.state]
    spans = [(14, 14 + len(state), Printer.STYLES[shown.state])]
    what = f"(held: {shown.held}; see m1nd doctor)" if shown.held else inline(letter.what) or "(no what)"
    ts, agent, klass = _shown_cells(shown)
    cols = [letter.id, state.ljust(9), ts.ljust(widths["ts"])]
    if widths["box"]:
        cols.append(pad(inline(shown.box), widths["box"]))
    cols += [pad(agent, widths["agent"]), pad(klass, widths["class"])]
    head = "  ".join(cols)
    room = p.width - _cells(head) - 2
    if room >= WHAT_CELLS:
        p.line(head + "  " + fit(what, room), spans)
    else:
        # narrow: no padding, so that what fits is whole; the id first, never cut
        box = fit(inline(shown.box), 16) if widths["box"] else ""
        agent, klass = fit(agent, 14), fit(klass, CLASS_CELLS)
        # what does not fit goes first: the time of day, then the class, then agent's tail
        for cols in ([ts, box, agent, klass], [ts[:10], box, agent, klass], [ts[:10], box, agent]):
            line = "  ".join(x for x in [letter.id, state] + cols if x)
            if _cells(line) <= p.width:
                break
        p.line(fit(line, p.width), [(14, 14 + len(state), Printer.STYLES[shown.state])])
        p.line("    " + fit(what, p.width - 4))
    _reply_lines(p, shown)


MAX_REPLIES = 3


def _reply_lines(p: Printer, shown) -> None:
    replies = shown.replies
    for reply, _ in replies[:MAX_REPLIES]:
        if reply.id in shown.held_replies:  # its fields are never printed
            p.line(fit(f"    ↳ {reply.id} (held)", p.width))
            continue
        kind = "answer" if is_receipt(reply) else "pickup"
        text = f"    ↳ {reply.id} {kind} by {inline(reply.agent) or '?'}: {inline(reply.what)}"
        p.line(fit(text, p.width))
    if len(replies) > MAX_REPLIES:
        rest = len(replies) - MAX_REPLIES
        p.line(f"    ↳ … {plural(rest, 'more reply', 'more replies')}: m1nd show {shown.letter.id}")


STATE_WORDS = {"open": "open", "in_flight": "in flight", "answered": "answered", "external": "external",
               "all": ""}


def _listing(p: Printer, listing, show_box: bool, command: str) -> None:
    f = listing.filters
    what = STATE_WORDS[f.state]
    noun = f"{what} letters" if what else "letters"
    if not listing.shown:
        p.line(f"no {noun}" + (" match the filters" if f.narrowing else ""))
        return
    p.line(f"{noun.capitalize()}, newest first ({len(listing.shown)} of {listing.matched}):")
    widths = _column_widths(listing, show_box)
    for shown in listing.shown:
        _letter_lines(p, shown, widths)
    if listing.more > 0:
        for text in _wrap(f"… and {listing.more} more: {command} --all shows every one (--limit N the first N)",
                          p.width):
            p.line(text)


def _summary(c: dict) -> str:
    return (f"{plural(c['total'], 'letter')}: {c['open_work']} open ({c.get('in_flight_work', 0)} in flight), "
            f"{c.get('answered_work', 0)} answered, {c.get('external_work', 0)} external, "
            f"{plural(c['replies'], 'reply', 'replies')}")


LEGEND = ("Open: letters still to act on, In flight among them (someone picked them up). Replies "
          "(pickups, answers) are work done, counted apart: Open + Answered + External + Replies = Total.")


def sweep_view(listing, doc_counts: dict, stream=None) -> None:
    p = Printer(stream)
    rows = list(listing.rows)
    if listing.not_filed is not None:
        rows.append(("waiting to be filed", listing.not_filed))
    box_table(p, rows)
    for text in _wrap(LEGEND, p.width):
        p.line(text)
    if listing.not_filed is not None:
        for text in _wrap("waiting to be filed: letters only the spool holds, for a repository this "
                          "machine does not know yet, or held back (m1nd doctor says which).", p.width):
            p.line(text)
    p.line()
    for text in _wrap(_summary(listing.totals) + f"; {doc_counts['misdelivery']} misdelivered", p.width):
        p.line(text)
    _listing(p, listing, True, "m1nd sweep")


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    # letter text never reaches here unescaped; break only at spaces
    return textwrap.wrap(text, width=max(20, width), break_long_words=False, break_on_hyphens=False) or [""]


def _wrap_long(text: str, width: int) -> list[str]:
    """Wrapped at spaces; a word longer than the line (a path) is cut, never lost."""
    import textwrap

    return textwrap.wrap(text, width=max(20, width), break_on_hyphens=False) or [""]


def box_view(listing, box, stream=None) -> None:
    p = Printer(stream)
    root = box.root.path if box.root else "medulla: letters that name no project, private to this home"
    p.line(fit(f"box {inline(box.label)} — {inline(root)}", p.width))
    for text in _wrap(_summary(listing.totals), p.width):
        p.line(text)
    _listing(p, listing, False, f"m1nd box {box.label}")


def box_warnings(label: str, malformed) -> None:
    if malformed:
        output.warn(f"box {label} has {plural(len(malformed), 'malformed line')} "
                    f"(first: {', '.join(map(str, malformed[:5]))})")


def doctor_view(report) -> None:
    """One block per check, laid out for the width there is: its name and status, the
    message wrapped to the rest of the line, then its fix on lines of its own (a table's
    columns would squeeze a path into a narrow message column and leave `fix` empty)."""
    mark = {"ok": "ok", "warn": "WARN", "error": "ERROR"}
    width = max(40, output.width())
    name_w = max(len(c.name) for c in report.checks) if report.checks else 5
    head_w = name_w + 2 + 5 + 2
    lines = ["Checks", ""]
    for check in report.checks:
        head = f"{check.name.ljust(name_w)}  {mark[check.status].ljust(5)}  "
        message = _wrap_long(inline(check.message), width - head_w)
        lines.append(head + message[0])
        lines += [" " * head_w + rest for rest in message[1:]]
        if check.fix:
            fix = _wrap_long("fix: " + inline(check.fix), width - head_w)
            lines += [" " * head_w + text for text in fix]
    lines.append("")
    output.emit_text("\n".join(lines))
    m = report.mailbox
    if m is None:
        text = "mailbox: unavailable (the spool cannot be read)"
    else:
        pending = inline(", ".join(m["pending_distribution"]) or "none")
        text = (f"mailbox: {plural(m['spool_letters'], 'spool letter')}; {m['memory_misdelivery']} misdelivered "
                f"({m['confusion_rate_7d']} in the last 7 days); pending: {pending}")
    output.emit_text("\n".join(_wrap_long(text, width)))


FATE_WORDS = {
    "wet_ink": "open (wet ink: nobody has picked it up yet)",
    IN_FLIGHT: "in flight (picked up, not answered yet)",
    FIRED_CLAY: "answered (fired clay: a receipt closed it)",
    EXTERNAL: "external (about a foreign tool: not ours to fix)",
}


def _value_lines(value) -> list[str]:
    if isinstance(value, str):
        return block_lines(value)
    import orjson

    return block_lines(orjson.dumps(value).decode())


def show_view(found, stream=None) -> None:
    p = Printer(stream)
    key_w = 12
    for n, shown in enumerate(found):
        if n:
            p.line()
            p.line(f"another letter with the same id (different bytes):")
        letter = shown.letter
        state = FATE_WORDS[shown.state]
        if letter.kind == "mission":
            state += "; a mission letter, left out of every view"
        p.line(f"letter {letter.id} · {state}", [(7, 19, "bold")])
        boxes = [loc for loc in shown.locations if loc.kind == "box"]
        spool = [loc for loc in shown.locations if loc.kind != "box"]
        where = [f"{inline(loc.label)} ({inline(loc.path)} line {loc.line})" for loc in boxes]
        where += [f"spool line {loc.line}" + ("" if boxes else " (not filed)") for loc in spool]
        p.line(pad("box", key_w) + (where[0] if where else "-"))
        for more in where[1:]:
            p.line(" " * key_w + more)
        if shown.held:  # a likely secret may sit in any field: none is printed
            p.line(pad("held", key_w) + f"{shown.held}: its fields are never printed (m1nd doctor says how to "
                   "replace it with a redacted letter)")
        for key, value in ({} if shown.held else shown.fields).items():
            lines = _value_lines(value)
            label = pad(inline(key), key_w - 1) + " "
            if len(lines) == 1:
                p.line(label + lines[0])
            else:
                p.line(label + "│ " + lines[0])
                for line in lines[1:]:
                    p.line(" " * key_w + "│ " + line)
        if letter.ts and not letter.sortkey.startswith("!"):
            p.line(pad("ts (UTC)", key_w) + short_ts(letter))
        p.line(pad("digest", key_w) + letter.digest)
        if shown.answers and not shown.held:
            p.line("answers:")
            for lid, rows in shown.answers:
                if not rows:
                    p.line(f"  {lid}  (no such letter here)")
                for row, st in rows:
                    said = "(held)" if row.digest in shown.held_others else f"{inline(row.agent)}: {inline(row.what)}"
                    p.line(fit(f"  {row.id}  {STATE_LABEL[st]:<9}  {said}", p.width))
        if shown.replies:
            p.line("replies, oldest first:")
            for row, st in shown.replies:
                kind = "answer" if is_receipt(row) else "pickup"
                held = row.digest in shown.held_others
                said = "(held)" if held else f"{inline(row.agent)}: {inline(row.what)}"
                ts = short_ts(row) if not held or held_ts(row.ts) else "-"
                p.line(fit(f"  {row.id}  {kind}  {ts}  {said}", p.width))
        else:
            p.line("replies: none")
