"""Safe filing (spec/git.md section 3): which boxes a filing may write right now.

The one rule: a git operation that works without m1nd works the same with it.  So:

- the hooks that run after git moved the work tree (`post-checkout`, `post-merge`,
  `post-rewrite`) file only into boxes git ignores (local, not yet consented, or
  private) and into the medulla box;
- letters for a consented box (one git does not ignore) wait in the spool for a
  **safe filing**: the `pre-commit` hook with `--stage` (the bound repository's box
  only, and not during `git commit <paths>`), or a command the user runs;
- nothing is filed into a consented box while git is in the middle of an operation
  (a rebase, `git am`, a bisect, a merge / cherry-pick / revert with or without
  conflicts), by a hook or by hand, except by the pre-commit hook of the commit that
  concludes a merge;
- never into a checkout that predates the repository's consent, nor into a box that
  a sparse checkout leaves out of its cone.

A verdict costs nothing for the medulla box and for a box outside any git work tree,
and one `git ls-files` for a project box (two when its `.gitignore` is not m1nd's);
it is asked only for boxes that have letters to take in this run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from m1nd.boxes import BIRTH_GITIGNORE as BIRTH
from m1nd.boxes import EARLIER_BIRTH_GITIGNORE as EARLIER_BIRTH

HOOK, STAGE, COMMAND = "hook", "stage", "command"

WAIT_FOR_SAFE = "they wait for a safe filing (a commit with the --stage hook, or m1nd distribute)"


@dataclass(frozen=True)
class Verdict:
    ok: bool  # this filing may write the box
    consented: bool  # git does not ignore the box: filing it changes a file git sees
    reason: str = ""  # why its letters wait (when not ok)


OPEN = Verdict(True, False)


def work_tree_top(path: str) -> str | None:
    """The nearest directory at or above `path` holding a `.git` entry (no git spawned)."""
    here = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def git_dir(top: str) -> str | None:
    """The git directory of a work tree: `.git` itself, or what a `.git` file points at
    (linked worktrees, submodules).  None when it cannot be read."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "surrogateescape")
    except OSError:
        return None
    for line in head.splitlines():
        if line.startswith("gitdir:"):
            return os.path.normpath(os.path.join(top, line[len("gitdir:"):].strip()))
    return None


def operation_in_progress(top: str, concluding: bool = False) -> str | None:
    """What git is in the middle of in this work tree, from its own state files, or None.
    A merge, cherry-pick or revert counts with or without conflicts (`merge --no-commit`
    too: a filing would make `merge --abort` refuse).  `concluding`: asked by the
    pre-commit hook, whose commit concludes a merge (that commit is the safe filing)."""
    gd = git_dir(top)
    if gd is None:
        return None
    apply_dir = os.path.join(gd, "rebase-apply")
    if os.path.isdir(apply_dir):
        return "git am" if os.path.exists(os.path.join(apply_dir, "applying")) else "a rebase"
    if os.path.isdir(os.path.join(gd, "rebase-merge")):
        return "a rebase"
    if os.path.exists(os.path.join(gd, "BISECT_LOG")):
        return "a bisect"
    for name, what in (("MERGE_HEAD", "a merge"), ("CHERRY_PICK_HEAD", "a cherry-pick"),
                       ("REVERT_HEAD", "a revert")):
        if os.path.exists(os.path.join(gd, name)):
            if _has_conflicts(top):
                return f"{what} with conflicts"
            if not (concluding and name == "MERGE_HEAD"):
                return what
    return None


def _index_locked(top: str) -> bool:
    gd = git_dir(top)
    return gd is not None and os.path.exists(os.path.join(gd, "index.lock"))


def _has_conflicts(top: str) -> bool:
    from m1nd.gitops import gitcmd

    res = gitcmd.git(["ls-files", "--unmerged"], top)
    return not res.ok or bool(res.out.strip())


def _read_small(path: str) -> bytes | None:
    """A regular file's bytes (None when missing or not a regular file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


class Gate:
    """The verdicts of one filing: `mode` is HOOK, STAGE (the pre-commit hook with
    --stage) or COMMAND (a command the user runs)."""

    def __init__(self, mode: str = COMMAND, bound: str | None = None, partial_commit: bool = False,
                 deadline: float | None = None, parent: int | None = None, claim=None) -> None:
        self.mode = mode
        self.bound = os.path.realpath(bound) if bound else None
        self.partial_commit = partial_commit
        # A hook's child: consented boxes are written only while the hook that git runs
        # (`parent`) still waits, with time left to stage (`deadline`, time.monotonic()).
        self.deadline = deadline
        self.parent = parent
        # `claim()`: asks the waiting hook to wait until this child is done (True) or
        # hears that it gave up (False); asked once, before the first consented write.
        self.claim = claim
        self._claimed: bool | None = None
        self._verdicts: dict[str, Verdict] = {}

    def in_time(self) -> bool:
        """May a consented box still be written now?  Never after the hook gave up:
        git went on without it, and a late write would leave the tracked box changed."""
        import time

        if self.parent is not None and os.getppid() != self.parent:
            return False
        if self._claimed is not None:
            return self._claimed
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return False
        if self.claim is None:
            return True
        # A check, then a write, would race the hook giving up in between: the hook
        # agrees first to wait for this write, or says it gave up.
        self._claimed = bool(self.claim())
        return self._claimed

    def verdict(self, box) -> Verdict:
        """May this filing write `box` (a boxes.Box)?  Cached for the run."""
        v = self._verdicts.get(box.path)
        if v is None:
            v = self._verdicts[box.path] = OPEN if box.root is None else self._project(box.root)
        return v

    def may_write_consented(self, box) -> bool:
        """Could this filing write `box` if it were consented?  Answered without git, so
        that a hook with nothing to do never spawns it."""
        if self.mode == HOOK:
            return False
        if self.mode == STAGE:
            return box.root is not None and os.path.realpath(box.root.path) == self.bound
        return True

    @staticmethod
    def upgrade_earlier_births(roots) -> None:
        """Every reachable root whose `.gitignore` an earlier m1nd wrote (`inbox.jsonl`
        alone) gets the birth content that ignores itself too, whether or not this run
        files into it: until then, a teammate's consent commit would make git refuse a
        pull ("untracked working tree files would be overwritten").  One small read per
        root; git is asked only for such a file."""
        for root in roots:
            gitignore = os.path.join(root.box_dir, ".gitignore")
            if _read_small(gitignore) == EARLIER_BIRTH:
                top = work_tree_top(root.path)
                if top is not None:
                    _upgrade_birth(root, top, gitignore)

    # -- project boxes -------------------------------------------------------------
    def _project(self, root) -> Verdict:
        top = work_tree_top(root.path) if os.path.isdir(root.path) else None
        if top is None:
            return OPEN  # not in a git work tree: git has nothing to say
        from m1nd.gitops import gitcmd

        rel_dir = os.path.relpath(os.path.join(root.path, ".m1nd"), top)
        rel_box = os.path.join(rel_dir, "inbox.jsonl")
        listed = gitcmd.git(["ls-files", "-v", "--", rel_box], top)
        tag = listed.out[:1] if listed.ok and listed.out else ""
        if tag:  # tracked: the box is consented (committed), whatever ignores it
            if tag == "S" or not os.path.lexists(root.box_dir) and self._sparse(top):
                return Verdict(False, True, "the box lies outside this sparse checkout")
            return self._consented(root, top)
        gitignore = os.path.join(root.box_dir, ".gitignore")
        content = _read_small(gitignore)
        if content == BIRTH:
            return OPEN
        if content == EARLIER_BIRTH:
            _upgrade_birth(root, top, gitignore)
            return OPEN
        if content is None and not os.path.lexists(root.box_dir):
            if self._predates_consent(top):
                return Verdict(False, True, "this checkout predates the repository's consent: "
                                            "they wait for a consented checkout")
            return OPEN  # a box born now ignores itself
        ignored = gitcmd.is_ignored(top, rel_box)
        if ignored:
            return OPEN
        return self._consented(root, top)

    def _consented(self, root, top: str) -> Verdict:
        if self.mode == HOOK:
            return Verdict(False, True, WAIT_FOR_SAFE)
        if self.mode == STAGE:
            if self.bound is None or os.path.realpath(root.path) != self.bound:
                return Verdict(False, True, WAIT_FOR_SAFE)
            if self.partial_commit:
                return Verdict(False, True, "a partial commit (git commit <paths>): " + WAIT_FOR_SAFE)
        busy = operation_in_progress(top, concluding=self.mode == STAGE)
        if busy is None and self.mode == COMMAND and _index_locked(top):
            # Another git command is writing the index and, likely, the work tree (a
            # checkout, a merge): appending now could race its rewrite of the box.  (Not
            # asked in the pre-commit hook: `git commit -a` holds this lock while it runs.)
            busy = "another git command (its index.lock exists)"
        if busy:
            return Verdict(False, True, f"git is in the middle of {busy}: they wait until git is done")
        return Verdict(True, True)

    @staticmethod
    def _predates_consent(top: str) -> bool:
        """A checkout from before the repository consented (an old tag, a bisect step):
        its tree has no `.m1nd/`, nor the consent's attribute, yet this clone has the
        merge driver configured."""
        try:
            with open(os.path.join(top, ".gitattributes"), "rb") as fh:
                if b"merge=m1nd-inbox" in fh.read():
                    return False
        except OSError:
            pass
        from m1nd.gitops import gitcmd

        # Only this clone's own config: a driver set globally says nothing of this repository.
        return gitcmd.config_get(top, "merge.m1nd-inbox.driver", local=True) is not None

    @staticmethod
    def _sparse(top: str) -> bool:
        from m1nd.gitops import gitcmd

        return gitcmd.config_get(top, "core.sparseCheckout") == "true"


def _upgrade_birth(root, top: str, gitignore: str) -> None:
    """An earlier m1nd wrote `.gitignore` = `inbox.jsonl\\n`: upgraded to ignore itself
    too, unless it is tracked (then it is the repository's, and a change would show)."""
    from m1nd.fsutil import atomic_write
    from m1nd.gitops import gitcmd

    rel = os.path.relpath(gitignore, top)
    if gitcmd.git(["ls-files", "--error-unmatch", "--", rel], top).ok:
        return
    try:
        if os.path.isdir(root.box_dir) and not os.path.islink(root.box_dir):
            atomic_write(gitignore, BIRTH, mode=0o644)
    except OSError:
        pass
