"""The ownership law (contract section 3): roots, labels, known names, resolve.

Pure decisions over paths and strings: nothing here reads or writes a box.  The only
filesystem access is `realpath` / `isdir`, which the law itself asks for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from m1nd.paths import absolute, refused_root

ASCII_WS = " \t\n\r\x0b\x0c"

PROJECT = "project"
MEDULLA = "medulla"
PENDING = "pending"


def find_bound_root(cwd: str | None = None) -> str | None:
    """The top level of the git work tree holding `cwd`, or None.

    Git decides (`git rev-parse --show-toplevel`): a `.git` entry is not enough (an
    empty `.git` file planted in a directory does not make it a root).  A walk up
    for a `.git` entry comes first, so that outside every repository no git process
    is spawned; the path keeps the spelling of the walk when it is git's top level
    (symlinks not resolved, as roots keep their given form).
    """
    here = os.path.abspath(cwd or os.getcwd())
    probe = here
    while not os.path.lexists(os.path.join(probe, ".git")):
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent
    from m1nd.errors import M1ndError
    from m1nd.gitops import gitcmd

    try:
        res = gitcmd.git(["rev-parse", "--show-toplevel"], here)
    except M1ndError:  # git is not installed: the walk's answer is the best there is
        return probe
    if not res.ok or not res.out:
        return None
    top = res.out
    if os.path.realpath(probe) == os.path.realpath(top):
        return probe
    return top


def _home_dir() -> str:
    return os.environ.get("HOME") or os.path.expanduser("~")


def cut_annotation(field: str) -> str:
    """Step 1 of normalize: cut at the first `(` and trim ASCII whitespace."""
    return field.split("(", 1)[0].strip(ASCII_WS)


def path_form(field: str) -> str:
    """Steps 1 and 2 of normalize: the field as a path-like string."""
    s = cut_annotation(field)
    if s == "~" or s.startswith("~/"):
        s = _home_dir() + s[1:]
    # Trim, then remove trailing "/": a field of only slashes becomes "" (contract 3, step 2).
    return s.strip(ASCII_WS).rstrip("/")


def normalize(field: str, base: str = "", labels: frozenset[str] = frozenset()) -> str:
    """Steps 1-4 of normalize.  Step 4 (a worktree name `base-fix` folds into `base`)
    never folds a name that is the label of a root of the run (`labels`, lowercased)."""
    s = path_form(field)
    name = s.rsplit("/", 1)[-1]
    if name in ("", ".", ".."):
        name = s
    if base and (name == base or name.startswith(base + "-")) and name.lower() not in labels:
        name = base
    return name


def _inside(path: str, root: str) -> bool:
    if path == root:
        return True
    prefix = root if root.endswith("/") else root + "/"
    return path.startswith(prefix)


def _realpath(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):  # embedded NUL, too long, loops
        return None


@dataclass(frozen=True)
class Root:
    path: str  # absolute, as first given
    real: str  # symlinks resolved
    label: str
    reachable: bool
    refused: str | None = None  # why it is never filed into (its box would lie in the home)

    @property
    def key(self) -> str:
        return self.label.lower()

    @property
    def box_dir(self) -> str:
        return os.path.join(self.path, ".m1nd")

    @property
    def box(self) -> str:
        return os.path.join(self.path, ".m1nd", "inbox.jsonl")


@dataclass(frozen=True)
class Route:
    kind: str  # PROJECT | MEDULLA | PENDING
    root: Root | None = None
    name: str = ""  # the pending name


ROUTE_MEDULLA = Route(MEDULLA)


class RootSet:
    """The roots of one run and the ownership law over them."""

    def __init__(self, roots: list[Root], base: str, home: str) -> None:
        self.roots = tuple(roots)
        self.base = base
        self.home = home
        keys: dict[str, list[Root]] = {}
        for root in self.roots:
            if root.reachable:
                keys.setdefault(root.key, []).append(root)
        self.known = {k: v[0] for k, v in keys.items() if len(v) == 1}
        self.labels = frozenset(r.key for r in self.roots)
        self.ambiguous = {k: tuple(v) for k, v in keys.items() if len(v) > 1}
        self._cache: dict[tuple[str, str], Route] = {}
        self._tops: dict[str, bool] = {}  # directory (real) -> is it a git work tree's top level

    @property
    def reachable(self) -> tuple[Root, ...]:
        return tuple(r for r in self.roots if r.reachable)

    @property
    def unreachable(self) -> tuple[Root, ...]:
        return tuple(r for r in self.roots if not r.reachable)

    def is_projectless(self, field: str) -> bool:
        step1 = cut_annotation(field).lower()
        if step1 in ("", "all") or step1.startswith("research task"):
            return True
        form = path_form(field)
        return _inside(form, self.home)

    def resolve(self, brain: str, repo: str) -> Route:
        key = (brain, repo)
        route = self._cache.get(key)
        if route is None:
            route = self._cache[key] = self._resolve(brain, repo)
        return route

    def _resolve(self, brain: str, repo: str) -> Route:
        field = repo
        trimmed_brain = brain.strip(ASCII_WS)
        if trimmed_brain:
            field = brain
            if cut_annotation(brain).lower() == "medulla":
                return ROUTE_MEDULLA
            if trimmed_brain.lower().startswith("project:"):
                field = trimmed_brain[len("project:"):]
        if self.is_projectless(field):
            return ROUTE_MEDULLA
        form = path_form(field)
        if form.startswith("/"):
            root = self._deepest_root_holding(form)
            if root is not None:
                return Route(PROJECT, root)
        name = normalize(field, self.base, self.labels)
        root = self.known.get(name.lower())
        if root is not None:
            return Route(PROJECT, root)
        return Route(PENDING, name=name)

    def _deepest_root_holding(self, path: str) -> Root | None:
        real = _realpath(path)
        if real is None:
            return None
        best = None
        for root in self.roots:
            if root.reachable and _inside(real, root.real):
                if best is None or len(root.real) > len(best.real):
                    best = root
        if best is None:
            return None
        return self._nested_root(real, best) or best

    def _nested_root(self, real: str, outer: Root) -> Root | None:
        """The deepest git work tree holding `real` below the root `outer` (a submodule,
        a clone inside another), made a root of the run: a letter for a path inside it
        goes to its box, whichever directory the command runs in (contract section 3,
        step 4).  One `lexists` per directory level; git confirms a `.git` it finds."""
        probe = real
        while probe != outer.real and _inside(probe, outer.real):
            if os.path.lexists(os.path.join(probe, ".git")) and self._is_top(probe):
                return self.adopt(probe)
            probe = os.path.dirname(probe)
        return None

    def _is_top(self, directory: str) -> bool:
        known = self._tops.get(directory)
        if known is None:
            top = find_bound_root(directory)
            known = self._tops[directory] = top is not None and _realpath(top) == directory
        return known

    def adopt(self, path: str) -> Root | None:
        """Make the work tree at `path` a root of this run (as if given with `--root`):
        labelled, known when its label is unique, swept.  None when it cannot be one."""
        real = _realpath(path) or path
        for root in self.roots:
            if root.real == real:
                return root if root.reachable else None
        if refused_root(real, self.home) or not os.path.isdir(real):
            return None
        root = Root(path, real, normalize(path), True)
        self.__init__(list(self.roots) + [root], self.base, self.home)
        return root

    def nested_root(self, path: str) -> Root | None:
        """A root of this run at `path`, adopting it when it is a git work tree nested
        in one of the roots (a route an earlier run saved names it)."""
        real = _realpath(path) or path
        for root in self.roots:
            if root.real == real:
                return root
        outer = self._deepest_root_holding(os.path.dirname(real))
        if outer is None:
            return None
        if self._is_top(real) and outer.real != real:
            return self.adopt(path)
        return None


def _root_path(given: str) -> str:
    """A root made absolute with `~` expanded.  A `~user` form naming no possible user
    (an embedded NUL, say, from a hand-edited roster) is kept as written, made
    absolute: an unreachable root, never a crash."""
    try:
        return absolute(given)
    except ValueError:  # expanduser looks the user up: embedded NUL, unencodable name
        return os.path.abspath(given).rstrip("/") or "/"


def build_roots(bound: str | None, roster: list[str], extra: list[str], home: str) -> RootSet:
    """Roots in law order: bound root, roster, `--root`s; deduplicated by real path."""
    base = os.path.basename(absolute(bound)) if bound else ""
    seen: set[str] = set()
    roots: list[Root] = []
    for given in ([bound] if bound else []) + list(roster) + list(extra):
        path = _root_path(given)
        real = _realpath(path) or path
        if real in seen:
            continue
        seen.add(real)
        # A root's label is never folded (contract section 3): `web-admin` stays itself.
        refused = refused_root(real, home)
        roots.append(Root(path, real, normalize(path), os.path.isdir(path) and not refused, refused))
    return RootSet(roots, base, home)
