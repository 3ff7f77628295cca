"""Membership in the coverage ledger past its sorted index (ledger.py `_tail_digests`):
the digests are sliced out of m1nd's fixed-length lines, and must be exactly those a
line-by-line read finds; a tail in any other state is read line by line."""

from __future__ import annotations

import hashlib
import os

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from m1nd import ledger
from m1nd.ledgerfile import ledger_path, read_from
from m1nd.paths import resolve_paths

STAMP = "2026-12-01T00:00:00Z"


def digest(n: int) -> bytes:
    return hashlib.sha256(b"letter %d" % n).digest()


def fresh_ledger(tmp_path, name: str, first: int, then: int):
    home = tmp_path / name
    home.mkdir()
    paths = resolve_paths(home=str(home), spool=str(home / "spool.jsonl"))
    ledger.record_seen(paths, [digest(n) for n in range(first)], STAMP)  # into an empty ledger: indexed at once
    ledger.record_seen(paths, [digest(n) for n in range(first, first + then)], STAMP)  # the tail
    return paths


def covered(paths) -> int:
    at, table = ledger._open_index(paths)
    if table is not None:
        table.close()
    return at


@settings(max_examples=25, deadline=None)
@given(first=st.integers(1, 40), then=st.integers(0, 40), asked=st.lists(st.integers(0, 120), max_size=30))
def test_the_tail_s_digests_are_those_a_line_by_line_read_finds(tmp_path_factory, first, then, asked):
    paths = fresh_ledger(tmp_path_factory.mktemp("l"), "home", first, then)
    at = covered(paths)
    assert at > 0
    by_lines = {e.digest.encode() for _, e in read_from(paths, at)[0]}
    assert ledger._tail_digests(paths, at) == by_lines
    ns = list(dict.fromkeys(asked))
    assert ledger._fresh_of(paths, [digest(n) for n in ns]) == [digest(n) for n in ns if n >= first + then]


@pytest.mark.parametrize("damage", ["unterminated", "other form"])
def test_a_tail_not_in_m1nd_s_line_form_is_read_line_by_line(tmp_path, damage):
    paths = fresh_ledger(tmp_path, "home", 3, 2)
    at = covered(paths)
    odd = digest(99).hex()
    with open(ledger_path(paths), "ab") as fh:
        if damage == "unterminated":  # an append cut short by a crash: skipped, as every read skips it
            fh.write(b'{"id":"%s","digest":"%s"' % (odd[:12].encode(), odd.encode()))
        else:  # a line a person rewrote with spaces: still an entry
            fh.write(orjson.dumps({"id": odd[:12], "digest": odd, "observed_at": STAMP}, option=orjson.OPT_INDENT_2)
                     .replace(b"\n", b" ") + b"\n")
    tail = ledger._tail_digests(paths, at)
    assert {digest(3).hex().encode(), digest(4).hex().encode()} <= tail
    assert (odd.encode() in tail) == (damage == "other form")
    assert ledger._fresh_of(paths, [digest(3), digest(99), digest(100)]) == (
        [digest(99), digest(100)] if damage == "unterminated" else [digest(100)])


def test_a_ledger_grown_by_another_process_is_read_again(tmp_path):
    paths = fresh_ledger(tmp_path, "home", 3, 1)
    at = covered(paths)
    before = ledger._tail_digests(paths, at)
    ledger.record_seen(paths, [digest(7)], "2026-12-02T00:00:00Z")
    assert ledger._tail_digests(paths, at) == before | {digest(7).hex().encode()}
    assert os.path.getsize(ledger_path(paths)) > at


@pytest.mark.parametrize("column,byte", [(40, b"z"), (118, b"X"), (8, b"0")])
def test_a_tail_line_damaged_in_place_is_refused_not_recorded_again(tmp_path, column, byte):
    """A line edited without changing its length (a non-hex digest, a broken date, an
    id that is not the digest's start) is damage: membership fails closed, as every
    read of the ledger does, rather than taking the letter for new and recording it
    a second time."""
    from m1nd.errors import M1ndError

    paths = fresh_ledger(tmp_path, "home", 3, 2)
    path = ledger_path(paths)
    lines = open(path, "rb").read().split(b"\n")
    line = bytearray(lines[4])
    line[column:column + 1] = byte if line[column:column + 1] != byte else b"e"
    lines[4] = bytes(line)
    open(path, "wb").write(b"\n".join(lines))
    size = os.path.getsize(path)
    with pytest.raises(M1ndError, match="damaged"):
        ledger.record_seen(paths, [digest(4), digest(5)], STAMP)
    assert os.path.getsize(path) == size
