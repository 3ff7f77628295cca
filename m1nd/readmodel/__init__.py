"""The read model: one persistent, derived index of every letter (spool and boxes).

    from m1nd.readmodel import open_model
    model = open_model(run)            # opened and brought current for this run
    for letter in model.letters():     # the union, distinct by digest, id order
        model.state(letter)            # its fate over the union
    model.close()

Never a source of truth: delete `<home>/state/readmodel.sqlite3` and every view
prints what it printed.  Fates and counts are derived at read time (section 5 of
the mailbox contract); what is cached is keyed by the content generations it was
computed from.  The methods of ReadModel are the API (the README says what every
view reads from it); they live along the flow:

    opening.py     open, bring current (update.py, one file at a time), sources
    queries.py     letters, lookups, copies, raw bytes, the reply graph (graph.py)
    aggregates.py  counts (kept current by tally.py)
    facts.py       doctor's facts, kept per file
    cache.py       the cache table every kept value goes through

store.py is the schema, rows.py a letter's row, idspan.py the letters of an id (a
range of the digest index: no index of ids is kept).
"""

from __future__ import annotations

from m1nd.boxes import Box
from m1nd.fates import STATES, is_receipt
from m1nd.readmodel.aggregates import Aggregates
from m1nd.readmodel.cache import Cache
from m1nd.readmodel.facts import Facts, SpoolAnswered  # noqa: F401  (SpoolAnswered: importable from here)
from m1nd.readmodel.opening import PRELOAD_BYTES, PROGRESS_BYTES, Opening, damage_reported  # noqa: F401
from m1nd.readmodel.queries import Queries
from m1nd.readmodel.rows import BOX, SPOOL, LetterRow, Location, Source
from m1nd.run import Run


class ReadModel(Opening, Queries, Aggregates, Facts, Cache):
    """The read model of one run: `con` (the SQLite database), `sources` (the spool,
    then the boxes, as brought current), `notes` (said once on stderr by the CLI)."""


STATE_ORDER = STATES


def open_model(run: Run, secret_check=None, only: Box | None = None) -> ReadModel:
    """The read model for this run, brought current with the run's files.

    `only`: bring current (and list in `sources`) the spool and this one box, not
    every box of the run (the hook's line needs one box).

    Never fails for the model's own sake: a database that does not verify is
    rebuilt (a note in `model.notes`), and a home where nothing can be written
    gets a model built in memory from the files (with a note).  Raises M1ndError
    only for what the files themselves make fail (an unreadable spool)."""
    return ReadModel.open(run, secret_check, only)


__all__ = ["open_model", "ReadModel", "LetterRow", "Location", "Source", "SPOOL", "BOX", "is_receipt"]
