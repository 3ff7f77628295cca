"""What one command run works over: its paths, its roots, its settings."""

from __future__ import annotations

from dataclasses import dataclass

from m1nd import config, roster
from m1nd.boxes import Box, medulla_box, project_box
from m1nd.paths import Paths, resolve_paths
from m1nd.routing import RootSet, build_roots, find_bound_root


@dataclass(frozen=True)
class Run:
    paths: Paths
    roots: RootSet
    bound: str | None
    markers: tuple[str, ...]

    @property
    def medulla(self) -> Box:
        return medulla_box(self.paths.medulla_box)

    def boxes(self) -> list[Box]:
        """Every reachable box: the medulla box, then each reachable root's box."""
        return [self.medulla] + [project_box(r) for r in self.roots.reachable]


def open_run(
    home: str | None = None,
    spool: str | None = None,
    extra_roots: list[str] | None = None,
    cwd: str | None = None,
) -> Run:
    paths = resolve_paths(home, spool)
    bound = find_bound_root(cwd)
    roots = build_roots(bound, roster.load(paths), extra_roots or [], paths.home)
    return Run(paths, roots, bound, config.foreign_markers(paths))
