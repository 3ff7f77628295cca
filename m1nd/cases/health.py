"""Doctor's `cases` check: the same counts `m1nd cases` shows, and what needs an eye."""

from __future__ import annotations

from m1nd.run import Run


def cases_check(run: Run):
    from m1nd.cases import records
    from m1nd.cases.escalation import overlay_of
    from m1nd.cases.overlay import GUARDED, OPEN, RED
    from m1nd.cases.source import open_cases
    from m1nd.checks import ERROR, OK, WARN, Check
    from m1nd.errors import M1ndError
    from m1nd.words import plural

    try:
        allowed, runs = records.allowlist(run.paths), records.last_runs(run.paths)
    except M1ndError as exc:
        return Check("cases", ERROR, exc.message, "")
    try:
        with open_cases(run) as cases:  # the fold is kept for the next read, as `m1nd cases` keeps it
            overlay = overlay_of(cases, allowed, runs)
    except M1ndError as exc:
        return Check("cases", WARN, f"not computed: {exc.message}")
    entries = overlay.entries
    recurring = sum(1 for e in entries if len(e.witnesses) >= 2)
    cases = [e.case for e in entries if e.case]
    red = sum(1 for c in cases if c.sentinel == RED)
    message = (f"{plural(len(entries), 'fingerprint')} ({recurring} with two witnesses or more, "
               f"{sum(1 for e in entries if e.escalation)} escalated); {plural(len(cases), 'case')} "
               f"({sum(1 for c in cases if c.state == OPEN)} open, "
               f"{sum(1 for c in cases if c.state == GUARDED)} closed·guarded); "
               f"{plural(overlay.kindless, 'kindless letter')}")
    if not entries:
        message = f"no fingerprint yet; {plural(overlay.kindless, 'kindless letter')}"
    if red:
        return Check("cases", WARN, f"{message}; {plural(red, 'sentinel')} red", "m1nd cases")
    return Check("cases", OK, message)
