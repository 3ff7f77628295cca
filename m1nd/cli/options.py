"""Options shared by many commands, declared once.

Every option whose name two command modules use is declared here, with its default in
DEFAULTS; tests/test_cli_options.py checks that every command taking one of these names
takes one of these very declarations. Where two commands' options of one name mean
different things, each meaning has its own name here, with a comment saying why.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

# The run: where the home, the spool and the roots are; how it prints; its clock.
Home = Annotated[Optional[str], typer.Option("--home", help="Runtime root (default: $M1ND_HOME, else ~/.m1nd).", metavar="PATH")]
Spool = Annotated[Optional[str], typer.Option("--spool", help="Spool file (default: $M1ND_SPOOL, else HOME/field-reports.jsonl).", metavar="PATH")]
Roots = Annotated[Optional[list[str]], typer.Option("--root", help="An extra root for this run (repeatable).", metavar="PATH")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
NoDistribute = Annotated[bool, typer.Option("--no-distribute", help="Read only: write nothing, create nothing.")]
Now = Annotated[Optional[str], typer.Option("--now", help="The clock, ISO 8601 (default: $M1ND_NOW, else now).", metavar="TIME")]

# Paging (`m1nd --no-pager` before the command is also taken by m1nd.cli.main).
NoPager = Annotated[bool, typer.Option("--no-pager", help="Never page the output.")]

# Letter filters: `sweep` and `box` list letters.
Limit = Annotated[int, typer.Option("--limit", help="Show at most N letters.", metavar="N", min=0)]
All = Annotated[bool, typer.Option("--all", help="Show every matching letter.")]
State = Annotated[Optional[str], typer.Option("--state", help="open (default), in_flight, answered, external or all.", metavar="STATE")]
Agent = Annotated[Optional[str], typer.Option("--agent", help="Only letters by this agent.", metavar="AGENT")]
Klass = Annotated[Optional[str], typer.Option("--class", help="Only letters of this class (any case).", metavar="CLASS")]
Tool = Annotated[Optional[str], typer.Option("--tool", help="Only letters about this tool (or tool family: `north` for `north (memory beat)`).", metavar="TOOL")]
Since = Annotated[Optional[str], typer.Option("--since", help="Only letters at or after this time (ISO 8601).", metavar="TIME")]
Until = Annotated[Optional[str], typer.Option("--until", help="Only letters at or before this time (ISO 8601).", metavar="TIME")]
BoxLabel = Annotated[Optional[str], typer.Option("--box", help="Only letters in this box (a label, or medulla).", metavar="LABEL")]

# Case filters: `m1nd cases` lists fingerprints, not letters, so its --limit, --tool and
# --state count and match other things than the letter filters of the same names (and
# --limit 0 shows all, where a letter listing has --all).
CaseLimit = Annotated[int, typer.Option("--limit", help="Show at most N fingerprints (0: all).", metavar="N", min=0)]
CaseTool = Annotated[Optional[str], typer.Option("--tool", help="Only this tool family.", metavar="FAMILY")]
CaseKind = Annotated[Optional[str], typer.Option("--kind", help="Only this symptom kind.", metavar="KIND")]
CaseState = Annotated[Optional[str], typer.Option(
    "--state", help="Only cases in this state: open, answered, closed·guarded (or closed-guarded), none.",
    metavar="STATE")]

# Writing: `write`, `pickup` and `answer` add a letter. Its --agent, --class, --tool and
# --kind give the new letter's field; the filters of those names match letters' fields.
What = Annotated[str, typer.Option("--what", help="What happened (required, not empty).")]
WriteAgent = Annotated[Optional[str], typer.Option("--agent", help="Who writes (default: $M1ND_AGENT, else the user name).")]
Ts = Annotated[Optional[str], typer.Option("--ts", help="Timestamp (default: now, UTC).", metavar="ISO")]
Repo = Annotated[Optional[str], typer.Option("--repo", help="The repository it is about (default: this repository, else `all`).")]
Brain = Annotated[Optional[str], typer.Option("--brain", help="Overrides --repo for routing: medulla or project:NAME.")]
WriteTool = Annotated[Optional[str], typer.Option("--tool", help="The tool it is about.")]
WriteClass = Annotated[Optional[str], typer.Option("--class", help="The letter's class (e.g. bug, memory_misdelivery).")]

# The symptom kinds of m1nd.cases.fingerprints.VOCABULARY, written out so that `write`
# does not import the cases engine at start-up (a test keeps the two equal).
SYMPTOM_KINDS = ("false_absence", "stale_claim", "overclaimed_verdict", "wrong_route", "scope_escape",
                 "silent_drop", "crash", "ux_confusion")
KIND_HELP = ("The letter's kind: a symptom, one of " + ", ".join(SYMPTOM_KINDS)
             + " (cases group letters by it); or mission (filed, left out of every view and count).")
WriteKind = Annotated[Optional[str], typer.Option("--kind", help=KIND_HELP)]

# --force: a reply's (write although no letter has the id) and `hooks install`'s
# (replace foreign hooks) force different things.
ReplyForce = Annotated[bool, typer.Option("--force", help="Write even when no letter has an id (full ids only).")]
HooksForce = Annotated[bool, typer.Option("--force", help="Replace hooks that are not m1nd's, even a hook manager's.")]

# Reports. `report`'s --since/--until make a manual report (and its cursor does not move);
# `report prepare`'s only freeze a window; `report list`'s --limit pages delivered
# reports, up to 200 at once.
Profile = Annotated[Optional[str], typer.Option("--profile", help="Report profile (default: twice-daily).", metavar="NAME")]
To = Annotated[Optional[str], typer.Option("--to", help="Sink: a directory (default HOME/reports) or 'exec:CMD'.", metavar="SINK")]
ReportSince = Annotated[Optional[str], typer.Option("--since", help="Manual report from this time (moves no cursor).", metavar="TIME")]
ReportUntil = Annotated[Optional[str], typer.Option("--until", help="End of a manual report (default: now).", metavar="TIME")]
WindowSince = Annotated[Optional[str], typer.Option("--since", metavar="TIME", help="Manual window start.")]
WindowUntil = Annotated[Optional[str], typer.Option("--until", metavar="TIME", help="Manual window end.")]
ReportLimit = Annotated[int, typer.Option("--limit", min=0, max=200, help="At most N reports (0-200).", metavar="N")]

# Each declaration's default (`...`: required). A command's signature writes it again, as
# typer wants; tests/test_cli_options.py checks every signature against these.
DEFAULTS: dict[str, object] = {
    "Home": None, "Spool": None, "Roots": None, "Json": False, "NoDistribute": False, "Now": None,
    "NoPager": False,
    "Limit": 20, "All": False, "State": None, "Agent": None, "Klass": None, "Tool": None, "Since": None,
    "Until": None, "BoxLabel": None,
    "CaseLimit": 50, "CaseTool": None, "CaseKind": None, "CaseState": None,
    "What": ..., "WriteAgent": None, "Ts": None, "Repo": None, "Brain": None, "WriteTool": None,
    "WriteClass": None, "WriteKind": None,
    "ReplyForce": False, "HooksForce": False,
    "Profile": None, "To": None, "ReportSince": None, "ReportUntil": None, "WindowSince": None,
    "WindowUntil": None, "ReportLimit": 100,
}
