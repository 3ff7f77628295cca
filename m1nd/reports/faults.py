"""Named crash points for the crash tests: with `M1ND_TEST_CRASH=NAME` set, the
process kills itself with SIGKILL when it reaches the point of that name (as a power
cut or `kill -9` would).  Unset, each point costs one dictionary look-up."""

from __future__ import annotations

import os
import signal


def crash(point: str) -> None:
    if os.environ.get("M1ND_TEST_CRASH") == point:
        os.kill(os.getpid(), signal.SIGKILL)
