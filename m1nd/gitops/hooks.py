"""`m1nd hooks install|uninstall|status`: git hook shims, the pre-commit way.

Every shim comes from one template (`hooks/shim.sh`, shipped as package data).  A shim
carries a marker line naming m1nd and its version, and runs m1nd with the interpreter
recorded at install time.  A hook that is not an m1nd shim is never lost: it is moved
to `<hook>.m1nd-chained` and chained (never `.legacy`: the pre-commit framework uses
that name for its own migration; chains an earlier m1nd made as `.legacy` are moved
over at the next install).  A hook written by a hook manager is never chained: the
manager owns its hooks (managers.py).  The hooks directory is `git rev-parse
--git-path hooks`, so worktrees and bare layouts find the shared one.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from m1nd.errors import M1ndError
from m1nd.fsutil import atomic_write
from m1nd.gitops import gitcmd, managers
from m1nd.gitops.hookrun import STAGE_HOOK, SYNC_HOOKS
from m1nd.gitops.managers import Manager
from m1nd.gitops.shimfile import CHAINED_SUFFIX, MARKER, OLD_CHAIN_SUFFIX, SHIM_VERSION, shim_version  # noqa: F401

TEMPLATE_NAME = "shim.sh"
PYTHON_LINE = re.compile(rb"^INSTALL_PYTHON=(.*)$", re.M)
ALL_HOOKS = SYNC_HOOKS + (STAGE_HOOK,)
LEGACY_SUFFIX = CHAINED_SUFFIX  # the name earlier callers used
DETECT_HOOKS = ("pre-commit", "post-checkout", "post-merge", "post-rewrite", "commit-msg", "pre-push",
                "prepare-commit-msg", "post-commit")
PEEK = 16 << 10  # a shim is small; a foreign hook may be a large binary

ABSENT, CURRENT, OUTDATED, FOREIGN = "absent", "current", "outdated", "foreign"


def template_path() -> Path:
    """The shim template: package data in a wheel, `hooks/` in a checkout."""
    packaged = Path(__file__).resolve().parent.parent / "_data" / "hooks" / TEMPLATE_NAME
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "hooks" / TEMPLATE_NAME


def render(hook: str, python: str | None = None) -> bytes:
    text = template_path().read_bytes()
    return (text.replace(b"@M1ND_HOOK@", shlex.quote(hook).encode())
                .replace(b"@M1ND_PYTHON@", shlex.quote(python or sys.executable).encode()))


def _peek(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(PEEK)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:
        return b""


def recorded_python(data: bytes) -> str | None:
    m = PYTHON_LINE.search(data)
    if not m:
        return None
    try:
        words = shlex.split(m.group(1).decode("utf-8", "surrogateescape"))
    except ValueError:
        return None
    return words[0] if words else None


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


@dataclass(frozen=True)
class HookState:
    name: str
    path: str
    state: str  # ABSENT | CURRENT | OUTDATED | FOREIGN
    version: int | None
    legacy: bool  # a chained hook is there: <hook>.m1nd-chained (or .legacy, for shims before v3)
    python: str | None  # the interpreter the shim records
    python_ok: bool
    chain_name: str = CHAINED_SUFFIX  # the suffix of the chained hook this shim runs

    @property
    def is_shim(self) -> bool:
        return self.state in (CURRENT, OUTDATED)

    def as_json(self) -> dict:
        return {
            "hook": self.name,
            "state": self.state,
            "version": self.version,
            "legacy_chained": self.legacy and self.is_shim,
            "legacy": self.legacy,
            "interpreter": self.python,
            "interpreter_found": self.python_ok,
        }

    def describe(self) -> str:
        if self.state == ABSENT:
            text = "not installed"
        elif self.state == FOREIGN:
            text = "a hook that is not m1nd's"
        elif self.state == CURRENT:
            text = f"m1nd shim v{self.version}, current"
        else:
            text = f"m1nd shim v{self.version}, outdated (this m1nd writes v{SHIM_VERSION}: m1nd hooks install)"
        if self.is_shim and not self.python_ok:
            text += f"; its interpreter {self.python} is gone (falls back to m1nd on PATH: m1nd hooks install)"
        if self.legacy:
            chained = f"{self.name}{self.chain_name}"
            text += f"; chains {chained}" if self.is_shim else f"; {chained} is there, not chained"
        return text


def hook_state(hooks_dir: str, name: str) -> HookState:
    path = os.path.join(hooks_dir, name)
    chained = os.path.lexists(path + CHAINED_SUFFIX)
    if not os.path.lexists(path):
        return HookState(name, path, ABSENT, None, chained, None, False)
    data = _peek(path)
    version = shim_version(data)
    if version is None:
        return HookState(name, path, FOREIGN, None, chained, None, False)
    suffix = CHAINED_SUFFIX
    if version < 3 and not chained and os.path.lexists(path + OLD_CHAIN_SUFFIX):
        suffix, chained = OLD_CHAIN_SUFFIX, True  # an earlier shim's chain, migrated by the next install
    python = recorded_python(data or b"")
    state = CURRENT if version == SHIM_VERSION else OUTDATED
    return HookState(name, path, state, version, chained, python, bool(python) and _is_executable(python), suffix)


@dataclass(frozen=True)
class HooksStatus:
    root: str
    hooks_dir: str
    hooks_path: str | None  # core.hooksPath, when a hook manager owns the hooks
    hooks: tuple[HookState, ...]
    manager: Manager | None = None

    def installed(self) -> tuple[HookState, ...]:
        return tuple(h for h in self.hooks if h.is_shim)

    def as_json(self) -> dict:
        return {
            "root": self.root,
            "hooks_dir": self.hooks_dir,
            "core_hooks_path": self.hooks_path,
            "hooks": [h.as_json() for h in self.hooks],
            "manager": self.manager.as_json() if self.manager else None,
        }


def _hooks_dir(root: str) -> tuple[str, str | None]:
    return gitcmd.git_path(root, "hooks"), gitcmd.config_get(root, "core.hooksPath")


def _repo_root(path: str) -> str:
    return gitcmd.work_tree_top(path)


def status(path: str) -> HooksStatus:
    root = _repo_root(path)
    hooks_dir, hooks_path = _hooks_dir(root)
    manager = managers.detect(root, hooks_dir, hooks_path, DETECT_HOOKS)
    return HooksStatus(root, hooks_dir, hooks_path, tuple(hook_state(hooks_dir, n) for n in ALL_HOOKS), manager)


class HooksPathRefused(M1ndError):
    multiline = True  # it carries the snippet for the hook manager's configuration


@dataclass(frozen=True)
class Action:
    hook: str
    action: str  # installed | unchanged | updated | chained | replaced | removed | restored | left
    message: str

    def as_json(self) -> dict:
        return {"hook": self.hook, "action": self.action, "message": self.message}


@dataclass(frozen=True)
class HooksChange:
    root: str
    hooks_dir: str
    actions: tuple[Action, ...]
    notes: tuple[str, ...] = ()

    def as_json(self) -> dict:
        return {"root": self.root, "hooks_dir": self.hooks_dir,
                "actions": [a.as_json() for a in self.actions], "notes": list(self.notes)}


def install(path: str, stage: bool = False, force: bool = False) -> HooksChange:
    root = _repo_root(path)
    hooks_dir, hooks_path = _hooks_dir(root)
    manager = managers.detect(root, hooks_dir, hooks_path, DETECT_HOOKS)
    if manager and not force:
        already = " Its configuration already calls `m1nd hook run`." if manager.calls_m1nd else ""
        raise HooksPathRefused(
            f"{manager.evidence}: {manager.name} owns this repository's hooks, so m1nd installs none "
            f"(m1nd hooks install --force writes into {hooks_dir} anyway).{already}\n"
            f"Add m1nd to {manager.name}'s configuration instead:\n" + managers.instructions(manager.name)
        )
    names = list(SYNC_HOOKS)
    current = {n: hook_state(hooks_dir, n) for n in ALL_HOOKS}
    if stage or current[STAGE_HOOK].is_shim:  # a pre-commit shim installed earlier is kept current
        names.append(STAGE_HOOK)
    plan = _plan(names, current, force)  # refuses before anything is touched
    os.makedirs(hooks_dir, exist_ok=True)
    actions = [_carry_out(hooks_dir, name, action, want, current[name]) for name, action, want in plan]
    notes = []
    if gitcmd.merge_attribute(root) == "m1nd-inbox":  # a fresh clone of a consented repository
        from m1nd.gitops.consent import ensure_merge_driver

        notes.append(ensure_merge_driver(root).message)
    return HooksChange(root, hooks_dir, tuple(actions), tuple(notes))


def _plan(names: list[str], current: dict[str, HookState], force: bool) -> list[tuple[str, str, bytes]]:
    """(hook, action, shim) for every hook to install; raises when one would lose a hook."""
    plan: list[tuple[str, str, bytes]] = []
    for name in names:
        st = current[name]
        want = render(name)
        if st.state == ABSENT:
            plan.append((name, "installed", want))
        elif st.is_shim:
            with open(st.path, "rb") as fh:
                same = fh.read() == want
            plan.append((name, "unchanged" if same else "updated", want))
        elif force:
            plan.append((name, "replaced", want))
        elif st.legacy:
            raise M1ndError(
                f"{st.path} is not an m1nd hook and {st.path}{CHAINED_SUFFIX} already exists: "
                "m1nd will not lose either; move one aside (or --force to replace the hook)"
            )
        else:
            plan.append((name, "chained", want))
    return plan


def _carry_out(hooks_dir: str, name: str, action: str, want: bytes, st: HookState) -> Action:
    path = os.path.join(hooks_dir, name)
    if action == "unchanged":
        return Action(name, action, f"{name}: m1nd shim already installed")
    if action == "chained":
        os.rename(path, path + CHAINED_SUFFIX)
    migrated = ""
    if action == "updated" and st.chain_name == OLD_CHAIN_SUFFIX:
        # An earlier shim chained `<hook>.legacy`: the new one runs `<hook>.m1nd-chained`.
        os.rename(path + OLD_CHAIN_SUFFIX, path + CHAINED_SUFFIX)
        migrated = f"; its chained hook moved from {name}{OLD_CHAIN_SUFFIX} to {name}{CHAINED_SUFFIX}"
    atomic_write(path, want, mode=0o755)
    message = {
        "installed": f"{name}: installed",
        "updated": f"{name}: updated to shim v{SHIM_VERSION}{migrated}",
        "chained": f"{name}: installed; your hook moved to {name}{CHAINED_SUFFIX} and runs first",
        "replaced": f"{name}: installed over a hook that was not m1nd's (--force: not kept)",
    }[action]
    return Action(name, action, message)


def uninstall(path: str) -> HooksChange:
    root = _repo_root(path)
    hooks_dir, _ = _hooks_dir(root)
    actions = []
    for name in ALL_HOOKS:
        st = hook_state(hooks_dir, name)
        chained = st.path + st.chain_name
        if st.is_shim:
            os.unlink(st.path)
            if st.legacy:
                os.rename(chained, st.path)
                actions.append(Action(name, "restored", f"{name}: removed; {name}{st.chain_name} put back"))
            else:
                actions.append(Action(name, "removed", f"{name}: removed"))
        elif st.state == ABSENT and st.legacy:
            os.rename(chained, st.path)
            actions.append(Action(name, "restored", f"{name}: {name}{st.chain_name} put back"))
        elif st.state == FOREIGN:
            actions.append(Action(name, "left", f"{name}: not m1nd's, left alone"))
    return HooksChange(root, hooks_dir, tuple(actions))
