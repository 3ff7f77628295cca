"""Where m1nd keeps things: home, spool, medulla box, roster and private state.

Computed in one place so that every command agrees (contract section 1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def absolute(path: str) -> str:
    """`~` expanded, made absolute, no symlink resolution, no trailing `/`."""
    p = os.path.abspath(os.path.expanduser(path))
    return p.rstrip("/") or "/"


@dataclass(frozen=True)
class Paths:
    home: str
    spool: str

    @property
    def medulla_box(self) -> str:
        return os.path.join(self.home, "inbox.jsonl")

    @property
    def roster(self) -> str:
        return os.path.join(self.home, "roster.json")

    @property
    def config(self) -> str:
        return os.path.join(self.home, "config.toml")

    @property
    def state(self) -> str:
        return os.path.join(self.home, "state")

    @property
    def locks(self) -> str:
        return os.path.join(self.state, "locks")


def resolve_paths(home: str | None = None, spool: str | None = None) -> Paths:
    home_path = absolute(home or os.environ.get("M1ND_HOME") or "~/.m1nd")
    spool_opt = spool or os.environ.get("M1ND_SPOOL")
    spool_path = absolute(spool_opt) if spool_opt else os.path.join(home_path, "field-reports.jsonl")
    return Paths(home=home_path, spool=spool_path)


def ensure_dir(path: str, mode: int = 0o700) -> None:
    """Create a private directory (and parents) if it is missing."""
    os.makedirs(path, mode=mode, exist_ok=True)


def ensure_home(paths: Paths) -> None:
    """The home is created on first write, mode 0700."""
    if not os.path.isdir(paths.home):
        ensure_dir(paths.home)
        os.chmod(paths.home, 0o700)
