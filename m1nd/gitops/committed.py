"""Which letters git already holds for a box: the ids in the box's version in HEAD, in
every local branch, and in every stash entry (spec/git.md section 3).

A letter that a branch switch took out of the work tree but that is committed on
another local branch comes back by merge and is never filed again (re-adding it would
dirty the box and make the next branch switch fail).  A letter held only by a stash
entry comes back with `git stash pop`; filing it again first would make the pop
refuse.  Asked only at a safe filing, and only when letters are missing from a box.
"""

from __future__ import annotations

import hashlib
import os
import subprocess

from m1nd.gitops import gitcmd


def _run(args: list[str], cwd: str, data: bytes | None = None, env: dict | None = None) -> bytes | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env or gitcmd.clean_env(), input=data,
                              capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _partial_clone(top: str) -> bool:
    out = _run(["config", "--get-regexp", r"^(extensions\.partialclone|remote\..*\.promisor)$"], top)
    return bool(out and out.strip())


def _objects(args: list[str], top: str, data: bytes) -> bytes | None:
    """`git cat-file` over the clone's objects that never fetches one it lacks.

    In a partial clone git would fetch a missing blob from the promisor remote (from
    inside a hook: a credential prompt, a network stall).  So the query runs against a
    bare, empty git directory with no promisor configured that borrows the clone's
    object store: what the clone lacks is simply "missing" (not checked)."""
    if not _partial_clone(top):
        return _run(args, top, data)
    import tempfile

    objects = _run(["rev-parse", "--git-path", "objects"], top)
    if not objects:
        return None
    objects_dir = os.path.join(top, objects.decode("utf-8", "surrogateescape").strip())
    with tempfile.TemporaryDirectory(prefix="m1nd-objects-") as shadow:
        for sub in ("objects", "refs"):
            os.mkdir(os.path.join(shadow, sub))
        with open(os.path.join(shadow, "HEAD"), "w") as fh:
            fh.write("ref: refs/heads/main\n")
        env = {**gitcmd.clean_env(), "GIT_DIR": shadow, "GIT_OBJECT_DIRECTORY": os.path.abspath(objects_dir),
               "GIT_NO_LAZY_FETCH": "1"}
        return _run(args, shadow, data, env)


def _commits(top: str) -> list[str]:
    out = _run(["for-each-ref", "--format=%(objectname)", "refs/heads"], top) or b""
    commits = out.split()
    head = _run(["rev-parse", "-q", "--verify", "HEAD"], top)
    if head:
        commits.append(head.strip())
    stashes = _run(["log", "-g", "--format=%H", "refs/stash", "--"], top)
    if stashes:
        commits.extend(stashes.split())
    seen, unique = set(), []
    for c in commits:
        if c not in seen:
            seen.add(c)
            unique.append(c.decode("ascii", "replace"))
    return unique


def _blobs(top: str, commits: list[str], rel: str) -> list[str]:
    if not commits:
        return []
    query = "".join(f"{c}:{rel}\n" for c in commits).encode("utf-8", "surrogateescape")
    out = _objects(["cat-file", "--batch-check=%(objectname) %(objecttype)"], top, query) or b""
    blobs: list[str] = []
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == "blob" and parts[0] not in blobs:
            blobs.append(parts[0])
    return blobs


def _digests_of_blobs(top: str, blobs: list[str]) -> set[bytes]:
    ids: set[bytes] = set()
    if not blobs:
        return ids
    out = _objects(["cat-file", "--batch"], top, "".join(b + "\n" for b in blobs).encode("ascii"))
    if out is None:
        return ids
    at = 0
    while at < len(out):
        nl = out.index(b"\n", at)
        header = out[at:nl].split()
        at = nl + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        for raw in out[at:at + size].split(b"\n"):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if raw.strip():
                ids.add(hashlib.sha256(raw).digest())
        at += size + 1  # the content, then git's own "\n"
    return ids


def _top(box_path: str) -> str | None:
    from m1nd.gitops.safety import work_tree_top

    return work_tree_top(os.path.dirname(os.path.dirname(box_path)))


def _fingerprint(commits: list[str]) -> str:
    return hashlib.sha256("\n".join(commits).encode("ascii", "replace")).hexdigest()[:32]


def committed_state(box_path: str) -> tuple[set[bytes], str]:
    """Full sha256 digests of the letters the box's committed versions hold (HEAD, local
    branches, stashes): two different letters sharing a 12-hex id stay apart; and a
    fingerprint of those commits (`holders`)."""
    top = _top(box_path)
    if top is None:
        return set(), ""
    commits = _commits(top)
    rel = os.path.relpath(box_path, top)
    return _digests_of_blobs(top, _blobs(top, commits, rel)), _fingerprint(commits)


def committed_digests(box_path: str) -> set[bytes]:
    return committed_state(box_path)[0]


def holders(box_path: str) -> str:
    """The fingerprint of HEAD, the local branches and the stash entries now: when it
    differs from the one saved at a filing that left letters to them, one of those
    letters may be in no box (a stash dropped, a branch deleted)."""
    top = _top(box_path)
    return _fingerprint(_commits(top)) if top is not None else ""


def committed_ids(box_path: str) -> set[str]:
    """The 12-hex ids of `committed_digests` (what doctor names)."""
    return {d.hex()[:12] for d in committed_digests(box_path)}
