"""Letters by id, through the digest index.

A letter's id is the first six bytes of its digest in lowercase hex, so the letters
with one id (or with ids that start with a prefix) are one range of digests: the read
model keeps no index of ids, which saved a random page write per new letter.  A
string that is not twelve lowercase hex digits is the id of no letter.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

_ID = re.compile(r"[0-9a-f]{12}")
_PREFIX = re.compile(r"[0-9a-f]{1,12}")
_REST = b"\xff" * 26  # the largest digest bytes after the id's six

# Spans asked per query (two parameters each, well under SQLite's limit).
SPANS_PER_QUERY = 400


def id_span(lid) -> tuple[bytes, bytes] | None:
    """(lowest, highest) digest of a letter with id `lid`; None for no letter."""
    if not isinstance(lid, str) or not _ID.fullmatch(lid):
        return None
    low = bytes.fromhex(lid)
    return low, low + _REST


def prefix_span(prefix: str) -> tuple[bytes, bytes] | None:
    """(lowest, highest) digest of a letter whose id starts with `prefix`."""
    if not _PREFIX.fullmatch(prefix):
        return None
    pad = 12 - len(prefix)
    return bytes.fromhex(prefix + "0" * pad), bytes.fromhex(prefix + "f" * pad) + _REST


def spans(ids: Iterable) -> list[tuple[bytes, bytes]]:
    """The span of each id that can be one (sorted, each once)."""
    return sorted({s for s in map(id_span, ids) if s is not None})


def rows_with_ids(con, select: str, ids: Iterable, where: str = "", args: tuple = ()) -> Iterator[tuple]:
    """The rows of `SELECT {select} FROM letters l` (with `AND {where}`) of the letters
    whose id is one of `ids`, SPANS_PER_QUERY ids to a query, each a range of the
    digest index (`s` is the table of spans the query joins)."""
    every = spans(ids)
    for at in range(0, len(every), SPANS_PER_QUERY):
        part = every[at:at + SPANS_PER_QUERY]
        values = ",".join(["(?,?)"] * len(part))
        sql = (f"WITH s(low, high) AS (VALUES {values}) SELECT {select} FROM s"
               f" CROSS JOIN letters l ON l.digest BETWEEN s.low AND s.high" + (f" WHERE {where}" if where else ""))
        yield from con.execute(sql, [b for span in part for b in span] + list(args))
