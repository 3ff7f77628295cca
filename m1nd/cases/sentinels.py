"""Absence sentinels (cases.md 4): probes that guard a fix, run only when allowed.

A probe arrives in a letter, and letters arrive by git from other machines, so a
probe is code from elsewhere.  The safety model:

- only a probe whose exact command the local user allowed (`m1nd sentinels allow
  ID`, recorded under `<home>/records/`, never in a repository) ever runs; the grant
  is for that receipt's exact command, so a changed probe is a new, unallowed one;
- the command is split like a shell would split words (`shlex`), and run directly,
  never through a shell: pipes, globs and `$VARS` mean nothing unless the allowed
  command itself starts a shell (`sh -c '...'`), in plain sight;
- a grant binds the command to the one repository it was allowed in (its real path):
  the same receipt copied into another box, or a box whose root moved, is not allowed
  there; probes in the medulla box never run;
- it runs in that repository's work tree, with stdin closed, in its own process group,
  with a minimal environment (PATH without empty, relative or in-repository entries,
  so a file committed in the repository never shadows a program; HOME; LANG/LC_ALL
  `C.UTF-8`; TZ `UTC`), and is killed with its whole group at the timeout (60 s);
- a probe holding a NUL or a control character is refused at `allow` and never run;
- exit 0 is green; anything else, a timeout included, is red.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from datetime import datetime

from m1nd import boxes
from m1nd.cases import engine, records
from m1nd.cases import fingerprints as fps
from m1nd.cases.escalation import overlay_of
from m1nd.cases.overlay import GREEN, NOT_ALLOWED, RED, Receipt
from m1nd.cases.source import Cases, open_cases
from m1nd.clock import parse_now
from m1nd.errors import M1ndError, UsageError
from m1nd.run import Run
from m1nd.safetext import safe

DEFAULT_TIMEOUT = 60.0
OUTPUT_KEPT = 400  # characters of a probe's output kept with its last result


def argv_of(probe: str) -> list[str]:
    """The probe's argv, or UsageError when it does not split into words or holds a
    NUL or a control or bidi character (a disguised command)."""
    if safe(probe, "\n", "\t") != probe or "\n" in probe or "\t" in probe:
        raise UsageError(f"the probe holds a control character: {safe(probe)}")
    try:
        argv = shlex.split(probe)
    except ValueError as exc:
        raise UsageError(f"the probe does not split into words ({exc}): {probe!r}") from None
    if not argv:
        raise UsageError("the probe is empty")
    return argv


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def safe_path(cwd: str) -> str:
    """The user's PATH without empty, relative or in-repository entries."""
    root = os.path.realpath(cwd)
    kept = [entry for entry in (os.environ.get("PATH") or os.defpath).split(os.pathsep)
            if os.path.isabs(entry) and not _inside(os.path.realpath(entry), root)]
    return os.pathsep.join(dict.fromkeys(kept))


def minimal_env(cwd: str) -> dict[str, str]:
    return {
        "PATH": safe_path(cwd),
        "HOME": os.environ.get("HOME") or "/",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
    }


@dataclass(frozen=True)
class ProbeRun:
    status: str  # green | red
    exit: int | None  # None: killed at the timeout, or could not start
    timed_out: bool
    output: str


def run_probe(probe: str, cwd: str, timeout: float) -> ProbeRun:
    argv = argv_of(probe)
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=minimal_env(cwd), stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
        except (OSError, ValueError) as exc:
            return ProbeRun(RED, None, False, f"could not start: {getattr(exc, 'strerror', None) or exc}")
        timed_out = False
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            code = None
        out.seek(0)
        text = out.read(64 * 1024).decode("utf-8", "replace")
    if timed_out:
        text = (text + f"\n(killed after {timeout:g} s)").strip()
    return ProbeRun(GREEN if code == 0 else RED, code, timed_out, text[-OUTPUT_KEPT:])


@dataclass(frozen=True)
class Guard:
    fingerprint: str
    receipt: Receipt
    probe: str


def guards(cases: Cases) -> list[Guard]:
    """The probe of every case whose receipt (the case's latest) is `fixed` with a sentinel."""
    overlay = overlay_of(cases)
    found = []
    for entry in overlay.entries:
        if entry.case and entry.case.receipt.probe is not None:
            found.append(Guard(entry.fingerprint, entry.case.receipt, entry.case.receipt.probe))
    return sorted(found, key=lambda g: (g.receipt.id, g.receipt.digest))


def allow(run: Run, prefix: str, now: datetime | None = None) -> Guard:
    """Record the exact command of receipt PREFIX's probe under the home."""
    with open_cases(run) as cases:
        candidates = [g for g in guards(cases) if g.receipt.id.startswith(prefix)]
    if len(prefix) < 4 or any(c not in "0123456789abcdef" for c in prefix):
        raise UsageError(f"not a receipt id: {prefix!r} (12 hex characters, or a unique prefix of 4 or more)")
    ids = sorted({g.receipt.id for g in candidates})
    if not candidates:
        raise M1ndError(f"no case receipt with a sentinel has id {prefix} (m1nd sentinels run lists them)",
                        exit_code=3)
    if len(candidates) > 1:
        raise UsageError(f"id prefix {prefix} is ambiguous: {', '.join(ids)}")
    guard = candidates[0]
    argv_of(guard.probe)  # a probe that cannot be run is never allowed
    with open_cases(run) as cases:
        where = _where(cases, guard.receipt)
    if where is None:
        raise M1ndError(f"receipt {guard.receipt.id}'s probe would run nowhere: its box is not a repository here "
                        "(probes in the medulla box never run)")
    real = os.path.realpath(where)
    if not _utf8(real):  # a grant names its repository exactly: an escaped spelling could name another
        raise M1ndError(f"receipt {guard.receipt.id}'s probe would run in {os.fsencode(real)!r}, which is not a "
                        "UTF-8 path: grants keep UTF-8 paths (rename the directory to allow it)")
    allowed = records.allowlist(run.paths)
    from m1nd.clock import stamp

    allowed[guard.receipt.digest] = {"id": guard.receipt.id, "probe": guard.probe, "root": real,
                                     "fingerprint": guard.fingerprint, "allowed_at": stamp(now or parse_now())}
    records.save(run.paths, records.ALLOW, "allowed", allowed)
    return guard


@dataclass(frozen=True)
class Result:
    guard: Guard
    status: str  # green | red | not_allowed
    note: str  # why not allowed, or the first line of a red probe's output
    filed: str | None  # the regression letter filed by this run
    where: str | None = None  # the repository the probe runs (or would run) in
    label: str | None = None  # that repository's box label, for the listing

    def as_json(self) -> dict:
        return {"receipt": self.guard.receipt.id, "probe": self.guard.probe, "status": self.status}


@dataclass(frozen=True)
class RunReport:
    results: tuple[Result, ...]
    problems: tuple[str, ...]

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    def as_json(self) -> dict:
        return {"guarded": len(self.results), "green": self.count(GREEN), "red": self.count(RED),
                "not_allowed": self.count(NOT_ALLOWED), "results": [r.as_json() for r in self.results]}


def _where(cases: Cases, receipt: Receipt) -> str | None:
    """The repository a probe runs in: its box's root; None for the medulla box (never run)."""
    run = cases.run
    box = cases.box_of(receipt.digest)
    if box is not None:
        return box.root.path if box.root else None
    route = run.roots.resolve(receipt.brain, receipt.repo)
    return route.root.path if route.root is not None else None


def run_all(run: Run, timeout: float = DEFAULT_TIMEOUT, now: datetime | None = None) -> RunReport:
    moment = now or parse_now()
    day = moment.strftime("%Y-%m-%d")
    allowed = records.allowlist(run.paths)
    last = records.last_runs(run.paths)
    with open_cases(run) as cases:
        results, problems = _run_guards(cases, guards(cases), allowed, last, timeout, day)
    if any(r.status != NOT_ALLOWED for r in results):  # something ran: keep its result
        records.save(run.paths, records.RUNS, "last", last)
    return RunReport(tuple(results), tuple(problems))


def _run_guards(cases: Cases, found: list[Guard], allowed: dict, last: dict, timeout: float, day: str):
    run = cases.run
    results, problems = [], []
    for guard in found:
        receipt = guard.receipt
        grant = allowed.get(receipt.digest)
        cwd = _where(cases, receipt)
        real = os.path.realpath(cwd) if cwd is not None else None
        held_by = cases.box_of(receipt.digest)
        named = held_by.label if held_by is not None and cwd is not None else None
        if cwd is None:
            results.append(Result(guard, NOT_ALLOWED, "in no repository here (probes in the medulla box never run)",
                                  None))
            continue
        if not isinstance(grant, dict) or grant.get("probe") != guard.probe:
            results.append(Result(guard, NOT_ALLOWED, f"not allowed (m1nd sentinels allow {receipt.id})", None,
                                  real, named))
            continue
        if grant.get("root") != real:
            results.append(Result(guard, NOT_ALLOWED, f"allowed in another repository ({grant.get('root')}), not here "
                                  f"(m1nd sentinels allow {receipt.id})", None, real, named))
            continue
        if not os.path.isdir(cwd):
            results.append(Result(guard, NOT_ALLOWED, f"its repository ({receipt.repo}) is not on this machine", None,
                                  real, named))
            continue
        try:
            argv_of(guard.probe)
        except UsageError as exc:
            results.append(Result(guard, NOT_ALLOWED, f"refused: {exc.message}", None, real, named))
            continue
        outcome = run_probe(guard.probe, cwd, timeout)
        last[receipt.digest] = {"probe": guard.probe, "status": outcome.status, "day": day, "exit": outcome.exit,
                                "timed_out": outcome.timed_out, "output": outcome.output}
        filed = None
        note = outcome.output.strip().splitlines()[0] if outcome.output.strip() else ""
        if outcome.status == RED:
            family, kind = fps.split(guard.fingerprint)
            raw = engine.regression(guard.fingerprint, family, kind, day, receipt)
            box = cases.box_of(receipt.digest)
            if box is None:
                problems.append(f"regression of {guard.fingerprint} not filed: receipt {receipt.id} is in no box here")
            else:
                try:
                    if engine.file_into(run, box, [raw]):
                        from m1nd.letters import letter_id

                        filed = letter_id(raw)
                except boxes.Refused as exc:
                    problems.append(f"regression of {guard.fingerprint} not filed: box {box.label} refused: {exc}")
                except OSError as exc:
                    problems.append(f"regression of {guard.fingerprint} not filed: {exc.strerror or exc}")
        results.append(Result(guard, outcome.status, note, filed, real, named))
    return results, problems
