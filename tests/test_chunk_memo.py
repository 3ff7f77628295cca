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
    path = _file(tmp_path, b"a")  # just written: too recent to remember
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
