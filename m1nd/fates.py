"""Fates from the reply graph (contract section 5): derived, never stored.

The foreign markers live here and only here.  `<home>/config.toml` may override
them with `[mailbox] foreign_markers = [...]`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from m1nd.letters import Letter

DEFAULT_FOREIGN_MARKERS = ("context7", "browseros", "playwright", "semgrep")

EXTERNAL = "external"
FIRED_CLAY = "fired_clay"
IN_FLIGHT = "in_flight"
WET_INK = "wet_ink"
STATES = (WET_INK, IN_FLIGHT, FIRED_CLAY, EXTERNAL)
OPEN_STATES = (WET_INK, IN_FLIGHT)


def is_receipt(letter: Letter) -> bool:
    """`class` equal to `triage`, ASCII case-insensitively."""
    return is_receipt_class(letter.klass)


def is_receipt_class(c: str) -> bool:
    return len(c) == 6 and c.isascii() and c.lower() == "triage"


@dataclass(frozen=True)
class ReplyGraph:
    closed: frozenset[str]
    picked_up: frozenset[str]
    answered_by: dict[str, list[str]]
    markers: tuple[str, ...]
    _external: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def state(self, letter: Letter) -> str:
        return self.fate(letter.id, letter.tool)

    def fate(self, letter_id: str, tool: str) -> str:
        """The state of the letter with this id and tool (what `state` asks)."""
        external = self._external.get(tool)  # asked once per letter of a document: no call when known
        if external is None:
            external = self.is_external(tool)
        if external:
            return EXTERNAL
        if letter_id in self.closed:
            return FIRED_CLAY
        if letter_id in self.picked_up:
            return IN_FLIGHT
        return WET_INK

    def is_external(self, tool: str) -> bool:
        return tool_is_external(tool, self.markers, self._external)

    def answers_to(self, letter_id: str) -> list[str]:
        return self.answered_by.get(letter_id, [])


def tool_is_external(tool: str, markers: tuple[str, ...], known: dict[str, bool]) -> bool:
    """Whether a tool's name holds a foreign marker (lowercase `markers`), remembered in `known`."""
    hit = known.get(tool)
    if hit is None:
        lowered = tool.lower()
        hit = known[tool] = any(m in lowered for m in markers)
    return hit


def reply_graph(letters: Iterable[Letter], markers: Iterable[str] = DEFAULT_FOREIGN_MARKERS) -> ReplyGraph:
    """The reply graph over a set of distinct letters (missions already left out)."""
    closed: set[str] = set()
    picked: set[str] = set()
    answered_by: dict[str, list[str]] = {}
    for letter in letters:
        if not letter.answers:
            continue
        target = closed if is_receipt(letter) else picked
        for answered in letter.answers:
            target.add(answered)
            answered_by.setdefault(answered, []).append(letter.id)
    for ids in answered_by.values():
        ids.sort()
    return ReplyGraph(frozenset(closed), frozenset(picked), answered_by, tuple(m.lower() for m in markers))


def count_states(states: Iterable[str]) -> dict[str, int]:
    counts = {s: 0 for s in STATES}
    for s in states:
        counts[s] += 1
    counts["open"] = counts[WET_INK] + counts[IN_FLIGHT]
    return counts
