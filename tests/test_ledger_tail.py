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

from m1nd import ledger, ledgerindex
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


def index_keys(paths) -> tuple[int, bytes]:
    with open(os.path.join(paths.state, "ledger-index"), "rb") as fh:
        raw = fh.read()
    return int.from_bytes(raw[8:16], "little"), raw[ledgerindex._HEAD:]


@settings(max_examples=25, deadline=None)
@given(blocks=st.lists(st.lists(st.integers(150, 400), max_size=12), min_size=1, max_size=8),
       asked=st.lists(st.integers(0, 420), max_size=30))
def test_a_tail_merged_into_the_index_leaves_it_the_sorted_digests_of_the_ledger(tmp_path_factory, blocks, asked):
    """Past MERGE_TAIL lines the tail is merged into the sorted index: the index then
    holds exactly the sorted digests of every line it covers (what a rebuild from the
    whole ledger writes), and membership answers as a line-by-line read does."""
    paths = fresh_ledger(tmp_path_factory.mktemp("l"), "home", 200, 0)  # an index of 200: a tail of 12 is merged
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ledgerindex, "MERGE_TAIL", 3)
        m.setattr(ledgerindex, "_rebuild_index", lambda *a: pytest.fail("read the whole ledger again"))
        for block in blocks:
            ledger.record_seen(paths, [digest(n) for n in dict.fromkeys(block)], STAMP)
            ns = list(dict.fromkeys([*asked, 1000]))  # at least one digest asked: a check
            written = {e.digest for _, e in read_from(paths, 0)[0]}
            assert ledger._fresh_of(paths, [digest(n) for n in ns]) == [
                digest(n) for n in ns if digest(n).hex() not in written]
            at, keys = index_keys(paths)
            covered_lines = sorted(bytes.fromhex(e.digest) for end, e in read_from(paths, 0)[0] if end <= at)
            assert keys == b"".join(covered_lines)
            assert ledger.tail_lines(paths, at) <= 3  # a longer tail was merged by the check


def test_a_long_tail_is_merged_once_and_later_checks_read_only_what_came_after(tmp_path, monkeypatch):
    paths = fresh_ledger(tmp_path, "home", 400, 0)  # an eighth of it is 50: a tail of 30 is merged
    monkeypatch.setattr(ledgerindex, "MERGE_TAIL", 10)

    def whole_ledger(*args):
        raise AssertionError("read the whole ledger again")
    monkeypatch.setattr(ledgerindex, "_rebuild_index", whole_ledger)
    ledger.record_seen(paths, [digest(n) for n in range(400, 430)], STAMP)  # 30 lines past the index
    assert covered(paths) < os.path.getsize(ledger_path(paths))
    assert ledger._fresh_of(paths, [digest(429), digest(900)]) == [digest(900)]
    assert covered(paths) == os.path.getsize(ledger_path(paths))  # merged: nothing left past the index
    ledger.record_seen(paths, [digest(n) for n in range(430, 435)], STAMP)  # 5 more: within the tail
    size_before = covered(paths)
    assert ledger._fresh_of(paths, [digest(434), digest(3), digest(901)]) == [digest(901)]
    assert covered(paths) == size_before  # a short tail is read, not merged
    assert index_keys(paths)[1] == b"".join(sorted(digest(n) for n in range(430)))


def test_an_index_that_cannot_be_written_leaves_the_tail_to_be_read(tmp_path, monkeypatch):
    paths = fresh_ledger(tmp_path, "home", 200, 0)
    monkeypatch.setattr(ledgerindex, "MERGE_TAIL", 4)
    ledger.record_seen(paths, [digest(n) for n in range(200, 210)], STAMP)
    at = covered(paths)

    tried = []

    def refuse(*args, **kwargs):
        tried.append(args[0])
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("m1nd.fsutil.atomic_write_parts", refuse)
    monkeypatch.setattr(ledgerindex, "_rebuild_index", lambda *a: pytest.fail("read the whole ledger again"))
    assert ledger._fresh_of(paths, [digest(205), digest(9), digest(777)]) == [digest(777)]
    assert tried and covered(paths) == at  # the merge was tried, and the tail read instead


def test_a_fifo_in_place_of_the_index_is_no_index_never_a_hang(tmp_path):
    paths = fresh_ledger(tmp_path, "home", 6, 2)
    index = os.path.join(paths.state, "ledger-index")
    os.unlink(index)
    os.mkfifo(index)
    assert ledger._fresh_of(paths, [digest(1), digest(7), digest(40)]) == [digest(40)]
    assert os.path.isfile(index)  # written again from the ledger, in the FIFO's place
    assert index_keys(paths)[1] == b"".join(sorted(digest(n) for n in range(8)))


@pytest.mark.parametrize("damage", ["cut to its head", "cut at a key", "a key less, count kept", "covered past the end",
                                    "the previous format"])
def test_an_index_cut_short_or_not_the_ledgers_is_written_again_and_nothing_is_recorded_twice(tmp_path, damage):
    """An index whose size is not its head's count of keys, whose covered length lies
    past the ledger's end, or of the earlier format is not used: the next check reads
    the ledger and writes the index again, so no letter it holds is taken for new."""
    paths = fresh_ledger(tmp_path, "home", 40, 5)
    index = os.path.join(paths.state, "ledger-index")
    raw = bytearray(open(index, "rb").read())
    head = ledgerindex._HEAD
    if damage == "cut to its head":
        raw = raw[:head]
    elif damage == "cut at a key":
        raw = raw[:head + 32 * 10]
    elif damage == "a key less, count kept":
        del raw[head:head + 32]
    elif damage == "covered past the end":
        raw[8:16] = b"\xff" * 8
    else:  # format 1: the head had no count of keys
        raw = b"M1NDLIX1" + raw[8:16] + raw[24:]
    open(index, "wb").write(bytes(raw))
    size = os.path.getsize(ledger_path(paths))
    assert ledger.record_seen(paths, [digest(n) for n in range(50)], STAMP) == 5  # 45 held, 5 new
    assert os.path.getsize(ledger_path(paths)) == size + 5 * (len(open(ledger_path(paths), "rb").readline()))
    digests = [e.digest for _, e in read_from(paths, 0)[0]]
    assert len(digests) == len(set(digests)) == 50
    assert index_keys(paths)[1] == b"".join(sorted(digest(n) for n in range(45)))  # written again, whole


def test_a_tail_with_a_digest_a_person_wrote_not_in_hex_is_left_to_be_read_not_merged(tmp_path, monkeypatch):
    """A merge takes only digests of 64 hex digits: a tail holding another (a line a
    person wrote, which the ledger's reader accepts) stays the tail, read as every check
    reads it, and the index is left as it was."""
    import json

    paths = fresh_ledger(tmp_path, "home", 200, 0)
    monkeypatch.setattr(ledgerindex, "MERGE_TAIL", 2)
    monkeypatch.setattr(ledgerindex, "_rebuild_index", lambda *a: pytest.fail("read the whole ledger again"))
    ledger.record_seen(paths, [digest(n) for n in range(200, 205)], STAMP)
    odd = "zz" * 32
    with open(ledger_path(paths), "ab") as fh:
        fh.write(json.dumps({"id": odd[:12], "digest": odd, "observed_at": STAMP}).encode() + b"\n")
    at = covered(paths)
    assert ledger._known(paths, [digest(202).hex(), digest(3).hex(), odd]) == {
        digest(202).hex(), digest(3).hex(), odd}
    assert covered(paths) == at  # not merged


def test_a_tail_longer_than_an_eighth_of_the_index_is_read_whole_once_not_merged(tmp_path, monkeypatch):
    """A large filing at once (a tail past an eighth of the index) makes the index again
    from the whole ledger, which then covers every line."""
    paths = fresh_ledger(tmp_path, "home", 40, 0)
    monkeypatch.setattr(ledgerindex, "MERGE_TAIL", 2)
    monkeypatch.setattr(ledgerindex, "_merge_tail", lambda *a: pytest.fail("merged a tail longer than an eighth"))
    ledger.record_seen(paths, [digest(n) for n in range(40, 60)], STAMP)  # 20 past an index of 40
    assert ledger._fresh_of(paths, [digest(55), digest(70)]) == [digest(70)]
    assert covered(paths) == os.path.getsize(ledger_path(paths))
    assert index_keys(paths)[1] == b"".join(sorted(digest(n) for n in range(60)))
