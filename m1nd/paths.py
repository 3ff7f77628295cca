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
    try:
        home_path.encode("utf-8")
    except UnicodeEncodeError:
        # The home's path is written into UTF-8 JSON records (cursors, the read model):
        # one clear error up front beats a failure deep inside a later command.
        from m1nd.errors import M1ndError

        shown = home_path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise M1ndError(f"the m1nd home {shown} is not a UTF-8 path: choose one that is (--home or M1ND_HOME)")
    spool_opt = spool or os.environ.get("M1ND_SPOOL")
    spool_path = absolute(spool_opt) if spool_opt else os.path.join(home_path, "field-reports.jsonl")
    return Paths(home=home_path, spool=spool_path)


def ensure_dir(path: str, mode: int = 0o700) -> None:
    """Create a private directory (and parents) if it is missing."""
    os.makedirs(path, mode=mode, exist_ok=True)


HOME_GITIGNORE = b"*\n"


def ensure_home(paths: Paths) -> None:
    """The home is created on first write, mode 0700, with a `.gitignore` holding `*`:
    it stays private even inside a repository (a home directory kept in git for its
    dotfiles), so `git add` can never commit the spool, the medulla box, the roster or
    the state.  A home made before this rule gets the file at its next write."""
    if not os.path.isdir(paths.home):
        ensure_dir(paths.home)
        os.chmod(paths.home, 0o700)
    ignore = os.path.join(paths.home, ".gitignore")
    if not os.path.lexists(ignore):
        try:
            fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError:  # there already, or a read-only home: nothing m1nd writes can land there either
            return
        try:
            os.write(fd, HOME_GITIGNORE)
        finally:
            os.close(fd)


def refused_root(root_real: str, home: str) -> str | None:
    """Why a root may never be filed into (mailbox.md section 1), or None: its box
    would be the medulla box or lie inside the home (the root is the home's parent,
    the home itself, or inside it).  The home's parent is refused whatever the home is
    called: the home (its spool, its state) would lie inside the repository."""
    home_real = os.path.realpath(home)
    box_dir = os.path.join(root_real, ".m1nd")
    if box_dir == home_real or root_real == home_real or root_real.startswith(home_real.rstrip("/") + "/"):
        return f"its box would lie inside the m1nd home {home}"
    if root_real == os.path.dirname(home_real):
        return f"it is the parent of the m1nd home {home}, which lies inside it"
    return None
