"""The reports' durable records under `<home>/records/reports/`:

    <profile>/state.json     cursor, committed runs, outbox, receipts (one atomic file)
    <profile>/alerts.jsonl   digests of letters already alerted
    runs/<run_id>/           a frozen report: head.json, page-NNNN.json, digests.txt,
                             manifest.json (written last; the directory is renamed
                             into place only when complete)

Everything here fails closed: a file that exists but cannot be read or parsed is an
error, never taken as empty.  Writers of one profile hold its OS advisory lock.

A profile's state and alert record are here; frozen runs are runs.py's, the
directories and canonical JSON records.py's (each name is also asked of this module).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field

import orjson

from m1nd.errors import M1ndError
from m1nd.fsutil import atomic_write, lock_for
from m1nd.paths import Paths, ensure_dir, ensure_home
from m1nd.reports.records import (  # noqa: F401  (asked of this module)
    _read_bytes, canonical, profile_dir, reports_dir, run_dir, runs_dir, sha256)
from m1nd.reports.runs import PAGES, TRIGGERS, Frozen, Tampered, load_frozen, report_digest, write_frozen  # noqa: F401

STATE_SCHEMA = "m1nd-report-state-v1"


@dataclass
class State:
    cursor: str | None = None
    committed: list[str] = field(default_factory=list)  # scheduled and manual runs, commit order
    # "RUN_ID SINK": a committed report waiting for that sink (a run id alone: committed,
    # its sink not yet bound, so the profile's own sink takes it)
    outbox: list[str] = field(default_factory=list)
    receipts: list[dict] = field(default_factory=list)
    # Every ledger entry before this byte offset is accounted for by a committed
    # scheduled report (itemized, counted as not itemized, or not this profile's),
    # and so is every digest in accounted_after.
    ledger_offset: int = 0
    accounted_after: list[str] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)  # "RUN_ID SINK": failed deliveries so far
    # Exception updates: the ledger offset the last report or update scanned for
    # triggers, when the last update went out, and when the last report or update did.
    update_offset: int = 0
    last_update: str | None = None
    last_report: str | None = None
    # the spool's size when triggers were last looked for: a letter an agent appended
    # and nothing has filed yet is a trigger too (the scan records it in the ledger)
    spool_seen: int = 0

    def as_json(self) -> dict:
        return {"schema": STATE_SCHEMA, "cursor": self.cursor, "committed": self.committed,
                "outbox": self.outbox, "receipts": self.receipts, "ledger_offset": self.ledger_offset,
                "accounted_after": self.accounted_after, "attempts": self.attempts,
                "update_offset": self.update_offset, "last_update": self.last_update, "last_report": self.last_report,
                "spool_seen": self.spool_seen}

    def failed(self, max_attempts: int) -> list[str]:
        """Outbox reports a sink has refused `max_attempts` times: they wait for --retry."""
        return sorted({k.split(" ", 1)[0] for k, n in self.attempts.items()
                       if n >= max_attempts and k in self.outbox})

    def outbox_runs(self) -> list[str]:
        """The run ids waiting in the outbox, once each, in queue order."""
        return list(dict.fromkeys(outbox_entry(e)[0] for e in self.outbox))


def outbox_entry(entry: str) -> tuple[str, str | None]:
    """(run id, the sink it waits for, or None when not bound yet)."""
    run_id, _, sink = entry.partition(" ")
    return run_id, sink or None


def load_state(paths: Paths, profile: str) -> State:
    path = os.path.join(profile_dir(paths, profile), "state.json")
    data = _read_bytes(path, "report state")
    if data is None:
        return State()
    try:
        obj = orjson.loads(data)
        if obj.get("schema") != STATE_SCHEMA:
            raise ValueError
        state = State(obj["cursor"], list(obj["committed"]), list(obj["outbox"]), list(obj["receipts"]),
                      obj["ledger_offset"], list(obj["accounted_after"]), dict(obj.get("attempts", {})),
                      # a state from before updates: its cadence offset is where triggers were last seen
                      obj.get("update_offset", obj["ledger_offset"]), obj.get("last_update"), obj.get("last_report"),
                      obj.get("spool_seen", 0))
        if type(state.update_offset) is not int or state.update_offset < 0:
            raise ValueError
        if type(state.spool_seen) is not int or state.spool_seen < 0:
            raise ValueError
        if not all(v is None or isinstance(v, str) for v in (state.last_update, state.last_report)):
            raise ValueError
        if not all(isinstance(e, str) for e in state.outbox):
            raise ValueError
        if not all(isinstance(k, str) and type(n) is int for k, n in state.attempts.items()):
            raise ValueError
        if state.cursor is not None and not isinstance(state.cursor, str):
            raise ValueError
        if type(state.ledger_offset) is not int or state.ledger_offset < 0:
            raise ValueError
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError):
        raise M1ndError(f"report state {path} is damaged: refusing to go on (it is never taken as empty)") from None
    return state


def save_state(paths: Paths, profile: str, state: State) -> None:
    directory = profile_dir(paths, profile)
    ensure_dir(directory)
    atomic_write(os.path.join(directory, "state.json"), canonical(state.as_json()) + b"\n")


@contextmanager
def profile_lock(paths: Paths, profile: str):
    ensure_home(paths)
    with lock_for(paths.locks, "report", profile):
        yield


def load_alerted(paths: Paths, profile: str) -> set[str]:
    path = os.path.join(profile_dir(paths, profile), "alerts.jsonl")
    data = _read_bytes(path, "alert record")
    if data is None:
        return set()
    whole = data[: data.rfind(b"\n") + 1]  # an append cut short by a crash recorded nothing
    out = set()
    for number, line in enumerate(whole.split(b"\n")[:-1], 1):
        if len(line) != 64 or not all(c in b"0123456789abcdef" for c in line):
            raise M1ndError(f"alert record {path} is damaged at line {number}: refusing to go on")
        out.add(line.decode())
    return out


def add_alerted(paths: Paths, profile: str, digests: list[str]) -> None:
    if not digests:
        return
    directory = profile_dir(paths, profile)
    ensure_dir(directory)
    path = os.path.join(directory, "alerts.jsonl")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size:
            os.lseek(fd, size - 1, os.SEEK_SET)
            last = os.pread(fd, 1, size - 1)
            if last != b"\n":
                whole = _read_bytes(path, "alert record") or b""
                os.ftruncate(fd, whole.rfind(b"\n") + 1)
        os.write(fd, b"".join(d.encode() + b"\n" for d in digests))
        os.fsync(fd)
    finally:
        os.close(fd)
