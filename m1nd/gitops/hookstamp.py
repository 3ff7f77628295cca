"""What the last post-* hook found, so that a checkout with nothing new costs a few stats.

A post-* hook files only into boxes git ignores and the medulla box, then prints one
notice about the bound box.  Its whole result is a function of the files it read: the
spool, the roster, the config and the boxes.  After a run, their stats (and the notice)
are kept in `<home>/state/hook-stamp`, per directory and environment; the next
hook whose files stat the same prints the notice and is done, without importing the
distribution at all.  When git rewrote a tracked box (a switch between branches whose
boxes differ), the box is known by its git blob id (one sequential read): a blob seen
before gives the notice learnt then; a large box git's index does not hold is never
written by git, and is not hashed.  Anything else runs the hook in full.

Only `os` and `marshal` (built in; no pattern compiled, unlike `json`) on the way to an
answer, and `hashlib` for a rewritten box: this module is the hot path.  A stamp that
cannot be read (another Python's marshal format, a torn write) is a miss.
"""

from __future__ import annotations

import marshal
import os

STAMP = "hook-stamp"
SYNC_HOOKS = ("post-checkout", "post-merge", "post-rewrite")
KEEP = 16  # directories remembered
BLOBS = 8  # box blobs remembered per directory
ENV = ("HOME", "M1ND_HOME", "M1ND_SPOOL", "M1ND_NOW", "GIT_DIR", "GIT_WORK_TREE")
# box path -> (its stat, its blob id) as this process's quick path hashed it: the full
# run that follows in the same process (the hook's forked child) need not hash it again
_known: dict[str, tuple] = {}


def _home() -> str:
    home = os.environ.get("M1ND_HOME") or "~/.m1nd"
    return os.path.abspath(os.path.expanduser(home)).rstrip("/") or "/"


def _path() -> str:
    return os.path.join(_home(), "state", STAMP)


def _key() -> str:
    return "\0".join([os.getcwd()] + [os.environ.get(k, "") for k in ENV])


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _load() -> dict:
    try:
        with open(_path(), "rb") as fh:
            data = marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def blob_id(path: str) -> str | None:
    """The box's git blob id (SHA-1 object format), from one sequential read."""
    import hashlib

    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            digest = hashlib.sha1(b"blob %d\0" % size)
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def git_ignore_sources(root: str) -> list[str]:
    """The files beyond a repository's own ignore files whose change can change what git
    ignores in it: git's config files (global, XDG, the repository's, the system's),
    which may name `core.excludesFile`, and the excludes files they name (git's default
    one included).  Found without running git: a hook with nothing new spawns none."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = [os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
               os.path.join(xdg, "git", "config"), os.path.join(root, ".git", "config")]
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        configs.append(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    excludes = [os.path.join(xdg, "git", "ignore")]
    for config in configs:
        named = _excludes_file_named(config)
        if named:
            excludes.append(os.path.expanduser(named) if named.startswith("~") else os.path.join(root, named))
    return configs + excludes


def _excludes_file_named(config: str) -> str | None:
    """`core.excludesFile` as one git config file sets it (the last one wins), read the
    simple way: `[core]` sections and `excludesfile = VALUE` lines, quotes removed."""
    try:
        with open(config, "rb") as fh:
            text = fh.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return None
    section, found = "", None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line[1:line.find("]")].strip().lower() if "]" in line else ""
            continue
        key, sep, value = line.partition("=")
        if sep and section == "core" and key.strip().lower() == "excludesfile":
            value = value.split(" #")[0].split(" ;")[0].strip()
            found = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    return found or None


def watched(home: str, spool: str, boxes: list[str]) -> list[str]:
    """The files a post-* hook's result depends on."""
    return [spool, os.path.join(home, "roster.json"), os.path.join(home, "config.toml"), *boxes]


def answer(argv: list[str]) -> bool:
    """`m1nd hook run NAME …` for a post-* hook with nothing new: print the notice the
    last hook here printed, and say so (True).  Called before anything else is loaded."""
    if len(argv) < 3 or argv[:2] != ["hook", "run"] or argv[2] not in SYNC_HOOKS:
        return False
    try:
        notice = cached_notice()
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    if notice is None:
        return False
    if notice:
        try:
            os.write(2, notice.encode("utf-8", "replace"))
        except OSError:
            pass
    return True


def cached_notice() -> str | None:
    """The notice of the last hook here when nothing it read has changed, else None."""
    entry = _load().get(_key())
    if not isinstance(entry, dict):
        return None
    bound_box = entry.get("bound")
    files = entry.get("files")
    if not isinstance(files, dict):
        return None
    changed = [p for p, st in files.items() if _stat(p) != st]
    if not changed:
        return entry.get("out", "")
    if changed != [bound_box] or bound_box is None:
        return None
    # Only the bound box changed: git rewrote it.  A blob learnt before answers.
    blobs = entry.get("blobs")
    before = _stat(bound_box)
    if not worth_hashing(bound_box, before):
        _known[bound_box] = (before, None)  # no blob to learn: the full run hashes nothing
        return None
    blob = blob_id(bound_box)
    _known[bound_box] = (before, blob)  # an unseen blob: the full run remembers it without a second hash
    seen = blobs.get(blob or "") if isinstance(blobs, dict) else None
    if not isinstance(seen, str):
        return None
    files[bound_box] = _stat(bound_box)
    entry["out"] = seen
    _save_entry(entry)
    return seen


# A box smaller than this is hashed without asking git: a spawn of git costs more.
HASH_WITHOUT_ASKING = 1 << 20


def worth_hashing(box: str, stat: list[int] | None) -> bool:
    """Whether to learn this box's blob id: a small box always (no git is spawned for
    it), a larger one only when git's index holds it."""
    return stat is None or stat[1] < HASH_WITHOUT_ASKING or tracked_by_git(box)


def tracked_by_git(box: str) -> bool:
    """Whether git's index holds the box (True when git cannot tell).  Only a tracked box
    is ever written by git, so only its blob can be one seen before; hashing a box git
    ignores, grown by filing (a 1,000,000-letter box: a fifth of a second), learns
    nothing.  One `git ls-files`, for a large box that changed."""
    from m1nd.gitops.gitcmd import BOX_REL, git

    root = os.path.dirname(os.path.dirname(box))
    try:
        listed = git(["ls-files", "--cached", "-z", "--", BOX_REL], root)
    except Exception:  # noqa: BLE001 - no git, no directory: hash as before
        return True
    return not listed.ok or bool(listed.out)


def remember(stats: dict[str, list[int] | None], out: str, bound_box: str | None) -> None:
    """Keep what this hook found (`stats` taken before it read anything; `out` as it
    is printed, control characters made safe)."""
    data = _load()
    old = data.get(_key())
    blobs = dict(old.get("blobs", {})) if isinstance(old, dict) and isinstance(old.get("blobs"), dict) else {}
    if bound_box is not None and stats.get(bound_box) is not None:
        known = _known.get(bound_box)
        if known is not None and known[0] == stats[bound_box]:
            blob = known[1]
        elif not worth_hashing(bound_box, stats[bound_box]):
            blob = None
        else:
            blob = blob_id(bound_box)
        if blob is not None and _stat(bound_box) == stats[bound_box]:
            blobs[blob] = out
            while len(blobs) > BLOBS:
                blobs.pop(next(iter(blobs)))
    _save_entry({"files": stats, "out": out, "blobs": blobs, "bound": bound_box}, data)


def snapshot(paths: list[str]) -> dict[str, list[int] | None]:
    return {p: _stat(p) for p in paths}


def _save_entry(entry: dict, data: dict | None = None) -> None:
    data = _load() if data is None else data
    key = _key()
    data.pop(key, None)
    data[key] = entry
    while len(data) > KEEP:
        data.pop(next(iter(data)))
    path = _path()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(marshal.dumps(data))
        os.replace(tmp, path)
    except (OSError, ValueError):  # a stamp that cannot be kept: the next hook runs in full
        try:
            os.unlink(tmp)
        except OSError:
            pass
