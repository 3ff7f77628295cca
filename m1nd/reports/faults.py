"""Named crash points for the crash tests: with `M1ND_TEST_CRASH=NAME` set, the
process kills itself with SIGKILL when it reaches the point of that name (as a power
cut or `kill -9` would).  Unset, each point costs one dictionary look-up."""

from __future__ import annotations

import os
import signal


def crash(point: str) -> None:
    if os.environ.get("M1ND_TEST_CRASH") == point:
        os.kill(os.getpid(), signal.SIGKILL)


def pause(point: str) -> None:
    """With `M1ND_TEST_PAUSE=NAME:SECONDS`, sleep that long at the point of that name
    (the race tests: a slow disk between a check and the write it allows)."""
    name, _, seconds = os.environ.get("M1ND_TEST_PAUSE", "").partition(":")
    if name == point:
        import time

        time.sleep(float(seconds or 0))
