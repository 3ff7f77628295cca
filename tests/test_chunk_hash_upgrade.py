"""State kept by a release that hashed chunks with CRC-32 still guards its files.

The chunk hashes are XXH3 now.  A home whose cursor, box indexes, read model and
witnesses hold CRC-32 hashes (8 hex digits) must neither be trusted blindly nor
rebuilt from scratch: its hashes are verified as CRC-32, and replaced by XXH3 ones the
next time each index is kept.  The previous release is this code with CRC-32 put back
in chunks.py (its only difference); every later step is a real process of this one.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import zlib

import orjson
import pytest

from m1nd import chunks
from tests.conftest import run_cli, write_spool

FILLER = "docker login failed: token expired while the auth proxy restarted; see logs " * 4


def _letters(n: int, start: int, **fields) -> list[dict]:
    return [{"ts": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z", "agent": "agent-a", "class": "bug", "tool": "seek",
             "what": f"letter {i:05d}: {FILLER}", **fields} for i in range(start, start + n)]


def _m1nd(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "m1nd", *args], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    return done


def _stored_hashes(home) -> dict[str, list[list[str]]]:
    """Every chunk-hash list the state holds, by where it is kept."""
    state = home / "state"
    found = {"cursor": [orjson.loads((state / "distribute.json").read_bytes())["mark"]["hashes"]]}
    con = sqlite3.connect(state / "readmodel.sqlite3")
    try:
        found["read model"] = [orjson.loads(r[0]) for r in con.execute("SELECT hashes FROM files WHERE offset > 0")]
    finally:
        con.close()
    found["box index"] = [orjson.loads(p.read_bytes().split(b"\n", 1)[0])["hashes"]
                          for p in (state / "boxes").glob("*.idx")]  # kept once a box needs one
    return found


def _age(*paths) -> None:
    """Times a few seconds back (with a sub-second part): files past the tick in which
    a stat cannot be trusted, as they are a moment after any real write."""
    for path in paths:
        if not path.exists():
            continue
        then = os.stat(path).st_mtime_ns - 5_000_000_000 + 123_457
        os.utime(path, ns=(then, then))


@pytest.fixture
def previous_release_home(m1nd_home, spool_path, make_repo, monkeypatch):
    """A home filed and read by the CRC-32 release: 700 letters (over two chunks of the
    spool) to the medulla box, repo-a's box and the spool (an unknown repository)."""
    repo = make_repo("repo-a")
    write_spool(spool_path, _letters(300, 0) + _letters(200, 300, repo="repo-a") + _letters(200, 500, repo="elsewhere"))
    assert run_cli("roster", "add", str(repo)).code == 0
    with monkeypatch.context() as old:
        old.setattr(chunks, "_hash_chunk", lambda data: f"{zlib.crc32(data):08x}")
        old.setattr(chunks, "_HEX", 8)
        assert run_cli("sweep", "--json").code == 0
        _age(spool_path, m1nd_home / "inbox.jsonl", repo / ".m1nd" / "inbox.jsonl")
        result = run_cli("sweep", "--json")  # files that settled: their hashes are kept
        assert result.code == 0, result.stderr
    chunks._SEEN.clear()  # what that process remembered goes with it
    chunks._MEMO.entries = None
    kept = _stored_hashes(m1nd_home)
    assert all(all(len(x) == 8 for x in h) for lists in kept.values() for h in lists), kept
    assert len(kept["cursor"][0]) >= 2 and len(kept["read model"]) >= 3
    return repo


def test_a_spool_that_only_grew_is_verified_and_its_hashes_become_xxh3(previous_release_home, m1nd_home,
                                                                       spool_path):
    write_spool(spool_path, _letters(5, 700) + _letters(5, 705, repo="elsewhere") + _letters(5, 710, repo="repo-a"))
    _m1nd("sweep", "--json")
    # the cursor read on from where it was (the bytes verified as CRC-32) and keeps XXH3
    # for all of them, not the old hashes of the chunks below with new ones after
    assert all(len(x) == 16 for x in _stored_hashes(m1nd_home)["cursor"][0])
    _age(spool_path, m1nd_home / "inbox.jsonl", previous_release_home / ".m1nd" / "inbox.jsonl")
    _m1nd("sweep", "--json")  # every file grew, and is settled: each index keeps its hashes
    after = _stored_hashes(m1nd_home)
    assert all(all(len(x) == 16 for x in h) for lists in after.values() for h in lists), after
    assert len(after["cursor"][0]) >= 2 and len(after["read model"]) >= 3
    document = _m1nd("--inbox-sweep", "--no-distribute").stdout
    shutil.rmtree(m1nd_home / "state")  # the reference: the same document from the files alone
    assert _m1nd("--inbox-sweep", "--no-distribute").stdout == document
    assert all(f"letter {n:05d}".encode() in document for n in (0, 350, 699, 704, 709, 714))


def test_a_letter_rewritten_in_place_under_crc32_hashes_is_seen_as_a_first_run_sees_it(previous_release_home,
                                                                                      m1nd_home, spool_path):
    # The same length, in place: only the bytes tell.  One letter waits in the spool
    # (the read model indexes it there), one was filed into the medulla box (the cursor
    # must read the spool again to file its new form).
    data = spool_path.read_bytes()
    for n in (10, 550):
        old = f"letter {n:05d}:".encode()
        assert data.count(old) == 1
        data = data.replace(old, f"LETTER {n:05d}:".encode())
    with open(spool_path, "r+b") as fh:
        fh.write(data)
    write_spool(spool_path, _letters(1, 700))
    _m1nd("sweep", "--json")
    document = orjson.loads(_m1nd("--inbox-sweep", "--no-distribute").stdout)
    whats = {letter["what"][:13] for letter in document["letters"]}
    assert {"LETTER 00010:", "LETTER 00550:", "letter 00700:"} <= whats
    assert "letter 00550:" not in whats  # the spool's old form is gone from the read model
    assert "letter 00010:" in whats  # the medulla box keeps what it was given: boxes only grow
    shutil.rmtree(m1nd_home / "state")
    reference = orjson.loads(_m1nd("--inbox-sweep", "--no-distribute").stdout)
    assert {letter["id"] for letter in reference["letters"]} == {letter["id"] for letter in document["letters"]}


def test_a_memo_of_crc32_hashes_is_no_help_and_never_mixed_in(tmp_path, monkeypatch):
    path = tmp_path / "box.jsonl"
    path.write_bytes(b"x" * (3 * chunks.CHUNK))
    settled = 1_600_000_000_123_456_789
    os.utime(path, ns=(settled, settled))
    st = os.stat(path)
    monkeypatch.setattr(chunks._MEMO, "path", str(tmp_path / "memo"))
    monkeypatch.setattr(chunks._MEMO, "entries", {(st.st_dev, st.st_ino): (st.st_size, st.st_mtime_ns,
                                                                           ["0000abcd"] * 3)})
    monkeypatch.setattr(chunks, "_SEEN", {})
    fd = os.open(path, os.O_RDONLY)
    try:
        hashes = chunks.region_hashes(fd, st.st_size)
        assert chunks.same_bytes(fd, st.st_size, hashes)
        assert not chunks.same_bytes(fd, st.st_size, ["0000abcd"] * 3)
    finally:
        os.close(fd)
    assert hashes == [f"{__import__('xxhash').xxh3_64_intdigest(b'x' * chunks.CHUNK):016x}"] * 3


def test_an_earlier_release_cannot_read_this_memo_and_this_one_ignores_theirs(m1nd_home, spool_path):
    import time

    write_spool(spool_path, _letters(2000, 0))  # past three chunks
    then = time.time_ns() - 5_000_000_000 + 123_457
    os.utime(spool_path, ns=(then, then))
    _m1nd("distribute")
    memo = m1nd_home / "state" / chunks.MEMO_NAME
    data = memo.read_bytes()
    # the check an earlier release makes before it trusts the memo's hashes as CRC-32 ones
    assert data[:4] != zlib.crc32(data[4:]).to_bytes(4, "big")
    kept = next(iter(__import__("marshal").loads(data[8:]).values()))
    assert len(kept[2]) >= 3 and chunks.current(kept[2])
    # and theirs, here: CRC-32 before the body, hashes of 8 digits, which must not be used
    body = __import__("marshal").dumps({k: (v[0], v[1], ["0000abcd"] * len(v[2]))
                                        for k, v in __import__("marshal").loads(data[8:]).items()})
    memo.write_bytes(zlib.crc32(body).to_bytes(4, "big") + body)
    _m1nd("sweep", "--json")
    assert chunks.current(orjson.loads((m1nd_home / "state" / "distribute.json").read_bytes())["mark"]["hashes"])
    assert len(memo.read_bytes()) > 8 and memo.read_bytes()[:8] == __import__("xxhash").xxh3_64_digest(
        memo.read_bytes()[8:])


@pytest.mark.parametrize("stored", [5, None, "abc", [1, 2], ["0000abcd", 7], {"a": 1}, ["x" * 16, "y"]],
                         ids=repr)
def test_hashes_a_damaged_state_holds_are_no_match_and_never_an_error(tmp_path, stored):
    path = tmp_path / "box.jsonl"
    path.write_bytes(b"y" * (chunks.CHUNK + 10))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert chunks.same_bytes(fd, chunks.CHUNK + 10, stored) is False
        assert chunks.current(stored) is False
    finally:
        os.close(fd)


def test_a_read_model_whose_hashes_were_damaged_indexes_the_file_again(previous_release_home, m1nd_home,
                                                                       spool_path):
    con = sqlite3.connect(m1nd_home / "state" / "readmodel.sqlite3")
    try:
        with con:
            con.execute("UPDATE files SET hashes = '[1, 2]' WHERE offset > 0")
    finally:
        con.close()
    write_spool(spool_path, _letters(3, 720, repo="elsewhere"))
    document = _m1nd("--inbox-sweep", "--no-distribute").stdout
    shutil.rmtree(m1nd_home / "state")
    assert _m1nd("--inbox-sweep", "--no-distribute").stdout == document


@pytest.mark.parametrize("damage", ["notjson", "[1, 2]", '"x"', "5"])
def test_a_witness_index_whose_hashes_were_damaged_is_rebuilt_never_an_error(previous_release_home, m1nd_home,
                                                                            spool_path, damage):
    _m1nd("cases")
    con = sqlite3.connect(m1nd_home / "state" / "readmodel.sqlite3")
    try:
        with con:
            damaged = con.execute("UPDATE case_files SET hashes = ?", (damage,)).rowcount
    finally:
        con.close()
    assert damaged >= 1
    write_spool(spool_path, _letters(3, 730, repo="repo-a"))
    for command in (["sweep"], ["distribute"], ["cases"]):
        _m1nd(*command)  # exit 0, or the assertion inside says what it printed
    document = _m1nd("--inbox-sweep", "--no-distribute").stdout
    shutil.rmtree(m1nd_home / "state")
    assert _m1nd("--inbox-sweep", "--no-distribute").stdout == document
