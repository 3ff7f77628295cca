"""The roster: roots the owner registered (`m1nd roster add/remove/list`).

Stored as `<home>/roster.json`: `{"roots": ["/abs/path", ...]}` in the order added.
A roster that cannot be read fails closed; it is never taken as empty.
"""

from __future__ import annotations

import os

import orjson

from m1nd.errors import M1ndError, UsageError
from m1nd.fsutil import atomic_write, lock_for, open_fd
from m1nd.paths import Paths, absolute, ensure_home, refused_root


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
    if a == b:
        return True
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except ValueError:  # a NUL byte in a hand-edited roster entry: not the same path
        return False


def check_root(paths: Paths, root: str) -> str | None:
    """Why `root` may not be a root (a warning-free refusal message), or None.

    Not a directory: refused.  A root whose box would be the medulla box (the home's
    parent) or lie inside the home (the home itself, a directory in it): refused.
    """
    if os.path.lexists(root) and not os.path.isdir(root):
        return f"{root} is not a directory: a root is a repository's top directory"
    refused = refused_root(os.path.realpath(root), paths.home)
    return f"{root} is refused as a root: {refused} (the home is never committable)" if refused else None


def add(paths: Paths, path: str) -> tuple[str, bool]:
    """Register a root; returns (absolute path, whether it was added)."""
    root, added, _ = add_checked(paths, path)
    return root, added


def add_checked(paths: Paths, path: str) -> tuple[str, bool, list[str]]:
    """Register a root; returns (absolute path, whether it was added, warnings)."""
    if not path.strip():
        raise UsageError("an empty path is not a root")
    if "\0" in path:
        raise UsageError("a path with a NUL byte is not a root")
    root = absolute(path)
    try:
        root.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{os.fsencode(root)!r} is not a UTF-8 path: the roster keeps UTF-8 paths") from None
    refused = check_root(paths, root)
    if refused:
        raise M1ndError(refused)
    warnings = []
    if not os.path.lexists(root):
        warnings.append(f"{root} does not exist yet: added, unreachable until it does (the sweep names it)")
    try:
        ensure_home(paths)
        with lock_for(paths.locks, "roster", paths.roster):
            roots = load(paths)
            if any(_same(root, r) for r in roots):
                return root, False, []
            _save(paths, roots + [root])
    except OSError as exc:
        raise M1ndError(f"cannot write roster {paths.roster}: {exc.strerror or exc}") from None
    from m1nd.routing import build_roots

    label = os.path.basename(root).lower()
    same = [r.path for r in build_roots(None, roots + [root], [], paths.home).roots
            if r.key == label and r.path != root]
    if same and label:
        warnings.append(f"label {os.path.basename(root)!r} is now ambiguous ({', '.join(same + [root])}): "
                        "letters naming it wait until one of these is removed")
    return root, True, warnings


def remove(paths: Paths, path: str) -> tuple[str, bool]:
    root = absolute(path)
    if not os.path.exists(paths.roster):
        return root, False
    try:
        with lock_for(paths.locks, "roster", paths.roster):
            roots = load(paths)
            kept = [r for r in roots if not _same(root, r)]
            if len(kept) == len(roots):
                return root, False
            _save(paths, kept)
    except OSError as exc:
        raise M1ndError(f"cannot write roster {paths.roster}: {exc.strerror or exc}") from None
    return root, True
