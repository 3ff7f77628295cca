"""The reports' durable records under `<home>/records/reports/`:

    <profile>/state.json     cursor, committed runs, outbox, receipts (one atomic file)
    <profile>/alerts.jsonl   digests of letters already alerted
    runs/<run_id>/           a frozen report: head.json, page-NNNN.json, digests.txt,
                             manifest.json (written last; the directory is renamed
                             into place only when complete)

Everything here fails closed: a file that exists but cannot be read or parsed is an
error, never taken as empty.  Writers of one profile hold its OS advisory lock.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import orjson

from m1nd.errors import M1ndError
from m1nd.fsutil import atomic_write, fsync_dir, lock_for
from m1nd.ledger import records_dir
from m1nd.paths import Paths, ensure_dir, ensure_home

STATE_SCHEMA = "m1nd-report-state-v1"


def canonical(obj) -> bytes:
    """Canonical JSON: keys sorted, no whitespace, UTF-8 (a path that is not: `\\xNN` escapes)."""
    from m1nd.jsonout import record

    return record(obj, option=orjson.OPT_SORT_KEYS)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def reports_dir(paths: Paths) -> str:
    return os.path.join(records_dir(paths), "reports")


def runs_dir(paths: Paths) -> str:
    return os.path.join(reports_dir(paths), "runs")


def run_dir(paths: Paths, run_id: str) -> str:
    return os.path.join(runs_dir(paths), run_id)


def profile_dir(paths: Paths, profile: str) -> str:
    return os.path.join(reports_dir(paths), profile)


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


def _read_bytes(path: str, what: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise M1ndError(f"cannot read {what} {path}: {exc.strerror}") from None


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


# -- frozen runs -------------------------------------------------------------

@dataclass(frozen=True)
class Frozen:
    """A frozen run, checked against its manifest.  Its pages stay on disk: they are
    read one at a time (`iter_pages`, `iter_entries`), so a report of a million
    letters is rendered in the memory of one page."""

    run_id: str
    dir: str
    manifest: dict
    head: dict

    @property
    def digest(self) -> str:
        return self.manifest["digest"]

    def iter_pages(self) -> Iterator[dict]:
        with open(os.path.join(self.dir, PAGES), "rb") as fh:
            for line in fh:
                yield orjson.loads(line)

    def iter_entries(self) -> Iterator[dict]:
        for page in self.iter_pages():
            yield from page["entries"]

    @property
    def pages(self) -> list[dict]:
        return list(self.iter_pages())

    @property
    def entries(self) -> list[dict]:
        return list(self.iter_entries())

    @property
    def digests(self) -> list[str]:
        """Every ledger digest this run accounts for."""
        with open(os.path.join(self.dir, "digests.txt"), "rb") as fh:
            return fh.read().decode().split()


def report_digest(head_digest: str, page_digests: list[str]) -> str:
    return sha256(canonical({"head": head_digest, "pages": page_digests}))


PAGES = "pages.jsonl"  # one canonical JSON page per line, each with its own digest


def write_frozen(paths: Paths, run_id: str, head: dict, pages: Iterable[dict | bytes], digests: Iterable[str],
                 crash=None) -> str:
    """Write a frozen run: every file first, the manifest last, then rename the
    directory into place.  A crash leaves at most a temporary directory.  `pages`
    (dicts, or their canonical bytes) and `digests` are streamed: neither is held."""
    ensure_dir(runs_dir(paths))
    final = run_dir(paths, run_id)
    tmp = os.path.join(runs_dir(paths), f".tmp-{run_id}-{os.getpid()}")
    import shutil

    if os.path.isdir(tmp):
        shutil.rmtree(tmp)
    if os.path.isdir(final):
        shutil.rmtree(final)  # an earlier freeze of this run that did not verify (never committed)
    os.makedirs(tmp, mode=0o700)
    head_bytes = canonical(head)
    atomic_write(os.path.join(tmp, "head.json"), head_bytes)
    page_digests = []
    with open(os.path.join(tmp, PAGES), "wb") as fh:
        for i, page in enumerate(pages):
            line = page if isinstance(page, bytes) else canonical(page)
            page_digests.append(sha256(line))
            fh.write(line + b"\n")
            if crash and i == 0:
                fh.flush()
                crash("freeze-page")
        fh.flush()
        os.fsync(fh.fileno())
    listed = hashlib.sha256()
    with open(os.path.join(tmp, "digests.txt"), "wb") as fh:
        for d in digests:
            line = d.encode() + b"\n"
            listed.update(line)
            fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    if crash:
        crash("freeze-before-manifest")
    head_digest = sha256(head_bytes)
    manifest = {
        "schema": "m1nd-report-manifest-v1",
        "run_id": run_id,
        "head": head_digest,
        "pages": page_digests,
        "digests_txt": listed.hexdigest(),
        "digest": report_digest(head_digest, page_digests),
    }
    atomic_write(os.path.join(tmp, "manifest.json"), canonical(manifest))
    fsync_dir(tmp)
    os.rename(tmp, final)
    fsync_dir(runs_dir(paths))
    return final


class Tampered(M1ndError):
    """A frozen report whose files do not match its manifest."""


def _tampered(run_id: str, what: str) -> M1ndError:
    return Tampered(f"frozen report {run_id}: {what}: refusing to go on")


def load_frozen(paths: Paths, run_id: str) -> Frozen | None:
    """A frozen run, every file checked against its manifest; None when there is none.

    A manifest that exists but does not match its files fails closed.
    """
    directory = run_dir(paths, run_id)
    data = _read_bytes(os.path.join(directory, "manifest.json"), "report manifest")
    if data is None:
        return None
    try:
        manifest = orjson.loads(data)
        head_digest, page_digests = manifest["head"], list(manifest["pages"])
        if manifest["run_id"] != run_id or not all(isinstance(d, str) for d in page_digests):
            raise ValueError
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError):
        raise _tampered(run_id, "the manifest is damaged") from None
    if manifest.get("digest") != report_digest(head_digest, page_digests):
        raise _tampered(run_id, "the manifest's digest does not cover its pages")

    def checked(name: str, want: str) -> bytes:
        blob = _read_bytes(os.path.join(directory, name), "report file")
        if blob is None:
            raise _tampered(run_id, f"{name} is missing")
        if sha256(blob) != want:
            raise _tampered(run_id, f"{name} does not match its digest")
        return blob

    head = orjson.loads(checked("head.json", head_digest))
    entries = 0
    try:
        fh = open(os.path.join(directory, PAGES), "rb")
    except FileNotFoundError:
        raise _tampered(run_id, f"{PAGES} is missing") from None
    except OSError as exc:
        raise M1ndError(f"cannot read report file {os.path.join(directory, PAGES)}: {exc.strerror}") from None
    with fh:  # one page at a time: a large report is never held whole
        count, last = 0, b""
        for block in iter(lambda: fh.read(1 << 20), b""):
            count += block.count(b"\n")
            last = block[-1:]
        count += 1 if last not in (b"", b"\n") else 0  # a last line with no newline is a page too
        if count < len(page_digests):
            raise _tampered(run_id, f"page {count + 1} is missing")
        if count > len(page_digests):
            raise _tampered(run_id, f"page {len(page_digests) + 1} is not in the manifest")
        fh.seek(0)
        for number, line in enumerate(fh, 1):
            line = line[:-1] if line.endswith(b"\n") else line
            if sha256(line) != page_digests[number - 1]:
                raise _tampered(run_id, f"page {number} does not match its digest")
            entries += len(orjson.loads(line)["entries"])  # a page that matches its digest parses
    listed = hashlib.sha256()
    try:
        with open(os.path.join(directory, "digests.txt"), "rb") as dh:
            for block in iter(lambda: dh.read(1 << 20), b""):
                listed.update(block)
    except FileNotFoundError:
        raise _tampered(run_id, "digests.txt is missing") from None
    except OSError as exc:
        raise M1ndError(f"cannot read report file {os.path.join(directory, 'digests.txt')}: {exc.strerror}") from None
    if listed.hexdigest() != manifest["digests_txt"]:
        raise _tampered(run_id, "digests.txt does not match its digest")
    if head.get("pages") != count or head.get("entries") != entries:
        raise _tampered(run_id, "the head's counts do not match its pages")
    return Frozen(run_id, directory, manifest, head)
