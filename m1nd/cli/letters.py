"""`m1nd write`, `m1nd pickup`, `m1nd answer`: the safe way to add a letter."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from m1nd.cli import output
from m1nd.cli.common import reporting
from m1nd.cli.options import (SYMPTOM_KINDS, Brain, Home, Json, ReplyForce, Repo, Spool, Ts, What, WriteAgent,
                              WriteClass, WriteKind, WriteTool)

Ids = Annotated[list[str], typer.Argument(help="Ids of the letters this one answers.", metavar="ID...")]


def _reply(klass: str, ids: list[str], what: str, repo, agent, ts, force: bool, home, spool,
           disposition=None) -> dict:
    """A reply's fields: ids checked and expanded (section 9), and the answered
    letter's `repo` and `brain` copied, so the reply is filed into its box."""
    from m1nd.errors import UsageError
    from m1nd.lookup import check_given, reply_route, resolve_ids
    from m1nd.run import open_run
    from m1nd.spool import DISPOSITIONS

    if not what.strip():
        raise UsageError("--what must not be empty")
    for value in (what, repo, agent, ts):
        try:
            (value or "").encode("utf-8")
        except UnicodeEncodeError:  # argv bytes that are not UTF-8 arrive surrogate-escaped
            raise UsageError("an argument is not valid UTF-8 text: letters are UTF-8 JSON") from None
    if disposition is not None and disposition not in DISPOSITIONS:
        raise UsageError(f"--disposition must be one of {', '.join(DISPOSITIONS)}")
    check_given(list(ids))
    run = open_run(home=home, spool=spool, tolerant=True)
    resolved = resolve_ids(run, list(ids), force)
    brain = None
    if repo is None and resolved.first is not None:
        repo, brain = reply_route(run, resolved.first)
    return _fields(what, ts=ts, agent=agent, klass=klass, repo=repo, brain=brain, answers=resolved.ids,
                   disposition=disposition)


def _post(fields: dict, home, spool, json_out: bool) -> None:
    import os

    from m1nd.paths import resolve_paths
    from m1nd.secrets import use_cache
    from m1nd.spool import append, compose

    with reporting(json_out):
        paths = resolve_paths(home, spool)
        if os.path.isdir(paths.home):  # a refused letter creates nothing, not even the home
            use_cache(os.path.join(paths.state, "rules"))
        raw = compose(fields)
        letter_id = append(paths, raw)
    if json_out:
        output.emit_json({"id": letter_id})
    else:
        output.emit_text(letter_id)


def _fields(what: str, **kwargs) -> dict:
    import os

    from m1nd.errors import M1ndError
    from m1nd.routing import find_bound_root
    from m1nd.spool import letter_fields

    bound = find_bound_root()
    if bound is not None and kwargs.get("repo") is None:
        try:
            bound.encode("utf-8")
        except UnicodeEncodeError:
            raise M1ndError(f"this repository's path {os.fsencode(bound)!r} is not UTF-8, and letters are UTF-8 "
                            "JSON: name it with --repo NAME") from None
    return letter_fields(what, bound_root=bound, **kwargs)


def write(
    what: What,
    repo: Repo = None,
    brain: Brain = None,
    tool: WriteTool = None,
    klass: WriteClass = None,
    kind: WriteKind = None,
    expected: Annotated[Optional[str], typer.Option("--expected", help="What was expected instead.")] = None,
    snippet: Annotated[Optional[str], typer.Option("--snippet", help="A short excerpt.")] = None,
    answers: Annotated[Optional[list[str]], typer.Option("--answers", help="An id this letter answers (repeatable).", metavar="ID")] = None,
    agent: WriteAgent = None,
    ts: Ts = None,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
) -> None:
    """Append one letter to the spool and print its id."""
    with reporting(json_out):
        fields = _fields(what, ts=ts, agent=agent, klass=klass, kind=kind, repo=repo, brain=brain,
                         tool=tool, expected=expected, snippet=snippet, answers=answers)
    _post(fields, home, spool, json_out)


def pickup(
    ids: Ids,
    what: What,
    repo: Repo = None,
    agent: WriteAgent = None,
    ts: Ts = None,
    force: ReplyForce = False,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
) -> None:
    """Say you are working on letters: they become in flight."""
    with reporting(json_out):
        fields = _reply("pickup", ids, what, repo, agent, ts, force, home, spool)
    _post(fields, home, spool, json_out)


def answer(
    ids: Ids,
    what: What,
    disposition: Annotated[Optional[str], typer.Option("--disposition", help="fixed, declined or moot.")] = None,
    fingerprint: Annotated[Optional[str], typer.Option(
        "--fingerprint", help="The case this receipt settles, e.g. fp:north/false_absence (m1nd cases lists them).",
        metavar="FP")] = None,
    case_id: Annotated[Optional[str], typer.Option("--case-id", help="A name for the case (with --fingerprint).",
                                                   metavar="ALIAS")] = None,
    sentinel: Annotated[Optional[str], typer.Option(
        "--sentinel", help="A command that exits 0 while the symptom is absent, guarding a fixed case "
        "(runs only once allowed: m1nd sentinels allow ID).", metavar="PROBE")] = None,
    repo: Repo = None,
    agent: WriteAgent = None,
    ts: Ts = None,
    force: ReplyForce = False,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
) -> None:
    """Write a receipt for letters: they become answered (fired clay)."""
    with reporting(json_out):
        case = _case_fields(disposition, fingerprint, case_id, sentinel)
        fields = _reply("triage", ids, what, repo, agent, ts, force, home, spool, disposition)
        fields.update(case)
    _post(fields, home, spool, json_out)


def _case_fields(disposition, fingerprint, case_id, sentinel) -> dict:
    """A receipt's case fields (cases.md): a fingerprint of the eight kinds, a case id and
    a sentinel only with it, and a sentinel only on a fixed case."""
    from m1nd.errors import UsageError

    if fingerprint is None:
        if case_id is not None or sentinel is not None:
            raise UsageError("--case-id and --sentinel need --fingerprint FP (the case they belong to)")
        return {}
    family, slash, kind = fingerprint.removeprefix("fp:").rpartition("/")
    if not fingerprint.startswith("fp:") or not slash or kind not in SYMPTOM_KINDS:
        raise UsageError(f"not a fingerprint: {fingerprint!r} (fp:FAMILY/KIND, KIND one of {', '.join(SYMPTOM_KINDS)})")
    if disposition is None:
        raise UsageError("--fingerprint needs --disposition fixed, declined or moot (a case is born from it)")
    fields = {"fingerprint": fingerprint}
    if case_id is not None:
        if not case_id.strip():
            raise UsageError("--case-id must not be empty")
        fields["case_id"] = case_id
    if sentinel is not None:
        if disposition != "fixed":
            raise UsageError("--sentinel guards a fix: it needs --disposition fixed")
        if not sentinel.strip():
            raise UsageError("--sentinel must not be empty")
        fields["sentinel"] = {"probe": sentinel, "expect": "absent"}
    return fields
