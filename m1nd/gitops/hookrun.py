"""`m1nd hook run NAME [ARGS…]`: what the shims (and hook managers) call.

This is the hot path: it runs on every checkout, merge and rebase, so it imports
neither typer, rich nor gitpython.  With nothing new it spawns no git; with letters to
file it asks git (one `ls-files`) whether each box they go to is one git ignores.

A hook never gets in git's way: post-* hooks file only into boxes git ignores and the
medulla box; the pre-commit hook is a safe filing of its own repository's box, which it
then stages (gitops/safety.py).  The work runs in a forked child; the parent waits
for it up to the time budget (M1ND_HOOK_TIMEOUT seconds, default 10), prints what the
child had to say, and exits 0.  On timeout the parent prints one warning and exits 0
while the child, in its own session and holding none of git's file descriptors,
finishes its appends undisturbed: it is never killed mid-append.  Every failure inside
the child (a garbage spool, a corrupt roster, a refused box) becomes one warning line.

What the child tells after a post-* hook's filing is hooknotice.py's; what the
pre-commit hook stages, hookstage.py's.
"""

from __future__ import annotations

import math
import os
import select
import sys
import time
from typing import NoReturn

from m1nd.gitops.hooknotice import notice as _notice
from m1nd.gitops.hookstage import BOX_REL, framework_set_aside_the_box, is_partial_commit, stage as _stage
from m1nd.safetext import safe, safe_lines

SYNC_HOOKS = ("post-checkout", "post-merge", "post-rewrite")
STAGE_HOOK = "pre-commit"
DEFAULT_BUDGET = 10.0
MAX_BUDGET = 3600.0
# What a first filing reads of the spool per second on a slow, loaded machine: a hook
# whose unread spool would take more than half its budget at this rate (a new home, a
# cursor rebuilt) files in the background, and only into boxes git ignores.
SLOW_FILING_RATE = 2 * 1024 * 1024
# A child about to write a tracked box claims the time it needs; the hook answers ACK
# (and waits for it) while it still waits, or, having given up, never answers.
CLAIM, ACK = b"\x01", b"\x06"
_CLAIM: list = []  # in the child: [report pipe, answer pipe, the hook's deadline]


def claim_time() -> bool:
    """In a hook's child: may it write the tracked box now?  True once the hook agreed to
    wait for it; False when the hook gave up (it closed the answer pipe or is gone)."""
    if not _CLAIM:
        return True
    report, answer, deadline = _CLAIM
    try:
        os.write(report, CLAIM)
        ready = select.select([answer], [], [], max(0.0, deadline - time.monotonic()) + 1.0)[0]
        return bool(ready) and os.read(answer, 1) == ACK
    except OSError:
        return False


def budget() -> float:
    raw = os.environ.get("M1ND_HOOK_TIMEOUT", "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_BUDGET
    if not (value > 0 and math.isfinite(value)):
        return DEFAULT_BUDGET
    return min(value, MAX_BUDGET)  # a longer wait is no budget (and overflows the clock's types)


def _index_file() -> str | None:
    """GIT_INDEX_FILE of the commit in progress, made absolute against the hook's cwd."""
    index = os.environ.get("GIT_INDEX_FILE")
    return os.path.abspath(index) if index else None



def run_hook(name: str, args: list[str] | None = None) -> int:
    """Run hook NAME within the budget; always returns 0.  `args` (git's own hook
    arguments, or whatever a hook manager passes) are accepted and ignored."""
    os.environ["M1ND_IN_HOOK"] = "1"
    if name not in SYNC_HOOKS + (STAGE_HOOK,):
        shown = repr(name) if name else "(none given)"
        _stderr(f"m1nd: warning: no hook named {shown} (known: {', '.join(SYNC_HOOKS + (STAGE_HOOK,))}); "
                "nothing done\n")
        return 0
    limit = budget()
    started = time.monotonic()
    index_file = _index_file()
    parent = os.getpid()
    try:
        read_end, write_end = os.pipe()
        ack_read, ack_write = os.pipe()  # the hook's answer to a child's claim
        pid = os.fork()
    except OSError as exc:
        _stderr(f"m1nd: warning: the {name} hook could not start ({exc.strerror}); nothing done\n")
        return 0
    if pid == 0:  # the child: do the work, report through the pipe, never return
        _child(name, index_file, parent, started + limit, limit, (read_end, write_end), (ack_read, ack_write))

    os.close(write_end)
    os.close(ack_read)
    chunks, timed_out = _listen(read_end, ack_write, started + limit)
    if timed_out:
        _stderr(f"m1nd: warning: the {name} hook gave up waiting after {limit:g} s "
                "(M1ND_HOOK_TIMEOUT); m1nd finishes filing in the background\n")
        return 0
    try:
        # A child that closed the pipe is done, or works on in the background (a first
        # read of the spool): git is not kept waiting for that.
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    if chunks:
        _stderr(b"".join(chunks).decode("utf-8", "replace"))
    return 0


def _child(name: str, index_file: str | None, parent: int, deadline: float, limit: float,
           report_pipe: tuple[int, int], answer_pipe: tuple[int, int]) -> NoReturn:
    """The forked child: detach, do the work, write what it has to say into the pipe,
    and exit (never return)."""
    code = 0
    read_end, write_end = report_pipe
    ack_read, ack_write = answer_pipe
    try:
        os.close(read_end)
        os.close(ack_write)
        _CLAIM[:] = [write_end, ack_read, deadline]
        _detach()
        unread = first_pass_bytes(limit)
        if unread:  # a one-time cost: git is not kept waiting for it (git.md 3)
            try:
                os.write(write_end, first_pass_line(name, unread).encode("utf-8", "replace"))
            except OSError:  # the parent gave up already: the work goes on all the same
                pass
            os.close(write_end)
            write_end = -1
            report = _work(name, index_file, parent, None, background=True)
        else:
            report = _work(name, index_file, parent, deadline - min(1.0, limit / 5))
    except BaseException as exc:  # noqa: BLE001 - a hook never fails
        report = f"m1nd: warning: the {name} hook failed: {_one_line(exc)}\n"
        code = 1
    try:
        if report and write_end >= 0:
            os.write(write_end, report.encode("utf-8", "replace"))
    except OSError:  # the parent gave up and is gone: nobody to tell
        pass
    finally:
        os._exit(code)


def _listen(read_end: int, ack_write: int, deadline: float) -> tuple[list[bytes], bool]:
    """In the hook: what the child writes until it closes the pipe, or until the
    deadline (True: timed out); a child's claim is answered, and then waited for."""
    chunks: list[bytes] = []
    timed_out = claimed = False
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        while True:
            remaining = None if claimed else deadline - time.monotonic()
            if remaining is not None and (remaining <= 0 or not select.select([pipe], [], [], remaining)[0]):
                timed_out = True
                break
            data = pipe.read(65536)
            if not data:
                break
            if CLAIM in data:  # the child is about to write the tracked box: wait for it
                data = data.replace(CLAIM, b"")
                try:
                    os.write(ack_write, ACK)
                    claimed = True
                except OSError:
                    pass
            chunks.append(data)
    os.close(ack_write)  # a claim not answered by now is refused: the child writes nothing
    return chunks, timed_out


def _detach() -> None:
    """Own session (a ^C at git does not stop an append), and none of git's descriptors:
    a caller reading git's output through a pipe is never kept waiting for us."""
    try:
        os.setsid()
    except OSError:
        pass
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if devnull > 2:
        os.close(devnull)


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(safe_lines(text))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _one_line(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return " ".join(str(message).split())


def first_pass_bytes(limit: float) -> int:
    """The bytes of spool this hook's filing would read for the first time, when that
    could take more than half its budget (a new home, a cursor that no longer verifies);
    else 0.  Costs a few stats and one small read, like the hook's quick path."""
    from m1nd.cursor import StateCorrupt, Store
    from m1nd.errors import M1ndError
    from m1nd.paths import resolve_paths

    try:
        paths = resolve_paths()
        st = os.stat(paths.spool)
    except (M1ndError, OSError):
        return 0
    if st.st_size <= SLOW_FILING_RATE * limit / 2:
        return 0
    try:
        state = Store(paths.state).load()
    except (StateCorrupt, OSError):
        state = None
    mark = state.mark if state is not None else None
    if mark is not None and (st.st_dev, st.st_ino) == (mark.dev, mark.ino) and st.st_size >= mark.offset:
        unread = st.st_size - mark.offset
    else:
        unread = st.st_size
    return unread if unread > SLOW_FILING_RATE * limit / 2 else 0


def first_pass_line(name: str, unread: int) -> str:
    size = f"{unread / (1024 * 1024):.0f} MiB"
    staged = "; letters for committed boxes wait for the next commit or m1nd distribute" if name == STAGE_HOOK else ""
    return f"m1nd: {size} of the spool not read yet: the {name} hook files it in the background{staged}\n"


def _work(name: str, index_file: str | None, parent: int, deadline: float | None, background: bool = False) -> str:
    """Distribute, then tell (post-* hooks) or stage (pre-commit).  Returns the lines to
    print.  In the `background` (git no longer waits), only boxes git ignores and the
    medulla box are filed, as by a post-* hook, and nothing is staged or told."""
    from m1nd.distribute import distribute
    from m1nd.errors import M1ndError
    from m1nd.gitops.safety import HOOK, STAGE, Gate
    from m1nd.run import open_run

    lines: list[str] = []
    try:
        run = open_run()
        if background:
            distribute(run, gate=Gate(HOOK, run.bound))
            return ""
        # post-* hooks file only into boxes git ignores (and the medulla box); the
        # pre-commit hook also files the bound repository's consented box, which it
        # then stages (spec/git.md section 3: safe filing).  Only the pre-commit hook
        # escalates (cases.md 2); after post-* hooks the next filing command does.
        if name == STAGE_HOOK:
            from m1nd.cases.escalation import after_distribution

            # Under the pre-commit framework, with unstaged edits of the box set aside in
            # its patch: filing now would make that patch not apply (the commit fails).
            mode = HOOK if framework_set_aside_the_box(parent) else STAGE
            gate = Gate(mode, run.bound, partial_commit=is_partial_commit(index_file), deadline=deadline,
                        parent=parent, claim=claim_time)
            receipt = after_distribution(run, distribute(run, gate=gate), gate)
        else:
            from m1nd.gitops import hookstamp

            boxes = [b.path for b in run.boxes()]
            # Also what decides whether the bound box is one git ignores (filed by this
            # hook) and roots that may come to exist.
            extra = [r.path for r in run.roots.unreachable]
            if run.bound:
                extra += [os.path.join(run.bound, ".gitignore"), os.path.join(run.bound, ".m1nd", ".gitignore"),
                          os.path.join(run.bound, ".git", "info", "exclude")] + hookstamp.git_ignore_sources(run.bound)
            stats = hookstamp.snapshot(hookstamp.watched(run.paths.home, run.paths.spool, boxes + extra))
            receipt = distribute(run, gate=Gate(HOOK, run.bound))
    except M1ndError as exc:
        return f"m1nd: warning: the {name} hook filed nothing: {_one_line(exc)}\n"
    for problem in receipt.problems:
        lines.append(f"m1nd: warning: box {safe(problem.label)} not filed: {safe(problem.reason)}")
    if run.bound is not None:
        try:
            if name == STAGE_HOOK:
                lines.extend(_stage(run, receipt, index_file, parent, gate))
            else:
                lines.extend(_notice(run, receipt))
        except M1ndError as exc:
            lines.append(f"m1nd: warning: the {name} hook: {_one_line(exc)}")
    out = "".join(line + "\n" for line in lines)
    if name != STAGE_HOOK and not receipt.problems and not receipt.appended and "warning" not in out \
            and [b.path for b in run.boxes()] == boxes:
        # Kept only for a run that found nothing to do: the next hook that finds the same
        # files answers at once (hookstamp.py).
        bound_box = os.path.join(run.bound, BOX_REL) if run.bound else None
        hookstamp.remember(stats, safe_lines(out), bound_box)
    return out
