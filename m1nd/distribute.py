"""The distribution pass: file every spool letter into the one box that owns it.

The entry of the pass; its parts live in m1nd/distribution/ (see its __init__),
along the flow: reading the new spool bytes, routing, filing, the receipt.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import replace

from m1nd.distribution.flow import Pass
from m1nd.distribution.reading import Progress
from m1nd.distribution.receipt import BoxProblem, Handover, Receipt, record_coverage
from m1nd.distribution.routing_pass import route_key, roots_digest
from m1nd.errors import M1ndError
from m1nd.fsutil import gc_paused, lock_for, open_regular
from m1nd.gitops.safety import Gate
from m1nd.paths import ensure_home
from m1nd.run import Run
from m1nd.secrets import use_cache

# The callers' names: the entry, and what its receipt and its routing are made of.
__all__ = ["distribute", "remember_bound_root", "Receipt", "BoxProblem", "Handover", "Progress",
           "route_key", "roots_digest"]


def distribute(run: Run, write: bool = True, progress: Progress | None = None, gate: Gate | None = None) -> Receipt:
    """File the spool into boxes (or, with write=False, only work out where it goes:
    nothing is written, no state is read or kept).  `gate` says which boxes this filing
    may write (safety.py): by default, a command the user runs."""
    path = run.paths.spool
    if os.path.isdir(run.paths.home):  # the compiled secret rules are cached in the state
        use_cache(os.path.join(run.paths.state, "rules"))
    try:
        fh = open_regular(path)  # a FIFO, a device or a directory: an error, never a hang
    except OSError as exc:
        raise M1ndError(f"cannot read spool {path}: {exc.strerror}") from None
    if fh is None:
        return Receipt(0, 0, 0, 0, ())
    with fh, gc_paused():
        one = Pass(run, fh.fileno(), write, progress, gate)
        try:
            if not write:
                return one.run_pass(fh)
            ensure_home(run.paths)
            one.gate.upgrade_earlier_births(run.roots.reachable)
            # Keyed by the state directory, which runs over different spools share.
            with lock_for(run.paths.locks, "distribute", run.paths.state):
                one.start()
                receipt = one.run_pass(fh)
            remember_bound_root(run, receipt)
            receipt = replace(receipt, handover=one.handover)
            return record_coverage(run, one.found.seen, receipt)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""  # one line that says where
            raise M1ndError(f"distribution failed: {where}{exc.strerror or exc}") from None


def remember_bound_root(run: Run, receipt: Receipt) -> None:
    """A run that filed into its bound root's box adds that root to the roster (one
    line on stderr, the first time), so that a run from anywhere else finds the box
    its letters went into instead of calling them letters for an unknown repository."""
    if not run.bound or not receipt.appended_by_box:
        return
    from m1nd import roster

    real = os.path.realpath(run.bound)
    bound = next((r for r in run.roots.reachable if r.real == real and not r.refused), None)
    if bound is None or receipt.appended_to(bound.box) == 0:
        return
    try:
        root, added, _ = roster.add_checked(run.paths, bound.path)
    except (M1ndError, OSError):
        return  # a roster that cannot be written: the letters are filed all the same
    if added:
        sys.stderr.write(f"m1nd: added {root} to the roster: its box now holds letters "
                         f"(m1nd roster remove {shlex.quote(root)} undoes it)\n")
