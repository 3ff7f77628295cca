"""The cron path: `m1nd report` when nothing is due, answered before the CLI
framework loads (cron and systemd timers run it every few minutes).

Only the plain forms are answered here (`--profile`, `--home`, `--now`, `--to`,
`--json`); anything else, and anything due or failing, goes the ordinary way, which
says the same thing or reports the error properly.
"""

from __future__ import annotations

import sys

_TAKES_VALUE = {"--profile", "--home", "--now", "--to", "--spool"}


def _options(args: list[str]) -> dict | None:
    out: dict = {}
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--json":
            out["json"] = True
            i += 1
            continue
        name, eq, value = word.partition("=")
        if name not in _TAKES_VALUE:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        if name in out or not value:
            return None
        out[name] = value
        i += 1
    return out


def nothing_due(args: list[str]) -> bool:
    """True when it printed "nothing due" (exit 0); False: take the ordinary path."""
    opts = _options(args)
    if opts is None:
        return False
    try:
        from m1nd.clock import parse_now, stamp
        from m1nd.paths import resolve_paths
        from m1nd.reports import calendar, store, updates
        from m1nd.reports.profiles import to_run

        now = parse_now(opts.get("--now"))
        paths = resolve_paths(opts.get("--home"))

        idle = []
        for profile in to_run(paths, opts.get("--profile")):
            state = store.load_state(paths, profile.name)
            if state.outbox:
                return False
            end = calendar.latest_at_or_before(now, profile.rules, profile.zone)
            if end is None or state.cursor is None or stamp(end) > state.cursor:
                return False
            if not profile.enabled or updates.wanted(paths, state, profile, now):  # off says so; the ledger grew
                return False
            following = calendar.next_after(now, profile.rules, profile.zone)
            idle.append((profile.name, stamp(following) if following else None,
                         updates.waiting_note(paths, state, profile, now)))
    except Exception:  # the ordinary path reports it properly
        return False
    docs = [{"profile": name, "status": "nothing-due", "next_boundary": nb, "prepared": None,
             "committed": None, "deliveries": []} for name, nb, _ in idle]
    if opts.get("json"):
        from m1nd import jsonout

        sys.stdout.buffer.write(jsonout.dumps(docs[0] if len(docs) == 1 else {"profiles": docs}))
    else:
        for name, nb, note in idle:
            sys.stdout.write(f"nothing due for profile {name}: next report at {nb}{note}\n")
    sys.stdout.flush()
    return True
