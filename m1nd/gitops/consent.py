"""`m1nd init [PATH] [--private]`: the one consent moment (spec/git.md section 1).

Before it, a box is local: filing writes `.m1nd/.gitignore` = `inbox.jsonl\\n.gitignore\\n`.  After
it, the box is an ordinary committed file that travels with the code, and every clone
merges it with the union merge driver.  Each step is idempotent and reports what it
did or found; nothing is committed, staged, pushed or pulled.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from dataclasses import dataclass, field

from m1nd.boxes import BIRTH_GITIGNORE, EARLIER_BIRTH_GITIGNORE
from m1nd.errors import M1ndError
from m1nd.fsutil import atomic_write
from m1nd.gitops import gitcmd
from m1nd.paths import Paths

# What `m1nd init` writes into `.m1nd/.gitignore`: it ignores nothing.
COMMITTED_GITIGNORE = b"# m1nd init: this repository consented; inbox.jsonl is committed and travels with the code\n"
ATTRIBUTE_LINE = ".m1nd/inbox.jsonl merge=m1nd-inbox"
DRIVER_NAME_KEY = "merge.m1nd-inbox.name"
DRIVER_KEY = "merge.m1nd-inbox.driver"
DRIVER_NAME = "m1nd inbox: union of letters by id"

DONE, FOUND, WARN = "done", "found", "warn"  # a step changed something / found it so / needs a look
PUBLISH_WARNING = (
    "committing a box publishes its letters to everyone who can read the repository "
    "(and its history): keep secrets out of letters"
)


@dataclass(frozen=True)
class Step:
    name: str
    status: str  # DONE | FOUND | WARN
    message: str

    def as_json(self) -> dict:
        return {"step": self.name, "status": self.status, "message": self.message}


@dataclass
class InitResult:
    root: str
    private: bool
    steps: list[Step] = field(default_factory=list)
    next_command: str = ""
    warning: str = ""

    def as_json(self) -> dict:
        return {
            "root": self.root,
            "private": self.private,
            "steps": [s.as_json() for s in self.steps],
            "next": self.next_command,
            "warning": self.warning,
        }


def driver_command(python: str | None = None) -> str:
    """The merge driver invocation: works from any shell, no PATH or venv needed.

    `-P` keeps the repository's own directory off sys.path: git runs the driver at the
    work tree's top, where a directory named `m1nd/` would otherwise be imported.
    """
    return f"{shlex.quote(python or sys.executable)} -P -m m1nd merge-driver %O %A %B"


def driver_interpreter(command: str) -> str | None:
    """The interpreter a recorded driver command runs, when it is one of ours."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if words[1:2] == ["-P"]:  # drivers recorded before m1nd passed -P have no flag
        words = words[:1] + words[2:]
    if len(words) >= 3 and words[1:3] == ["-m", "m1nd"]:
        return words[0]
    return None


def ensure_merge_driver(root: str) -> Step:
    """Set merge.m1nd-inbox.name and .driver in the repository's local config."""
    want = driver_command()
    have = gitcmd.config_get(root, DRIVER_KEY, local=True)
    have_name = gitcmd.config_get(root, DRIVER_NAME_KEY, local=True)
    if have == want and have_name == DRIVER_NAME:
        return Step("merge-driver", FOUND, f"merge driver already configured ({DRIVER_KEY})")
    gitcmd.config_set(root, DRIVER_NAME_KEY, DRIVER_NAME)
    gitcmd.config_set(root, DRIVER_KEY, want)
    if have is None:
        return Step("merge-driver", DONE, f"configured the merge driver in the repository's local config ({DRIVER_KEY})")
    return Step("merge-driver", DONE, f"updated the merge driver ({DRIVER_KEY}; was: {have})")


def _refuse_symlinks(box_dir: str) -> None:
    try:
        st = os.lstat(box_dir)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise M1ndError(f"{box_dir} is a symlink: m1nd never writes a box through one")
    if not stat.S_ISDIR(st.st_mode):
        raise M1ndError(f"{box_dir} is not a directory")


def _read_gitignore(path: str) -> bytes | None:
    """Its bytes; None when missing; b"<custom>" stands for anything but a regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return b"<not a regular file>"
    with open(path, "rb") as fh:
        return fh.read()


def _box_gitignore(root: str, private: bool) -> list[Step]:
    path = os.path.join(root, ".m1nd", ".gitignore")
    have = _read_gitignore(path)
    want, other = (BIRTH_GITIGNORE, COMMITTED_GITIGNORE) if private else (COMMITTED_GITIGNORE, BIRTH_GITIGNORE)
    steps: list[Step] = []
    if have == want:
        steps.append(Step("gitignore", FOUND, "the box is already " + ("private (ignored)" if private else "committable")))
    elif have is None or have in (other, EARLIER_BIRTH_GITIGNORE):
        atomic_write(path, want, mode=0o644)
        if private:
            steps.append(Step("gitignore", DONE, ".m1nd/.gitignore now ignores inbox.jsonl: the box stays local"))
        else:
            steps.append(Step("gitignore", DONE, ".m1nd/.gitignore no longer ignores inbox.jsonl: the box is committable"))
    else:
        ignored = gitcmd.is_ignored(root)
        rule = gitcmd.ignore_rule(root) if ignored else ""
        verdict = {True: f"git still ignores the box ({rule})" if rule else "git still ignores the box",
                   False: "git does not ignore the box", None: "git cannot say whether it ignores the box"}[ignored]
        steps.append(Step("gitignore", WARN if ignored is (not private) else FOUND,
                          f"left .m1nd/.gitignore alone (its content is yours, not m1nd's): {verdict}"))
        return steps
    # Our own file is in place: does any other rule still disagree?
    ignored = gitcmd.is_ignored(root)
    if not private and ignored:
        rule = gitcmd.ignore_rule(root)
        steps.append(Step("gitignore", WARN, f"but another rule still ignores the box ({rule or 'git check-ignore'}): "
                                             "remove it to let the box travel"))
    if private and gitcmd.is_tracked(root):
        steps.append(Step("gitignore", WARN, "the box is ignored but still tracked, so every change is still "
                                             "committed: git rm --cached .m1nd/inbox.jsonl stops publishing it "
                                             "(m1nd never does that for you)"))
    return steps


def _box_file(root: str) -> Step:
    """The box file exists, so that the consent commit always carries it."""
    path = os.path.join(root, ".m1nd", "inbox.jsonl")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise M1ndError(f"{path} is not a regular file: m1nd never writes a box through one")
        return Step("box", FOUND, ".m1nd/inbox.jsonl exists")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    os.close(fd)
    return Step("box", DONE, "made an empty .m1nd/inbox.jsonl, so that the consent commit carries the box")


def _has_attribute_line(data: bytes) -> bool:
    want = ATTRIBUTE_LINE.split()
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        if line.split() == want:
            return True
    return False


def ensure_attribute(root: str) -> Step:
    path = os.path.join(root, ".gitattributes")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise M1ndError(f"{path} is not a regular file: add the line `{ATTRIBUTE_LINE}` yourself")
    data = b""
    if st is not None:
        with open(path, "rb") as fh:
            data = fh.read()
    if _has_attribute_line(data):
        return Step("gitattributes", FOUND, f".gitattributes already has `{ATTRIBUTE_LINE}`")
    if data and not data.endswith(b"\n"):
        data += b"\n"
    atomic_write(path, data + ATTRIBUTE_LINE.encode() + b"\n", mode=(st.st_mode & 0o777) if st else 0o644)
    return Step("gitattributes", DONE, f"added `{ATTRIBUTE_LINE}` to .gitattributes")


def _next_command(root: str, cwd: str) -> str:
    """What to commit so the box travels, or "" when it is all committed already."""
    paths = [".m1nd", ".gitattributes"]
    res = gitcmd.git(["status", "--porcelain", "--untracked-files=all", "--", *paths], root)
    if res.ok and not res.out.strip():
        return ""
    here = os.path.realpath(cwd) == os.path.realpath(root)
    git = "git" if here else f"git -C {shlex.quote(root)}"
    return f"{git} add {' '.join(paths)} && {git} commit -m 'm1nd: the box travels with the code'"


def init(path: str, paths: Paths, private: bool = False, cwd: str | None = None) -> InitResult:
    from m1nd import roster

    root = gitcmd.work_tree_top(path)
    result = InitResult(root, private)
    steps = result.steps

    added_root, added = roster.add(paths, root)
    steps.append(Step("roster", DONE if added else FOUND,
                      f"{'added to' if added else 'already in'} the roster: {added_root}"))

    box_dir = os.path.join(root, ".m1nd")
    _refuse_symlinks(box_dir)
    if os.path.isdir(box_dir):
        steps.append(Step("box-dir", FOUND, ".m1nd/ exists"))
    else:
        os.mkdir(box_dir, 0o755)
        steps.append(Step("box-dir", DONE, "made .m1nd/"))

    steps.extend(_box_gitignore(root, private))
    if not private:
        steps.append(_box_file(root))
    if private:
        steps.append(Step("gitattributes", FOUND, "private: .gitattributes left as it is"))
    else:
        steps.append(ensure_attribute(root))
    steps.append(ensure_merge_driver(root))

    if not private:  # a private box has nothing to commit
        result.next_command = _next_command(root, cwd or os.getcwd())
        result.warning = PUBLISH_WARNING
    return result
