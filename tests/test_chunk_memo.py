"""The chunk-checksum memo (chunks.region_hashes): one process checks a grown file
once for all its indexes, and never answers for bytes that changed under it."""

from __future__ import annotations

import os
import time

from m1nd import chunks

CHUNK = chunks.CHUNK


def _file(tmp_path, fill: bytes):
    path = tmp_path / "box.jsonl"
    path.write_bytes(fill * (2 * CHUNK))
    return path


def _hashes(path) -> list[str]:
    fd = os.open(path, os.O_RDONLY)
    try:
        return chunks.region_hashes(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _too_recent(path) -> None:
    """The file's time within the last tick, whatever the machine's load: a minute
    ahead (with a sub-second part), so that no process start, however slow, ages it
    past the tick before it is checksummed."""
    ahead = time.time_ns() + 60_000_000_000 + 123_456
    os.utime(path, ns=(ahead, ahead))


def _rewrite_keeping_stat(path, fill: bytes) -> None:
    """Same size, same mtime: what a rewrite within one clock tick looks like."""
    st = os.stat(path)
    path.write_bytes(fill * (2 * CHUNK))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_a_file_settled_for_a_while_is_checksummed_once_per_process(tmp_path):
    path = _file(tmp_path, b"a")
    settled = time.time_ns() - 3_000_000_000 + 123_456  # three seconds ago, with a sub-second part
    os.utime(path, ns=(settled, settled))
    first = _hashes(path)
    _rewrite_keeping_stat(path, b"b")
    assert _hashes(path) == first  # remembered: the stat stands for the bytes


def test_a_file_changed_within_the_last_tick_is_read_again(tmp_path):
    path = _file(tmp_path, b"a")
    _too_recent(path)  # just written: too recent to remember
    first = _hashes(path)
    _rewrite_keeping_stat(path, b"b")
    assert _hashes(path) != first


def test_whole_second_times_wait_two_seconds_before_the_stat_is_trusted(tmp_path):
    path = _file(tmp_path, b"a")
    coarse = (time.time_ns() // 1_000_000_000 - 1) * 1_000_000_000  # a file system that keeps seconds
    os.utime(path, ns=(coarse, coarse))
    first = _hashes(path)
    _rewrite_keeping_stat(path, b"b")
    assert _hashes(path) != first


def test_a_rewrite_of_the_same_size_after_the_memo_was_made_is_seen(tmp_path):
    path = _file(tmp_path, b"a")
    time.sleep(0.1)  # settled on a file system with fine times
    first = _hashes(path)
    path.write_bytes(b"b" * (2 * CHUNK))  # a real rewrite: the file system gives it a new time
    assert _hashes(path) != first


# -- kept between processes (<home>/state/chunk-memo) ---------------------------------

MEMO_SCRIPT = """
import os, sys
from m1nd import chunks
chunks.keep_in(sys.argv[1])
fd = os.open(sys.argv[2], os.O_RDONLY)
print(",".join(chunks.region_hashes(fd, os.fstat(fd).st_size)))
"""


def _hashes_in_a_new_process(state, path) -> list[str]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", MEMO_SCRIPT, str(state), str(path)], capture_output=True,
                          timeout=60, check=True)
    return done.stdout.decode().strip().split(",")


def _settled_file(tmp_path, fill: bytes):
    path = _file(tmp_path, fill)
    settled = time.time_ns() - 3_000_000_000 + 123_456
    os.utime(path, ns=(settled, settled))
    return path


def test_the_next_process_takes_a_settled_files_checksums_from_the_memo_without_reading_it(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    path = _settled_file(tmp_path, b"a")
    first = _hashes_in_a_new_process(state, path)
    assert (state / chunks.MEMO_NAME).is_file()
    _rewrite_keeping_stat(path, b"b")  # only a read would see this: the memo answers
    assert _hashes_in_a_new_process(state, path) == first
    os.unlink(state / chunks.MEMO_NAME)
    assert _hashes_in_a_new_process(state, path) != first  # no memo: the bytes are read


def test_a_file_changed_within_the_last_tick_is_never_kept_for_the_next_process(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    path = _file(tmp_path, b"a")
    _too_recent(path)  # just written
    first = _hashes_in_a_new_process(state, path)
    _rewrite_keeping_stat(path, b"b")
    assert _hashes_in_a_new_process(state, path) != first


def test_a_real_change_after_the_memo_was_kept_is_seen_by_the_next_process(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    path = _settled_file(tmp_path, b"a")
    first = _hashes_in_a_new_process(state, path)
    path.write_bytes(b"b" * (2 * CHUNK))  # a new mtime
    assert _hashes_in_a_new_process(state, path) != first
    with open(path, "ab") as fh:  # grown: the new size is not the memo's
        fh.write(b"c" * CHUNK)
    grown = _hashes_in_a_new_process(state, path)
    assert len(grown) == 3 and grown[:2] != first


def test_a_damaged_memo_is_no_memo(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    path = _settled_file(tmp_path, b"a")
    first = _hashes_in_a_new_process(state, path)
    memo = state / chunks.MEMO_NAME
    good = memo.read_bytes()
    _rewrite_keeping_stat(path, b"b")
    for damaged in (b"", good[:7], good[:4] + b"\x00" * (len(good) - 4), b"\xff" * 64,
                    good[:-1] + bytes([good[-1] ^ 1])):
        memo.write_bytes(damaged)
        assert _hashes_in_a_new_process(state, path) != first  # read again, never a crash
    memo.unlink()
    memo.mkdir()  # not even a file: read, and nothing written
    assert _hashes_in_a_new_process(state, path) != first


def test_the_memo_writes_nothing_where_there_is_no_state_directory(tmp_path):
    path = _settled_file(tmp_path, b"a")
    missing = tmp_path / "no-home" / "state"
    _hashes_in_a_new_process(missing, path)
    assert not (tmp_path / "no-home").exists()


def test_a_memo_that_is_no_regular_file_is_no_memo_and_never_a_hang(tmp_path):
    """A FIFO (opening it would wait for a writer), a link to a device that never ends,
    a file past the size any memo has: each is passed over, and the bytes are read."""
    state = tmp_path / "state"
    state.mkdir()
    path = _settled_file(tmp_path, b"a")
    first = _hashes_in_a_new_process(state, path)
    _rewrite_keeping_stat(path, b"b")
    memo = state / chunks.MEMO_NAME
    memo.unlink()
    os.mkfifo(memo)
    assert _hashes_in_a_new_process(state, path) != first  # subprocess.run's check: it returned
    os.unlink(memo)
    os.symlink("/dev/zero", memo)
    assert _hashes_in_a_new_process(state, path) != first
    os.unlink(memo)
    with open(memo, "wb") as fh:
        fh.truncate(chunks.MEMO_MAX_BYTES + 1)
    assert _hashes_in_a_new_process(state, path) != first


def test_threads_that_save_the_memo_at_once_keep_it_whole_and_within_its_bound(tmp_path, monkeypatch):
    """`m1nd serve` answers from several threads: their saves of the memo never fail,
    and the memo stays readable and holds at most KEEP files."""
    import threading

    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setattr(chunks._Memo, "KEEP", 3)
    monkeypatch.setattr(chunks, "_SEEN", {(1, i): ((i, i), [f"{i:08x}"]) for i in range(40)})
    memo = chunks._Memo()
    memo.keep_in(str(state))
    failures = []

    def save_often(first: int) -> None:
        try:
            for n in range(60):
                memo.changed.update((1, (first + n) % 40) for _ in range(2))
                memo.save()
        except Exception as exc:  # noqa: BLE001 - any failure is the finding
            failures.append(exc)

    threads = [threading.Thread(target=save_often, args=(k * 5,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    again = chunks._Memo()
    again.keep_in(str(state))
    kept = again._load()
    assert 0 < len(kept) <= 3 and all(len(v) == 3 for v in kept.values())
