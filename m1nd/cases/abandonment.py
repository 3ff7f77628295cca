"""Abandonment (cases.md 6): a tool that failed, was never called again, and the
session stopped.

The trace is JSONL: calls `{session, ts, tool, verb, outcome}` (`outcome` one of
`ok`, `error`, `wrong`, `abstain`) and stops `{session, ts, event: "stop"}`; other
keys are ignored, except `repo`, which says whose box the letter goes to.  Lines are
taken in file order.  For a session that stopped, its last failing call after which
that tool was never called again (before the stop) files one engine letter, with the
session id in its text, so a trace read twice files it once.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from m1nd.cases import engine
from m1nd.errors import M1ndError

FAILING = ("error", "wrong", "abstain")
OUTCOMES = ("ok",) + FAILING


@dataclass(frozen=True)
class Abandoned:
    session: str
    ts: str
    tool: str
    verb: str
    outcome: str
    repo: str

    def letter(self) -> bytes:
        return engine.abandonment(self.session, self.ts, self.tool, self.verb, self.outcome, self.repo)


@dataclass(frozen=True)
class Trace:
    sessions: int
    abandoned: tuple[Abandoned, ...]  # in order of the sessions' first lines
    unreadable: tuple[tuple[int, str], ...]  # (line number, why)


def _str(obj: dict, key: str) -> str | None:
    value = obj.get(key)
    return value if type(value) is str else None


def read_trace(path: str) -> Trace:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise M1ndError(f"cannot read trace {path}: Is a directory") from None
    except FileNotFoundError:
        raise M1ndError(f"no trace at {path}", exit_code=3) from None
    except OSError as exc:
        raise M1ndError(f"cannot read trace {path}: {exc.strerror}") from None
    unreadable: list[tuple[int, str]] = []
    sessions: dict[str, list[tuple[str, dict]]] = {}
    for number, raw in enumerate(data.split(b"\n"), 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            unreadable.append((number, "not JSON"))
            continue
        if type(obj) is not dict:
            unreadable.append((number, "not an object"))
            continue
        session, ts = _str(obj, "session"), _str(obj, "ts")
        if session is None or ts is None:
            unreadable.append((number, "no string session and ts"))
            continue
        if obj.get("event") == "stop":
            sessions.setdefault(session, []).append(("stop", obj))
            continue
        tool, verb, outcome = _str(obj, "tool"), _str(obj, "verb"), _str(obj, "outcome")
        if tool is None or verb is None or outcome not in OUTCOMES:
            unreadable.append((number, "neither a call (tool, verb, outcome) nor a stop"))
            continue
        sessions.setdefault(session, []).append(("call", obj))
    abandoned = []
    for session, lines in sessions.items():
        repo = next((r for _, o in lines if (r := _str(o, "repo"))), "")
        found = None
        last_call_of: dict[str, int] = {}
        failed: list[int] = []
        for i, (what, obj) in enumerate(lines):
            if what == "stop":
                # the last failure whose tool was not called again before this stop
                for j in reversed(failed):
                    if last_call_of[lines[j][1]["tool"]] == j:
                        o = lines[j][1]
                        found = Abandoned(session, o["ts"], o["tool"], o["verb"], o["outcome"], repo)
                        break
                if found:
                    break
                continue
            last_call_of[obj["tool"]] = i
            if obj["outcome"] in FAILING:
                failed.append(i)
        if found:
            abandoned.append(found)
    return Trace(len(sessions), tuple(abandoned), tuple(unreadable))


@dataclass(frozen=True)
class Filing:
    filed: tuple[str, ...]  # ids of this trace's abandonment letters, in box (new or already there)
    new: int
    problems: tuple[str, ...]


def file_trace(run, trace: Trace) -> Filing:
    """File each abandonment letter into the box of its session's `repo`, else the medulla box."""
    from m1nd import boxes
    from m1nd.boxes import project_box
    from m1nd.letters import letter_id
    from m1nd.routing import MEDULLA, PROJECT

    filed, problems, new = [], [], 0
    for a in trace.abandoned:
        raw = a.letter()
        route = run.roots.resolve("" if a.repo else "medulla", a.repo or "all")
        if route.kind == MEDULLA:
            box = run.medulla
        elif route.kind == PROJECT:
            box = project_box(route.root)
        else:
            problems.append(f"session {a.session}: repository {a.repo} is not known here (m1nd roster add PATH); "
                            "nothing filed")
            continue
        try:
            new += engine.file_into(run, box, [raw])
            filed.append(letter_id(raw))
        except boxes.Refused as exc:
            problems.append(f"session {a.session}: box {box.label} refused: {exc}")
        except OSError as exc:
            problems.append(f"session {a.session}: cannot write {box.path}: {exc.strerror or exc}")
    return Filing(tuple(filed), new, tuple(problems))
