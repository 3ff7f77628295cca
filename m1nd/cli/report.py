"""Long because its subcommands share the group's options (`_opts`) and clock (`_now`): one group, one module.

`m1nd report` and its subcommands: profile, prepare, commit, deliver, status,
list, render, alert (reports contract)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from m1nd.cli import output
from m1nd.cli.common import open_run, reporting
from m1nd.cli.options import (Home, Json, Now, Profile, ReportLimit, ReportSince, ReportUntil, Roots, Spool, To,
                              WindowSince, WindowUntil)
from m1nd.words import plural

app = typer.Typer(help="Scheduled and on-demand mailbox reports that never lose a letter.",
                  invoke_without_command=True, no_args_is_help=False)


def _now(now):
    """The command's clock.  `--now` becomes M1ND_NOW for the rest of this process, so
    that everything the command calls (the read model's ledger records included)
    keeps the same time."""
    import os

    from m1nd.clock import parse_now, stamp

    moment = parse_now(now)
    if now:
        os.environ["M1ND_NOW"] = stamp(moment)
    return moment


def _window_has_start(since: str | None, until: str | None, what: str) -> None:
    from m1nd.errors import UsageError

    if until is not None and since is None:
        raise UsageError(f"--until needs --since ({what})")


def _time(value: str | None, flag: str):
    from m1nd.clock import parse_now
    from m1nd.errors import UsageError

    if value is None:
        return None
    if not value.strip():
        raise UsageError(f"{flag} needs a time")
    try:
        return parse_now(value)
    except UsageError as exc:
        raise UsageError(f"{flag}: {exc.message}") from None


def _setup(home, spool, roots, profile):
    from m1nd.reports.profiles import find_profile

    run = open_run(home, spool, roots)
    return run, find_profile(run.paths, profile)


@app.callback()
def report(
    ctx: typer.Context,
    profile: Profile = None,
    to: To = None,
    since: ReportSince = None,
    until: ReportUntil = None,
    now: Now = None,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Prepare, commit and deliver the due report, and print it; say so when nothing is due."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"profile": profile, "to": to, "now": now, "json": json_out, "home": home, "spool": spool,
                   "roots": roots}
        return
    from m1nd.reports.runner import run_report

    with reporting(json_out):
        _window_has_start(since, until, "a manual report")
        moment = _now(now)
        start, end = _time(since, "--since"), _time(until, "--until")
        run = open_run(home, spool, roots)
        from m1nd.reports.profiles import find_profile, to_run

        # a manual window is one report, of the named or the default profile
        chosen = [find_profile(run.paths, profile)] if start is not None else to_run(run.paths, profile)
        outcomes = [run_report(run, prof, moment, to, start, end) for prof in chosen]
    if json_out:
        docs = [o.as_json() for o in outcomes]
        output.emit_json(docs[0] if len(docs) == 1 else {"profiles": docs})
    for outcome in outcomes:
        if not json_out:
            _print_outcome(outcome)
    if any(o.failed for o in outcomes):
        raise typer.Exit(1)


def _print_outcome(outcome) -> None:
    if outcome.disabled:
        output.emit_text(f"profile {outcome.profile} is off (enabled = false): nothing generated or delivered, "
                         "its cursor kept")
    elif not outcome.due and not outcome.deliveries:
        output.emit_text(f"nothing due for profile {outcome.profile}: next report at {outcome.next_boundary}"
                         + outcome.note)
    else:
        shown = False
        for d in outcome.deliveries:
            if d.markdown is not None:
                _emit_chunks(d.markdown_chunks())
                shown = True
            if d.status == "failed":
                output.error_line(f"report {d.run_id} not delivered to {d.sink}: {d.message} (it stays in the outbox)")
        if not shown and outcome.prepared is not None:
            from m1nd.reports.render import markdown_chunks

            _emit_chunks(markdown_chunks(outcome.prepared.frozen))


def _emit_chunks(chunks) -> None:
    """`output.emit_text` of the UTF-8 text these chunks make, written a run of whole
    lines at a time (a report's Markdown may be large)."""
    rest, last = b"", b""
    for chunk in chunks:
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            _write_lines(data[:cut].decode("utf-8"))
            last = data[cut - 1:cut]
        rest = data[cut:]
    if rest or last != b"\n":  # emit_text ends what it prints with a newline
        output.emit_text(rest.decode("utf-8"))


def _write_lines(text: str) -> None:
    """What `output.emit_text` writes for whole lines (it is character by character)."""
    import sys

    from m1nd.safetext import safe_lines

    sys.stdout.flush()
    sys.stdout.buffer.write(safe_lines(text).encode("utf-8", "surrogateescape"))
    sys.stdout.flush()


def _opts(ctx, **given):
    base = dict(ctx.obj or {})
    for key, value in given.items():
        if value not in (None, False, []):
            base[key] = value
    return base


@app.command("profile")
def profile_cmd(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(help="Profile name or alias (default: the default profile).")] = None,
    json_out: Json = False,
    home: Home = None,
) -> None:
    """Show a profile's schedule, timezone, boxes and delivery (no effects)."""
    import os

    from m1nd.reports.freeze import profile_boxes
    from m1nd.reports.profiles import find_profile


    o = _opts(ctx, json=json_out, home=home)
    with reporting(o.get("json", False)):
        run = open_run(o.get("home"), None, None)
        prof = find_profile(run.paths, name or o.get("profile"))
        doc = prof.as_json(profile_boxes(run, prof))
    if o.get("json"):
        output.emit_json(doc)
        return
    output.emit_text(f"profile {doc['name']}" + (f" (aliases: {', '.join(doc['aliases'])})" if doc["aliases"] else ""))
    for rule in doc["rrules"]:
        output.emit_text(f"  rule      {rule}")
    output.emit_text(f"  timezone  {doc['timezone']}")
    output.emit_text(f"  boxes     {', '.join(doc['boxes'])}")
    # the JSON is the contract's five keys; the rest of what the profile does is said here
    output.emit_text(f"  enabled   {'yes' if prof.enabled else 'no (enabled = false: nothing made or delivered)'}")
    output.emit_text(f"  sink      {prof.sink or '(default) ' + os.path.join(run.paths.home, 'reports')}")
    output.emit_text(f"  attempts  {prof.max_attempts} per report and sink, then marked failed")
    output.emit_text(f"  alerts    {', '.join(prof.alert_classes) or 'none'} (classes that make an update)")
    output.emit_text(f"  cooldown  {prof.cooldown} min between updates")


@app.command("prepare")
def prepare_cmd(
    ctx: typer.Context,
    profile: Profile = None,
    since: WindowSince = None,
    until: WindowUntil = None,
    now: Now = None,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Freeze the due period (or a manual window) into a report; print its run id and digest."""
    from m1nd.reports import freeze, store
    from m1nd.reports.runner import nothing_due

    o = _opts(ctx, profile=profile, now=now, json=json_out, home=home, spool=spool, roots=roots)
    with reporting(o.get("json", False)):
        _window_has_start(since, until, "a manual window")
        moment = _now(o.get("now"))
        start, end = _time(since, "--since"), _time(until, "--until")
        run, prof = _setup(o.get("home"), o.get("spool"), o.get("roots"), o.get("profile"))
        with store.profile_lock(run.paths, prof.name):
            prepared = freeze.prepare(run, prof, moment, start, end)
        nb = None if prepared else nothing_due(run, prof, moment)[1]
    if prepared is None:
        doc = {"run_id": None, "profile": prof.name, "status": "nothing-due", "next_boundary": nb}
        if o.get("json"):
            output.emit_json(doc)
        else:
            output.emit_text(f"nothing due for profile {prof.name}: next report at {nb}")
        return
    doc = prepared.as_json()
    if o.get("json"):
        output.emit_json(doc)
        return
    output.emit_text(f"prepared {doc['run_id']} ({doc['classification']}, {doc['period']['start']} → "
                     f"{doc['period']['end']}): {plural(doc['entries'], 'entry', 'entries')} on "
                     f"{plural(doc['pages'], 'page')}")
    output.emit_text(f"next: m1nd report commit {doc['run_id']} --digest {doc['digest']}")


@app.command("commit")
def commit_cmd(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The run id printed by prepare.")],
    digest: Annotated[str, typer.Option("--digest", help="The report digest printed by prepare.", metavar="D")],
    now: Now = None,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Check every page against its digest, then advance the cursor and queue delivery."""
    from m1nd.reports import freeze, store
    from m1nd.reports.profiles import find_profile

    o = _opts(ctx, now=now, json=json_out, home=home, spool=spool, roots=roots)
    with reporting(o.get("json", False)):
        _now(o.get("now"))
        run = open_run(o.get("home"), o.get("spool"), o.get("roots"))
        name = freeze.profile_of_run(run.paths, _run_id(run_id))
        prof = find_profile(run.paths, name)
        with store.profile_lock(run.paths, prof.name):
            result = freeze.commit(run, prof, run_id, digest)
    if o.get("json"):
        output.emit_json(result.as_json())
    else:
        output.emit_text(f"{result.status} {result.run_id}" + (f": cursor at {result.cursor}" if result.cursor else ""))


def _run_id(text: str) -> str:
    from m1nd.errors import UsageError
    from m1nd.reports.freeze import is_run_id

    if not is_run_id(text):
        raise UsageError(f"not a run id: {text!r}")
    return text


@app.command("deliver")
def deliver_cmd(
    ctx: typer.Context,
    profile: Profile = None,
    to: To = None,
    retry: Annotated[Optional[str], typer.Option("--retry", help="Try a report marked failed again.", metavar="RUN_ID")] = None,
    now: Now = None,
    json_out: Json = False,
    home: Home = None,
) -> None:
    """Hand every outbox report (of every profile, or of --profile) to its sink; a failed delivery stays for the next try."""
    from m1nd.paths import resolve_paths
    from m1nd.reports import deliver, store
    from m1nd.reports.profiles import find_profile, load_profiles

    o = _opts(ctx, profile=profile, to=to, now=now, json=json_out, home=home)
    with reporting(o.get("json", False)):
        moment = _now(o.get("now"))
        paths = resolve_paths(o.get("home"))
        if o.get("profile"):
            chosen = [find_profile(paths, o.get("profile"))]
        else:
            chosen = [p for _, p in sorted(load_profiles(paths).items())]
        results, names = [], []
        deliver.timeout_seconds()  # a bad M1ND_REPORT_TIMEOUT is refused before anything is tried
        if retry is not None:
            _run_id(retry)
            if not any(retry in store.load_state(paths, p.name).outbox_runs() for p in chosen):
                from m1nd.errors import NotFound

                raise NotFound(f"no report {retry} waits in an outbox (m1nd report status lists them)")
        for prof in chosen:
            if not prof.enabled or not o.get("profile") and not store.load_state(paths, prof.name).outbox:
                continue
            names.append(prof.name)
            own = deliver.parse_sink(prof.sink, paths)
            to_sink = deliver.parse_sink(o.get("to"), paths) if o.get("to") else None
            with store.profile_lock(paths, prof.name):
                results += deliver.deliver(paths, prof.name, own, moment, max_attempts=prof.max_attempts,
                                           retry=retry, to=to_sink)
    if o.get("json"):
        doc = {"profile": chosen[0].name} if o.get("profile") else {"profiles": names}
        output.emit_json({**doc, "deliveries": [r.as_json() for r in results]})
    else:
        if not results:
            which = f"outbox of profile {chosen[0].name} is" if o.get("profile") else "every outbox is"
            output.emit_text(f"{which} empty: nothing to deliver")
        for r in results:
            if r.status == "failed":
                output.error_line(f"report {r.run_id} not delivered to {r.sink}: {r.message} (it stays in the outbox)")
            else:
                output.emit_text(f"{r.status} {r.run_id} to {r.sink} (verified: {str(r.verified).lower()})")
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)


@app.command("status")
def status_cmd(ctx: typer.Context, now: Now = None, json_out: Json = False, home: Home = None) -> None:
    """Each profile's cursor, next boundary, outbox and last receipts."""
    from m1nd.clock import stamp
    from m1nd.documents.reports import report_status
    from m1nd.paths import resolve_paths

    o = _opts(ctx, now=now, json=json_out, home=home)
    with reporting(o.get("json", False)):
        moment = _now(o.get("now"))
        doc = report_status(resolve_paths(o.get("home")), moment)
    if o.get("json"):
        output.emit_json(doc)
        return
    for name, p in doc["profiles"].items():
        output.emit_text(f"{name}: cursor {p['cursor'] or 'none yet'}, next boundary {p['next_boundary']}, "
                         f"outbox {len(p['outbox'])}, receipts {len(p['receipts'])}"
                         + ("" if p["enabled"] else ", off (enabled = false)")
                         + "".join(f", failed {r} (m1nd report deliver --retry {r})" for r in p["failed"])
                         + f", last update {p['last_update'] or 'none yet'}"
                         + (f" (cooldown until {p['cooldown_until']})" if p["cooldown_until"] and
                            p["cooldown_until"] > stamp(moment) else f" (cooldown {p['cooldown_minutes']} min)"))


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    limit: ReportLimit = 100,
    offset: Annotated[int, typer.Option("--offset", min=0, max=10000, help="Skip this many (0-10000).")] = 0,
    json_out: Json = False,
    home: Home = None,
) -> None:
    """Delivered reports, newest first."""
    from m1nd.documents.reports import report_list
    from m1nd.paths import resolve_paths

    o = _opts(ctx, json=json_out, home=home)
    with reporting(o.get("json", False)):
        listing = report_list(resolve_paths(o.get("home")), limit, offset)
    if o.get("json"):
        output.emit_json(listing.as_json())
        return
    if not listing.reports:
        output.emit_text("no delivered reports")
    for r in listing.reports:
        output.emit_text(f"{r['delivered_at']}  {r['run_id']}  {r['profile']}  {r['classification']}  "
                         f"{r['period']['start']} → {r['period']['end']}  {r['sink']}")
    if listing.truncated:
        output.emit_text(f"… {listing.after} more (--offset {offset + len(listing.reports)})")


@app.command("render")
def render_cmd(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="The run to render.")],
    fmt: Annotated[str, typer.Option("--format", help="md, html or json.", metavar="FORMAT")] = "md",
    out: Annotated[Optional[str], typer.Option("--out", help="Write to FILE instead of stdout.", metavar="FILE")] = None,
    home: Home = None,
) -> None:
    """Render a frozen report (checked against its digests) as Markdown, HTML or JSON."""
    from m1nd.errors import M1ndError, NotFound, UsageError
    from m1nd.paths import resolve_paths
    from m1nd.reports import formats, store

    o = _opts(ctx, home=home)
    with reporting(False):
        if fmt not in ("md", "html", "json"):
            raise UsageError(f"--format must be md, html or json, not {fmt!r}")
        paths = resolve_paths(o.get("home"))
        frozen = store.load_frozen(paths, _run_id(run_id))
        if frozen is None:
            raise NotFound(f"no frozen report {run_id}")
        data = formats.render(frozen, fmt)
        if out:
            from m1nd.fsutil import atomic_write
            from m1nd.paths import absolute

            try:
                atomic_write(absolute(out), data, mode=0o644)
            except OSError as exc:
                raise M1ndError(f"cannot write {out}: {exc.strerror}") from None
            return
    import sys

    sys.stdout.buffer.write(data)
    sys.stdout.flush()


@app.command("alert")
def alert_cmd(
    ctx: typer.Context,
    profile: Profile = None,
    now: Now = None,
    json_out: Json = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Print letters of alert classes observed since the last alert (moves no cursor)."""
    from m1nd.reports.alerts import alert

    o = _opts(ctx, profile=profile, now=now, json=json_out, home=home, spool=spool, roots=roots)
    with reporting(o.get("json", False)):
        moment = _now(o.get("now"))
        run, prof = _setup(o.get("home"), o.get("spool"), o.get("roots"), o.get("profile"))
        alert(run, prof, moment, lambda found: _print_alerts(prof, found, o.get("json")))


def _print_alerts(prof, found, as_json) -> None:
    if as_json:
        output.emit_json({"profile": prof.name, "classes": list(prof.alert_classes), "alerts": found,
                          "count": len(found)})
        return
    if not found:
        output.emit_text(f"no new alerts ({', '.join(prof.alert_classes)})")
    from m1nd.reports.render import plain

    for a in found:
        who = ", ".join(x for x in (plain(a["agent"]), a["ts"]) if x)  # a held letter shows no agent
        output.emit_text(f"ALERT {a['class']} {a['id']} [{a['box']}] {plain(a['what'])}" + (f" ({who})" if who else ""))
