"""A refresh that waited for the read model's lock while another one indexed lines
appended meanwhile reads only what is new after that: it looks at the file again
once it holds the lock (a stat from before the lock took the longer index for a
truncated file and read every line again)."""

from __future__ import annotations

import os
import threading
import time

import orjson

from m1nd.readmodel import store
from m1nd.readmodel.update import BATCH, refresh_file


def lines(n: int, start: int) -> bytes:
    return b"".join(orjson.dumps({"ts": "2026-12-01T09:00:00Z", "agent": "agent-a", "class": "bug",
                                  "repo": "repo-a", "what": f"letter {start + i}"}) + b"\n" for i in range(n))


def test_a_refresh_that_waited_for_the_lock_reads_only_lines_the_other_did_not(tmp_path):
    spool = tmp_path / "spool.jsonl"
    spool.write_bytes(lines(10, 0))
    state = tmp_path / "state"
    first, *_ = store.open_db(str(state))
    with open(spool, "rb") as fh:
        refresh_file(first, str(spool), fh.fileno())
    with open(spool, "ab") as fh:
        fh.write(lines(2 * BATCH, 10))

    inside, go_on = threading.Event(), threading.Event()

    def pausing_check(raws):  # the first batch of the other refresh waits here, holding the lock
        if not inside.is_set():
            inside.set()
            go_on.wait(30)
        return {}

    other, *_ = store.open_db(str(state))
    waiter_con, *_ = store.open_db(str(state))  # opened first: opening writes, and the lock is about to be held
    fh_other = open(spool, "rb")
    holder = threading.Thread(target=refresh_file, args=(other, str(spool), fh_other.fileno(), pausing_check))
    holder.start()
    assert inside.wait(30)

    fh_waiter = open(spool, "rb")
    read = []
    waiter = threading.Thread(target=refresh_file,
                              args=(waiter_con, str(spool), fh_waiter.fileno(), lambda raws: {}, read.append))
    waiter.start()  # takes its stat now, then waits for the lock
    time.sleep(0.5)
    with open(spool, "ab") as fh:  # appended while the other refresh reads: it indexes these too
        fh.write(lines(5, 10 + 2 * BATCH))
    go_on.set()
    holder.join(30)
    waiter.join(30)
    for fh in (fh_other, fh_waiter):
        fh.close()

    size = os.path.getsize(spool)
    row = waiter_con.execute("SELECT offset, lines FROM files").fetchone()
    assert row == (size, 15 + 2 * BATCH)
    assert sum(read) < size // 10, f"the waiting refresh read {sum(read)} of {size} bytes again"
    assert waiter_con.execute("SELECT count(*) FROM letters").fetchone()[0] == 15 + 2 * BATCH
    for con in (first, other, waiter_con):
        con.close()
