"""`m1nd cases`'s document (cases contract section 7): every fingerprint with its
witnesses, escalation and case, over the fold of the read model, with the sentinel
allowlist and last runs of the records."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from m1nd.run import Run

Say = Callable[[str], None]


def say_notes(cases, say: Say) -> None:
    """The read model's notes, and each box that could not be read (its letters are
    left out of every case)."""
    for note in cases.notes:
        say(note)
    for problem in cases.problems:
        say(f"{problem} (its letters are left out)")


@contextmanager
def opened(run: Run, say: Say) -> Iterator[tuple]:
    """(cases, overlay): the fold, open for what else a view asks of it (which box
    holds a letter), and its overlay."""
    from m1nd.cases import records
    from m1nd.cases.escalation import overlay_of
    from m1nd.cases.source import open_cases

    allowed, runs = records.allowlist(run.paths), records.last_runs(run.paths)
    with open_cases(run) as cases:
        say_notes(cases, say)
        yield cases, overlay_of(cases, allowed, runs)


def cases_overlay(run: Run, say: Say):
    """The overlay (`m1nd.cases.overlay.Overlay`), plain data once the fold is closed."""
    with opened(run, say) as (_, overlay):
        return overlay


def cases_document(run: Run, say: Say) -> dict:
    """`m1nd cases --json`."""
    return cases_overlay(run, say).as_json()
