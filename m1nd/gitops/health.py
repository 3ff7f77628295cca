"""The doctor's `consent` and `git` checks (mailbox contract section 8, spec/git.md).

`consent`: for each project box, whether it is local (ignored) or committed.
`git`: per repository, whether the merge driver is configured where `.gitattributes`
asks for it, which hook shims are installed (current or outdated) and whether a
hook is chained, which hook manager owns the hooks and whether it calls m1nd, and the
letters of a consented box that are in no box at all (spec/git.md section 3).  Both
only read; they spawn a few `git` commands per root.
"""

from __future__ import annotations

import os
import shlex

from m1nd.boxes import project_box, refusal
from m1nd.gitops import gitcmd

OK, WARN = "ok", "warn"


def _check(name: str, status: str, message: str, fix: str = ""):
    from m1nd.checks import Check

    return Check(name, status, message, fix)


def _git_roots(run) -> list:
    """Reachable roots that are the top level of a git work tree."""
    found = []
    for root in run.roots.reachable:
        if not os.path.lexists(os.path.join(root.path, ".git")):  # git would name another top level, or none
            continue
        res = gitcmd.git(["rev-parse", "--show-toplevel"], root.path)
        if res.ok and os.path.realpath(res.out) == root.real:
            found.append(root)
    return found


def _cmd(run, command: str, root) -> str:
    """A fix command for this root: bare when it is the bound repository."""
    if run.bound is not None and os.path.realpath(run.bound) == root.real:
        return command
    return f"{command} {shlex.quote(root.path)}"


def _in_work_tree(path: str) -> bool:
    """Whether some directory from `path` up holds a `.git`: without one, git finds no
    work tree there (the variables that would point it elsewhere are cleared, gitcmd),
    so a doctor over roots that are not repositories spawns no git at all."""
    path = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(path, ".git")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


def box_state(root_path: str, seen: dict | None = None) -> str:
    """`local`, `committed` or `ignored-but-tracked` (or `not in a git work tree`).
    `seen`: the states one doctor already asked git for (consent, then git, ask twice)."""
    if seen is None:
        seen = {}
    if root_path not in seen:
        seen[root_path] = _box_state(root_path)
    return seen[root_path]


def _box_state(root_path: str) -> str:
    if not _in_work_tree(root_path):
        return "not in a git work tree"
    ignored = gitcmd.is_ignored(root_path)
    if ignored is None:
        return "not in a git work tree"
    if not ignored:
        return "committed"
    return "ignored-but-tracked" if gitcmd.is_tracked(root_path) else "local"


def consent_check(run, seen: dict | None = None):
    states, warnings, fix = [], False, ""
    for root in run.roots.reachable:
        if not os.path.lexists(root.box_dir):
            continue
        if refusal(project_box(root)):  # git will not look through a symlink either
            states.append(f"{root.label}: refused (see the boxes check)")
            continue
        state = box_state(root.path, seen)
        if state == "ignored-but-tracked":
            warnings = True
            states.append(f"{root.label}: local by its .gitignore but still tracked, so still committed")
            fix = fix or f"git -C {shlex.quote(root.path)} rm --cached .m1nd/inbox.jsonl"
        else:
            states.append(f"{root.label}: {state}")
    if not states:
        return _check("consent", OK, "no project boxes yet")
    return _check("consent", WARN if warnings else OK, "; ".join(states), fix)


def _driver_state(root_path: str) -> tuple[str, bool]:
    """(description, healthy) of the merge driver for one repository."""
    from m1nd.gitops.consent import DRIVER_KEY, driver_interpreter

    asked = gitcmd.merge_attribute(root_path) == "m1nd-inbox"
    driver = gitcmd.config_get(root_path, DRIVER_KEY)
    if not asked:
        return ("no merge attribute" + (" (driver configured)" if driver else ""), True)
    if not driver:
        return (".gitattributes asks for the m1nd-inbox merge driver but it is not configured in this clone", False)
    python = driver_interpreter(driver)
    if python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        return (f"the merge driver's interpreter {python} is gone", False)
    return ("merge driver configured", True)


def _hooks_state(root_path: str) -> tuple[str, bool]:
    from m1nd.gitops import hooks
    from m1nd.errors import M1ndError

    try:
        st = hooks.status(root_path)
    except M1ndError as exc:
        return (f"hooks unknown ({exc.message})", True)
    installed = st.installed()
    if st.manager is not None:
        text = st.manager.describe()
        if installed:
            text += f"; m1nd shims in {st.hooks_dir} too ({', '.join(h.name for h in installed)}), " \
                    f"which {st.manager.name} may replace"
        return (text, st.manager.calls_m1nd)
    manager = f"core.hooksPath={st.hooks_path}; " if st.hooks_path else ""
    if not installed:
        return (manager + "no hooks", True)
    parts, healthy = [], True
    for h in installed:
        text = f"{h.name} {h.state}"
        if h.state != hooks.CURRENT or not h.python_ok:
            healthy = False
            if not h.python_ok:
                text += " (interpreter gone)"
        if h.legacy:
            text += f" chaining {h.name}{h.chain_name}"
        parts.append(text)
    return (manager + "hooks: " + ", ".join(parts), healthy)


def unfiled_from_files(run, spool):
    """`unfiled(root)` over a spool read from the file: ids of the spool's letters routed
    to `root`'s box (held letters left out) that the box does not hold, in spool order."""
    from m1nd.boxes import Refused, read_box
    from m1nd.routing import PROJECT
    from m1nd.secrets import likely_secret

    def unfiled(root) -> list[str]:
        routed = [letter.id for _, letter in spool.letters
                  if (route := run.roots.resolve(letter.brain, letter.repo)).kind == PROJECT
                  and route.root.real == root.real and not likely_secret(letter.raw)]
        if not routed:
            return []
        try:
            in_box = {l.id for _, l in read_box(project_box(root)).letters}
        except (Refused, OSError):
            return []
        return [i for i in dict.fromkeys(routed) if i not in in_box]

    return unfiled


def letters_in_danger(root, unfiled) -> list[str]:
    """Ids of the spool's letters routed to this consented box that are neither in it
    nor in any local branch's (or stash's) version of it: in no box (spec/git.md 3)."""
    from m1nd.gitops.committed import committed_ids

    missing = unfiled(root)
    if missing:
        held = committed_ids(root.box)
        missing = [i for i in missing if i not in held]
    return missing


def _danger_note(run, root, unfiled) -> tuple[str, str]:
    """Letters of this consented box in neither it nor any commit, branch or stash: those
    the filing record says were filed are in no box (git dropped them: in danger); the
    others are waiting to be filed.  The fix is the same safe filing."""
    from m1nd import filed
    from m1nd.gitops.safety import operation_in_progress, work_tree_top
    from m1nd.words import plural

    missing = letters_in_danger(root, unfiled)
    if not missing:
        return "", ""
    recorded = filed.filed_ids(run.paths, project_box(root).path)
    dropped = [i for i in missing if i in recorded]
    waiting = [i for i in missing if i not in recorded]

    def listed(ids):
        return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")

    busy = operation_in_progress(work_tree_top(root.path) or root.path)
    safe = "commit with the pre-commit hook (m1nd hooks install --stage), or m1nd distribute"
    fix = f"once git is done with {busy}: {safe}" if busy else safe
    parts = []
    if dropped:
        parts.append(f"{plural(len(dropped), 'letter')} in no box ({listed(dropped)}): filed, then dropped by git "
                     f"before any commit held {'it' if len(dropped) == 1 else 'them'}; still in the spool")
    if waiting:
        parts.append(f"{plural(len(waiting), 'letter')} waiting to be filed ({listed(waiting)}): in the spool, "
                     f"not yet in the box nor in any commit, branch or stash")
    return "; ".join(parts), fix


def git_check(run, unfiled=None, seen: dict | None = None):
    """The `git` check; `unfiled(root)` (when the spool could be read) names the spool's
    letters routed to a root that its box does not hold."""
    roots = _git_roots(run)
    if not roots:
        return _check("git", OK, "no git repositories among the roots")
    notes, fix, status = [], "", OK
    for root in roots:
        danger, danger_fix = "", ""
        if unfiled is not None and os.path.isdir(root.box_dir) and box_state(root.path, seen) == "committed":
            danger, danger_fix = _danger_note(run, root, unfiled)
        if danger:
            notes.append(f"{root.label}: {danger}")
            status = WARN
            fix = fix or danger_fix
        if refusal(project_box(root)):
            box = "box refused"
        elif os.path.isdir(root.box_dir):
            box = f"box {box_state(root.path, seen)}"
        else:
            box = "no box yet"
        driver, driver_ok = _driver_state(root.path)
        hooks_text, hooks_ok = _hooks_state(root.path)
        notes.append(f"{root.label}: {box}; {driver}; {hooks_text}")
        if not driver_ok:
            status = WARN
            fix = fix or _cmd(run, "m1nd init", root)
        if not hooks_ok:
            status = WARN
            fix = fix or _cmd(run, "m1nd hooks install", root)
    return _check("git", status, "; ".join(notes), fix)
