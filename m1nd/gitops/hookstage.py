"""What the pre-commit hook does after its filing: stage the consented box into the
commit's index (`git add -f .m1nd/inbox.jsonl`), or leave it be (a partial commit, git
mid-operation, a hook that gave up, the pre-commit framework holding the box's
unstaged edits in its patch).  Part of the hot path (hookrun.py): imports stay light.
"""

from __future__ import annotations

import os

BOX_REL = ".m1nd/inbox.jsonl"


def is_partial_commit(index_file: str | None) -> bool:
    """`git commit <paths>` commits from a temporary `next-index-*` index."""
    return bool(index_file) and os.path.basename(index_file).startswith("next-index-")


def _ancestors(pid: int, depth: int = 4) -> list[int]:
    """`pid` and a few of its parents (Linux /proc; elsewhere `pid` alone)."""
    chain = [pid]
    for _ in range(depth):
        try:
            with open(f"/proc/{chain[-1]}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if ppid <= 1:
            break
        chain.append(ppid)
    return chain


def framework_set_aside_the_box(hook_pid: int) -> bool:
    """The pre-commit framework (PRE_COMMIT=1) stashes unstaged edits into
    `<its home>/patch<time>-<its pid>` around the hooks and applies that patch back
    after them: True when the patch of the framework running this hook holds the box."""
    if os.environ.get("PRE_COMMIT") != "1":
        return False
    home = os.environ.get("PRE_COMMIT_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pre-commit")
    suffixes = tuple(f"-{pid}" for pid in _ancestors(hook_pid))
    try:
        names = [n for n in os.listdir(home) if n.startswith("patch") and n.endswith(suffixes)]
    except OSError:
        return False
    for name in names:
        try:
            with open(os.path.join(home, name), "rb") as fh:
                patch = fh.read()
        except OSError:
            continue
        box = BOX_REL.encode()
        if any(line.startswith(b"+++ b/") and (line[6:] == box or line.endswith(b"/" + box))
               for line in patch.splitlines()):
            return True
    return False


def _unstaged_letters(root: str, box: str, index_file: str | None) -> int:
    """Letters `git add` is about to stage: the box's lines the index lacks (every
    letter line of a box git does not track yet), whoever wrote them."""
    from m1nd.gitops import gitcmd

    diff = gitcmd.git(["--no-optional-locks", "diff", "--numstat", "--", BOX_REL], root, index_file)
    if diff.ok and diff.out.strip():
        first = diff.out.split(None, 1)[0]
        return int(first) if first.isdigit() else 0
    tracked = gitcmd.git(["--no-optional-locks", "ls-files", "--", BOX_REL], root, index_file)
    if tracked.ok and tracked.out.strip():
        return 0
    try:
        with open(box, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


def stage(run, receipt, index_file: str | None, parent: int, gate) -> list[str]:
    """`git add .m1nd/inbox.jsonl` when the box is consented, into the commit's index."""
    from m1nd.boxview import select_box
    from m1nd.gitops import gitcmd

    if is_partial_commit(index_file):
        return []  # `git commit <paths>`: the user chose exactly what goes in
    root = run.bound
    box = os.path.join(root, BOX_REL)
    verdict = gate.verdict(select_box(run, root))
    if not verdict.ok:  # git is mid-operation (an amend at a rebase stop, say): leave the index alone
        return [f"m1nd: {n}" for n in receipt.notes if "not filed now" in n][:1]
    if os.path.islink(box) or not os.path.isfile(box):
        return []
    tracked = gitcmd.git(["--no-optional-locks", "ls-files", "--", BOX_REL], root, index_file)
    if not tracked.ok or not tracked.out.strip():
        return []  # not in the index (private, or not consented yet): the consent commit adds it
    # Tracked: staged whatever ignore rules also match it (the filing above wrote it).
    changed = gitcmd.git(["--no-optional-locks", "status", "--porcelain", "--", BOX_REL], root, index_file)
    if not changed.ok or not any(l[1:2] in ("M", "?") for l in changed.out.splitlines()):
        return []  # nothing in the work tree that the index lacks
    if os.getppid() != parent or not gate.in_time():
        return []  # the hook gave up and the commit went on without us: stage nothing late
    new = _unstaged_letters(root, box, index_file)
    # -f: tracked, so staged whatever ignore rule also matches it (git add alone would
    # stage it and still fail, naming the rule)
    added = gitcmd.git(["add", "-f", "--", BOX_REL], root, index_file)
    if not added.ok:
        return [f"m1nd: warning: could not stage {BOX_REL}: {gitcmd.first_line(added.err)}"]
    fresh = f" ({new} new {'letter' if new == 1 else 'letters'})" if new else ""
    return [f"m1nd: staged {BOX_REL}{fresh} into this commit"]
