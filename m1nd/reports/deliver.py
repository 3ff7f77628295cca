"""Deliver (reports contract section 4): hand each outbox report to its sink, clear
the outbox entry only on success, record a receipt.

Sinks: a directory (artifacts written atomically, the sink manifest last, then read
back and checked: `verified: true`) or `exec:CMD` (the Markdown on stdin, delivered
when it exits 0 within its timeout: `verified: false`, since nothing can be read back).
Each delivery has an idempotency key derived from the run and the sink (given to a
command as M1ND_REPORT_KEY): a directory already holding the run's artifacts is not
written again; a command that may have run before a crash is told the same key.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Iterator

import orjson

from m1nd.clock import stamp
from m1nd.errors import M1ndError, UsageError
from m1nd.fsutil import atomic_write, atomic_write_parts
from m1nd.paths import Paths, absolute, ensure_dir
from m1nd.reports import store
from m1nd.reports.faults import crash
from m1nd.reports.formats import streams

DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Sink:
    kind: str  # dir | exec
    target: str  # absolute directory, or the command

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.target}"


def parse_sink(text: str | None, paths: Paths) -> Sink:
    if not text:
        return Sink("dir", os.path.join(paths.home, "reports"))
    if text.startswith("exec:"):
        command = text[5:].strip()
        if not command:
            raise UsageError("exec: sink needs a command, e.g. 'exec:mail -s report owner@example.invalid'")
        return Sink("exec", command)
    return Sink("dir", absolute(text))


def sink_named(name: str) -> Sink:
    """The sink an outbox entry names (`Sink.name`: `dir:PATH` or `exec:COMMAND`)."""
    kind, _, target = name.partition(":")
    return Sink(kind, target)


def idempotency_key(run_id: str, sink: Sink) -> str:
    return store.sha256(f"{run_id}\n{sink.name}".encode())[:32]


MAX_TIMEOUT = 86400  # a day: a sink that takes longer is not coming back


def timeout_seconds() -> float:
    text = os.environ.get("M1ND_REPORT_TIMEOUT")
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"M1ND_REPORT_TIMEOUT must be a number of seconds, not {text!r}") from None
    if not 0 < value <= MAX_TIMEOUT:  # NaN and infinity too
        raise UsageError(f"M1ND_REPORT_TIMEOUT must be more than 0 and at most {MAX_TIMEOUT} seconds (not {text!r})")
    return value


class SinkFailed(Exception):
    pass


class Staged:
    """A report's artifacts rendered once, each into an unnamed temporary file beside
    the frozen runs (never all in memory), with their digests."""

    def __init__(self, paths: Paths, frozen: store.Frozen) -> None:
        self.files: dict[str, object] = {}
        self.want: dict[str, str] = {}
        try:
            for name, chunks in streams(frozen):
                fh = self.files[name] = tempfile.TemporaryFile(dir=store.runs_dir(paths))
                digest = hashlib.sha256()
                for chunk in chunks:
                    digest.update(chunk)
                    fh.write(chunk)
                fh.flush()
                self.want[name] = digest.hexdigest()
        except BaseException:
            self.close()
            raise

    def chunks(self, name: str) -> Iterator[bytes]:
        fh = self.files[name]
        fh.seek(0)
        yield from iter(lambda: fh.read(CHUNK), b"")

    def close(self) -> None:
        for fh in self.files.values():
            fh.close()


CHUNK = 1 << 20


def _digest_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _to_directory(sink: Sink, frozen: store.Frozen, staged: Staged, key: str) -> bool:
    """Write and verify; True when the artifacts were already there (nothing written)."""
    try:
        ensure_dir(sink.target)
    except OSError as exc:
        raise SinkFailed(f"cannot create {sink.target}: {exc.strerror}") from None
    run_id = frozen.run_id
    want = staged.want
    manifest = {"run_id": run_id, "key": key, "digest": frozen.digest, "artifacts": want}
    manifest_bytes = orjson.dumps(manifest, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    manifest_path = os.path.join(sink.target, f"{run_id}.manifest.json")

    def read_back() -> bool:
        try:
            with open(manifest_path, "rb") as fh:
                if fh.read() != manifest_bytes:
                    return False
            for name, digest in want.items():
                if _digest_of(os.path.join(sink.target, name)) != digest:
                    return False
        except OSError:
            return False
        return True

    if read_back():
        return True
    try:
        for i, name in enumerate(want):
            atomic_write_parts(os.path.join(sink.target, name), staged.chunks(name), 0o600)
            if i == 0:
                crash("deliver-dir-mid")
        atomic_write(manifest_path, manifest_bytes, mode=0o600)
    except OSError as exc:
        raise SinkFailed(f"cannot write to {sink.target}: {exc.strerror}") from None
    if not read_back():
        raise SinkFailed(f"{sink.target}: the artifacts read back do not match their digests")
    return False


def _to_command(sink: Sink, frozen: store.Frozen, markdown, key: str, timeout: float) -> None:
    """`markdown`: a file holding the Markdown, given to the command as its stdin."""
    env = dict(os.environ, M1ND_REPORT_KEY=key, M1ND_REPORT_RUN_ID=frozen.run_id, M1ND_REPORT_DIGEST=frozen.digest)
    env.pop("M1ND_TEST_CRASH", None)
    markdown.seek(0)
    try:
        proc = subprocess.Popen(["/bin/sh", "-c", sink.target], stdin=markdown, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as exc:
        raise SinkFailed(f"cannot run {sink.target!r}: {exc.strerror}") from None
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise SinkFailed(f"{sink.target!r} did not finish within {timeout:g} s") from None
    if proc.returncode != 0:
        last = (err or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise SinkFailed(f"{sink.target!r} exited {proc.returncode}" + (f": {last[0][:200]}" if last[0] else ""))


@dataclass(frozen=True)
class Delivery:
    run_id: str
    status: str  # delivered | already-delivered | failed
    sink: str
    key: str
    verified: bool
    message: str = ""
    # a delivered report's Markdown, as a file to print from (the report may be large)
    markdown: object = None

    def markdown_chunks(self) -> Iterator[bytes]:
        self.markdown.seek(0)
        yield from iter(lambda: self.markdown.read(CHUNK), b"")

    def as_json(self) -> dict:
        out = {"run_id": self.run_id, "status": self.status, "sink": self.sink, "key": self.key,
               "verified": self.verified}
        if self.message:
            out["message"] = self.message
        return out


def deliver(paths: Paths, profile: str, default: Sink, now, timeout: float | None = None,
            max_attempts: int = 5, retry: str | None = None, to: Sink | None = None) -> list[Delivery]:
    """Deliver every outbox report of one profile, each to the sink it waits for (a
    report not bound to one yet goes to `default`, the profile's sink; `to` sends every
    one there instead).  The caller holds its lock.  A sink is tried at most
    `max_attempts` times per report; then the report is failed and waits in the outbox
    for `retry` (its run id), which starts the count again."""
    state = store.load_state(paths, profile)
    results = []
    if retry is not None:
        if retry not in state.outbox_runs():
            return results
        state.attempts = {k: n for k, n in state.attempts.items() if k.split(" ", 1)[0] != retry}
        store.save_state(paths, profile, state)

    def sink_of(bound: str | None) -> Sink:
        return to or (sink_named(bound) if bound else default)

    for entry in list(state.outbox):
        results.append(_deliver_entry(paths, profile, state, entry, sink_of, now, timeout, max_attempts))
    return results


def _deliver_entry(paths: Paths, profile: str, state: store.State, entry: str, sink_of, now,
                   timeout: float | None, max_attempts: int) -> Delivery:
    """Deliver one outbox report to its sink (`sink_of(the sink it is bound to)`),
    binding it to that sink first; a failure is counted against the sink."""
    run_id, bound = store.outbox_entry(entry)
    sink = sink_of(bound)
    tries = f"{run_id} {sink.name}"
    if entry != tries:  # bound from now on: a failure is counted, and retried, for this sink
        state.outbox[state.outbox.index(entry)] = tries
        state.outbox = list(dict.fromkeys(state.outbox))
        store.save_state(paths, profile, state)
        entry = tries
    key = idempotency_key(run_id, sink)
    if state.attempts.get(tries, 0) >= max_attempts:
        return Delivery(run_id, "failed", sink.name, key, False,
                        f"failed {max_attempts} times: not tried again until "
                        f"`m1nd report deliver --retry {run_id}`")
    try:
        frozen = store.load_frozen(paths, run_id)
        if frozen is None:
            raise M1ndError(f"outbox report {run_id} is missing from {store.runs_dir(paths)}")
    except M1ndError as exc:
        return Delivery(run_id, "failed", sink.name, key, False, exc.message)
    staged = Staged(paths, frozen)
    markdown = staged.files[f"{run_id}.md"]
    try:
        already, verified = _send(sink, frozen, staged, markdown, key, timeout)
    except SinkFailed as exc:
        staged.close()
        state.attempts[tries] = state.attempts.get(tries, 0) + 1
        store.save_state(paths, profile, state)
        left = max_attempts - state.attempts[tries]
        note = f" ({left} tr{'y' if left == 1 else 'ies'} left)" if left else (
            f" (marked failed after {max_attempts} attempts: `m1nd report deliver --retry {run_id}`)")
        return Delivery(run_id, "failed", sink.name, key, False, str(exc) + note)
    crash("deliver-before-receipt")
    head = frozen.head
    state.outbox.remove(entry)
    state.attempts.pop(tries, None)
    state.receipts.append({
        "run_id": run_id, "profile": profile, "kind": head["kind"], "classification": head["classification"],
        "period": head["period"], "sink": sink.name, "key": key, "digest": frozen.digest,
        "verified": verified, "delivered_at": stamp(now),
    })
    store.save_state(paths, profile, state)
    for name, fh in staged.files.items():
        if fh is not markdown:
            fh.close()
    return Delivery(run_id, "already-delivered" if already else "delivered", sink.name, key,
                    verified, markdown=markdown)


def _send(sink: Sink, frozen, staged: Staged, markdown, key: str, timeout: float | None) -> tuple[bool, bool]:
    """(already there, verified): a directory sink is checked, a command's is not."""
    if sink.kind == "dir":
        return _to_directory(sink, frozen, staged, key), True
    _to_command(sink, frozen, markdown, key, timeout or timeout_seconds())
    return False, False
