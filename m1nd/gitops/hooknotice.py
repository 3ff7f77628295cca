"""What a post-* hook tells after its filing: one line when the bound repository's box
has open letters (and a warning for its malformed lines), answered from the read model.
Part of the hot path (hookrun.py): imports stay light.
"""

from __future__ import annotations

from m1nd.safetext import safe


def open_letters_line(label: str, open_count: int, new: int, waiting: int = 0) -> str:
    """`open_count` counts the box's open letters and those waiting to be filed into it."""
    noun = "letter" if open_count == 1 else "letters"
    notes = ([f"{new} new"] if new else []) + ([f"{waiting} waiting to be filed"] if waiting else [])
    fresh = f" ({', '.join(notes)})" if notes else ""
    # one line: a label (a directory's name) may hold a newline
    return f"m1nd: {safe(label)} has {open_count} open {noun}{fresh} — m1nd sweep to read"


def notice(run, receipt) -> list[str]:
    """One line, only when the bound repository's box has open letters (counting the
    letters that wait for a safe filing into it)."""
    from m1nd.boxview import select_box

    box = select_box(run, run.bound)
    waiting = receipt.waiting_for(box.path)
    open_work, malformed = _box_state(run, box)
    lines = []
    if malformed:  # as doctor names them: a line that arrived by git may be one
        from m1nd.words import plural

        shown = ", ".join(map(str, malformed[:5])) + (" and more" if len(malformed) > 5 else "")
        lines.append(f"m1nd: warning: box {safe(box.label)} has {plural(len(malformed), 'malformed line')} "
                     f"(line{'s' if len(malformed) > 1 else ''} {shown}); m1nd doctor names them")
    open_count = open_work + waiting
    if open_count:
        new = min(receipt.appended_to(box.path), open_count)
        lines.append(open_letters_line(box.label, open_count, new, waiting))
    return lines


def _box_state(run, box) -> tuple[int, list[int]]:  # box: the bound repository's
    """(open work in one box, replies left out; its malformed lines), from the read
    model: with nothing new, one fstat and cached answers, whatever the size of the box."""
    from m1nd.readmodel import open_model

    model = open_model(run, only=box)
    try:
        source = model.boxes[0]
        if source.fid is None:
            return 0, []
        conflicts = set(model.conflict_lines(source))  # doctor names those apart
        return model.counts(source)["open_work"], [n for n in model.malformed(source) if n not in conflicts]
    finally:
        model.close()

