"""Concurrent writers and distributors as real processes (contract section 9):
any number of them never lose, merge or duplicate a letter."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

from conftest import run_script, write_spool
from m1nd.letters import letter_id, read_file

WRITERS = 4
LETTERS_PER_WRITER = 25
DISTRIBUTORS = 3
DESTINATIONS = ("repo-a", "repo-b", "all")


def m1nd(*args: str, cwd) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "m1nd", *args], cwd=cwd, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def box_lines(path: Path) -> list[bytes]:
    if not path.exists():
        return []
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\n"), f"{path} does not end in a newline"
    return data[:-1].split(b"\n") if data else []


def test_concurrent_writers_and_distributors_file_every_letter_exactly_once(make_repo, cli, tmp_path, m1nd_home,
                                                                           spool_path):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    assert cli("roster", "add", str(a)).code == 0
    assert cli("roster", "add", str(b)).code == 0
    work = tmp_path / "work"

    failures: list[str] = []
    written: dict[str, tuple[str, bytes]] = {}  # id → (destination, what)
    lock = threading.Lock()
    writers_done = threading.Event()

    def writer(w: int) -> None:
        for i in range(LETTERS_PER_WRITER):
            dest = DESTINATIONS[(w + i) % 3]
            what = f"writer {w} letter {i}"
            # Some letters are long (over PIPE_BUF and a page) so a torn write would show.
            snippet = ("x" * (5000 + 97 * i)) if i % 4 == 0 else f"s{i}"
            proc = m1nd("write", "--repo", dest, "--what", what, "--snippet", snippet, "--agent", f"agent-{w}",
                        cwd=work)
            out, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                failures.append(f"write {what}: {proc.returncode} {err.decode()}")
                continue
            with lock:
                written[out.decode().strip()] = (dest, what)

    rounds = [0] * DISTRIBUTORS

    def distributor(d: int) -> None:
        cwd = a if d == 0 else work  # one of them runs inside repo-a (repo-a is then its bound root)
        while True:
            last = writers_done.is_set()
            proc = m1nd("distribute", cwd=cwd)
            out, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                failures.append(f"distribute {d}: {proc.returncode} {err.decode()}")
            rounds[d] += 1
            if last:
                return

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    threads += [threading.Thread(target=distributor, args=(d,)) for d in range(DISTRIBUTORS)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads[:WRITERS]:
        t.join()
    writers_done.set()
    for t in threads[WRITERS:]:
        t.join()
    assert not failures, failures
    assert all(r >= 2 for r in rounds), rounds
    assert time.monotonic() - started < 60

    final = run_script("distribute", "--json", cwd=work)
    assert final.returncode == 0, final.stderr
    receipt = orjson.loads(final.stdout)
    total = WRITERS * LETTERS_PER_WRITER
    assert receipt["spool_total"] == total
    assert receipt["appended"] == 0  # the looping distributors already filed everything
    assert len(written) == total

    # The spool: one whole line per write, nothing merged, torn or lost.
    spool = read_file(str(spool_path))
    assert spool.malformed == [] and spool.unfinished_tail is None
    assert sorted(l.id for _, l in spool.letters) == sorted(written)
    assert spool_path.read_bytes().count(b"\n") == total

    # Every box: each of its letters exactly once, every line whole.
    boxes = {"repo-a": a / ".m1nd" / "inbox.jsonl", "repo-b": b / ".m1nd" / "inbox.jsonl",
             "all": m1nd_home / "inbox.jsonl"}
    for dest, path in boxes.items():
        lines = box_lines(path)
        for line in lines:
            assert orjson.loads(line)["repo"] == dest  # parses: not torn, not merged
        ids = [letter_id(line) for line in lines]
        assert len(ids) == len(set(ids)), f"{dest}: a letter was filed twice"
        assert set(ids) == {i for i, (d, _) in written.items() if d == dest}, dest

    doc = orjson.loads(run_script("--inbox-sweep", "--no-distribute", cwd=work).stdout)
    assert doc["total"] == total
    assert sorted(l["id"] for l in doc["letters"]) == sorted(written)


def test_distributors_started_together_on_a_full_spool_file_each_letter_once(make_repo, cli, tmp_path, m1nd_home,
                                                                            spool_path):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    assert cli("roster", "add", str(a)).code == 0
    assert cli("roster", "add", str(b)).code == 0
    letters = [{"repo": DESTINATIONS[i % 3], "what": f"letter {i}", "snippet": "y" * (i % 700)} for i in range(3000)]
    write_spool(spool_path, letters)
    work = tmp_path / "work"
    procs = [m1nd("distribute", "--json", cwd=a if i == 0 else work) for i in range(4)]
    receipts = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        receipts.append(orjson.loads(out))
    assert sum(r["appended"] for r in receipts) == 3000
    assert all(r["spool_total"] == 3000 for r in receipts)
    for dest, path in (("repo-a", a / ".m1nd" / "inbox.jsonl"), ("repo-b", b / ".m1nd" / "inbox.jsonl"),
                       ("all", m1nd_home / "inbox.jsonl")):
        lines = box_lines(path)
        assert len(lines) == 1000, dest
        assert len({letter_id(l) for l in lines}) == 1000, dest
        assert all(orjson.loads(l)["repo"] == dest for l in lines)


def test_hand_appends_racing_a_distributor_are_all_filed_once_even_when_split_mid_line(
    cli, tmp_path, m1nd_home, spool_path
):
    # Agents may append to the spool by hand, some in more than one write: a
    # distributor reading meanwhile sees an unfinished tail and must wait for the rest.
    spool_path.parent.mkdir(parents=True)
    spool_path.write_bytes(b"")
    work = tmp_path / "work"
    stop = threading.Event()
    errors: list[str] = []
    rounds = [0]

    def distribute_loop() -> None:
        while not stop.is_set():
            done = run_script("distribute", cwd=work)
            if done.returncode != 0:
                errors.append(done.stderr.decode())
            rounds[0] += 1

    loop = threading.Thread(target=distribute_loop)
    loop.start()
    expected = []
    try:
        i = 0
        while i < 300 or rounds[0] < 4:
            raw = orjson.dumps({"repo": "all", "what": f"by hand {i}", "snippet": "z" * (i * 13 % 6000)})
            expected.append(letter_id(raw))
            line = raw + b"\n"
            cut = len(line) // 2 if i % 7 == 0 else len(line)
            fd = os.open(spool_path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, line[:cut])
                if cut < len(line):
                    time.sleep(0.01)
                    os.write(fd, line[cut:])
            finally:
                os.close(fd)
            i += 1
    finally:
        stop.set()
        loop.join()
    assert not errors, errors
    assert run_script("distribute", cwd=work).returncode == 0
    lines = box_lines(m1nd_home / "inbox.jsonl")
    assert all(orjson.loads(l)["repo"] == "all" for l in lines)  # no half line was ever filed
    ids = [letter_id(l) for l in lines]
    assert sorted(ids) == sorted(expected)
    assert len(ids) == len(set(ids))
