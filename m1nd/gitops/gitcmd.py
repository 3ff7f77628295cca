"""Plain `git` subprocesses, run with an environment that cannot mislead them.

Inside a git hook (and in some scripted setups) variables such as GIT_DIR,
GIT_WORK_TREE or GIT_INDEX_FILE are set for the repository git is working on, and
often as paths relative to the hook's working directory.  m1nd always names the
repository it means with `cwd=` (a root), so those variables are dropped before any
git command runs.  Variables that only carry settings (GIT_CONFIG_*, the author and
committer identity, GIT_EXEC_PATH) are kept.  The one place that wants the index of
the commit in progress (the pre-commit hook's `git add`) passes it back explicitly.

`subprocess` is imported only when a git command actually runs: the post-checkout
hook path never spawns git.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from m1nd.errors import M1ndError

# Variables that choose a repository, a work tree, an index or an object store.
REPO_LOCATING = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_IMPLICIT_WORK_TREE",
)

BOX_REL = ".m1nd/inbox.jsonl"


def clean_env(index_file: str | None = None) -> dict[str, str]:
    """os.environ without the repository-locating GIT_* variables.

    `index_file` (absolute) is put back as GIT_INDEX_FILE when given.
    """
    env = {k: v for k, v in os.environ.items() if k not in REPO_LOCATING}
    if index_file:
        env["GIT_INDEX_FILE"] = index_file
    return env


@dataclass(frozen=True)
class GitResult:
    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0


def git(args: list[str], cwd: str, index_file: str | None = None) -> GitResult:
    """Run `git ARGS` in `cwd` with a clean environment; never raises on a git error."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=clean_env(index_file),
            stdin=subprocess.DEVNULL,
            capture_output=True,
        )
    except FileNotFoundError:
        raise M1ndError("git is not installed (or not on PATH)") from None
    except NotADirectoryError:
        raise M1ndError(f"not a directory: {cwd}") from None
    # Exactly git's one closing newline comes off stdout: a path git prints may itself end
    # in a newline (a directory named "repo-a\n").
    out = done.stdout[:-1] if done.stdout.endswith(b"\n") else done.stdout
    return GitResult(done.returncode, out.decode("utf-8", "surrogateescape"),
                     done.stderr.decode("utf-8", "surrogateescape").rstrip("\n"))


def first_line(text: str) -> str:
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0].strip() if lines else ""


def work_tree_top(path: str) -> str:
    """The top level of the git work tree holding `path`; M1ndError when there is none.

    The path the user gave is kept when it names the top level itself (symlinks not
    resolved, as roots keep their given form); otherwise git's answer is used.
    """
    given = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(given):
        raise M1ndError(f"no such directory: {given}")
    cwd = given if os.path.isdir(given) else os.path.dirname(given)
    res = git(["rev-parse", "--show-toplevel"], cwd)
    if not res.ok or not res.out:
        why = first_line(res.err)
        raise M1ndError(
            f"{given} is not inside a git work tree"
            + (f" ({why})" if why else "")
            + ": run this in a git repository (git init first)"
        )
    top = res.out
    if os.path.realpath(cwd) == os.path.realpath(top):
        return cwd.rstrip("/") or "/"
    return top


def git_path(root: str, name: str) -> str:
    """`git rev-parse --git-path NAME`, made absolute (worktrees and bare layouts)."""
    res = git(["rev-parse", "--git-path", name], root)
    if not res.ok or not res.out:
        raise M1ndError(f"cannot find the git directory of {root}: {first_line(res.err) or 'git failed'}")
    return os.path.normpath(os.path.join(root, res.out))


def config_get(root: str, key: str, local: bool = False) -> str | None:
    """A git config value as the repository sees it (or only its local config)."""
    args = ["config"] + (["--local"] if local else []) + ["--get", key]
    res = git(args, root)
    return res.out if res.ok else None


def config_set(root: str, key: str, value: str) -> None:
    res = git(["config", "--local", key, value], root)
    if not res.ok:
        raise M1ndError(f"cannot set {key} in {root}: {first_line(res.err) or 'git config failed'}")


def is_ignored(root: str, rel: str = BOX_REL, use_index: bool = False) -> bool | None:
    """Whether git's ignore rules ignore `rel` (None when git cannot say).

    Without `use_index` only the rules count (a tracked file may still be "ignored");
    with it, a tracked file is never reported as ignored, as `git check-ignore` does.
    """
    args = ["check-ignore", "-q"] + ([] if use_index else ["--no-index"]) + ["--", rel]
    res = git(args, root)
    if res.code == 0:
        return True
    if res.code == 1:
        return False
    return None


def ignore_rule(root: str, rel: str = BOX_REL) -> str:
    """The rule that ignores `rel`, as `source:line:pattern`, or ""."""
    res = git(["check-ignore", "-v", "--no-index", "--", rel], root)
    if res.ok and "\t" in res.out:
        return res.out.split("\t", 1)[0]
    return ""


def is_tracked(root: str, rel: str = BOX_REL) -> bool:
    return git(["ls-files", "--error-unmatch", "--", rel], root).ok


def merge_attribute(root: str, rel: str = BOX_REL) -> str | None:
    """The `merge` attribute git gives `rel` (None when unspecified)."""
    res = git(["check-attr", "merge", "--", rel], root)
    if not res.ok:
        return None
    value = res.out.rsplit(": ", 1)[-1] if ": " in res.out else ""
    return None if value in ("", "unspecified") else value
