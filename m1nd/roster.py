"""The roster: roots the owner registered (`m1nd roster add/remove/list`).

Stored as `<home>/roster.json`: `{"roots": ["/abs/path", ...]}` in the order added.
A roster that cannot be read fails closed; it is never taken as empty.
"""

from __future__ import annotations

import os

import orjson

from m1nd.errors import M1ndError, UsageError
from m1nd.fsutil import atomic_write, lock_for, open_fd
from m1nd.paths import Paths, absolute, ensure_home


def load(paths: Paths) -> list[str]:
    try:
        with os.fdopen(open_fd(paths.roster), "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise M1ndError(f"cannot read roster {paths.roster}: {exc.strerror}") from None
    try:
        doc = orjson.loads(data)
        roots = doc["roots"]
        if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
            raise ValueError
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise M1ndError(f"roster {paths.roster} is corrupt: expected {{\"roots\": [paths]}}") from None
    return roots


def _save(paths: Paths, roots: list[str]) -> None:
    atomic_write(paths.roster, orjson.dumps({"roots": roots}, option=orjson.OPT_INDENT_2) + b"\n")


def _same(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def add(paths: Paths, path: str) -> tuple[str, bool]:
    """Register a root; returns (absolute path, whether it was added)."""
    root = absolute(path)
    try:
        root.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{os.fsencode(root)!r} is not a UTF-8 path: the roster keeps UTF-8 paths") from None
    ensure_home(paths)
    with lock_for(paths.locks, "roster", paths.roster):
        roots = load(paths)
        if any(_same(root, r) for r in roots):
            return root, False
        _save(paths, roots + [root])
    return root, True


def remove(paths: Paths, path: str) -> tuple[str, bool]:
    root = absolute(path)
    if not os.path.exists(paths.roster):
        return root, False
    with lock_for(paths.locks, "roster", paths.roster):
        roots = load(paths)
        kept = [r for r in roots if not _same(root, r)]
        if len(kept) == len(roots):
            return root, False
        _save(paths, kept)
    return root, True
