"""Options shared by many commands, declared once."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

Home = Annotated[Optional[str], typer.Option("--home", help="Runtime root (default: $M1ND_HOME, else ~/.m1nd).", metavar="PATH")]
Spool = Annotated[Optional[str], typer.Option("--spool", help="Spool file (default: $M1ND_SPOOL, else HOME/field-reports.jsonl).", metavar="PATH")]
Roots = Annotated[Optional[list[str]], typer.Option("--root", help="An extra root for this run (repeatable).", metavar="PATH")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
NoDistribute = Annotated[bool, typer.Option("--no-distribute", help="Read only: write nothing, create nothing.")]
Now = Annotated[Optional[str], typer.Option("--now", help="The clock, ISO 8601 (default: $M1ND_NOW, else now).", metavar="TIME")]
