"""What one command run works over: its paths, its roots, its settings."""

from __future__ import annotations

from dataclasses import dataclass

from m1nd import chunks, config, roster
from m1nd.boxes import Box, medulla_box, project_box
from m1nd.errors import M1ndError
from m1nd.fates import DEFAULT_FOREIGN_MARKERS
from m1nd.paths import Paths, resolve_paths
from m1nd.routing import RootSet, build_roots, find_bound_root


@dataclass(frozen=True)
class Run:
    paths: Paths
    roots: RootSet
    bound: str | None
    markers: tuple[str, ...]
    setup_problems: tuple[str, ...] = ()  # a roster or config that could not be read (tolerant runs)

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
    tolerant: bool = False,
) -> Run:
    """The run's paths, roots and settings.  A roster or config that cannot be read
    fails the command, unless `tolerant` (doctor): then the run goes on without it
    and says so in `setup_problems`."""
    paths = resolve_paths(home, spool)
    bound = find_bound_root(cwd)
    problems = []
    try:
        registered = roster.load(paths)
    except M1ndError as exc:
        if not tolerant:
            raise
        registered = []
        problems.append(exc.message)
    try:
        markers = config.foreign_markers(paths)
    except M1ndError as exc:
        if not tolerant:
            raise
        markers = DEFAULT_FOREIGN_MARKERS
        problems.append(exc.message)
    roots = build_roots(bound, registered, extra_roots or [], paths.home)
    chunks.keep_in(paths.state)  # checksums of settled files, kept for the next command
    return Run(paths, roots, bound, markers, tuple(problems))
