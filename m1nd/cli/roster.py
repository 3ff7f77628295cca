"""`m1nd roster add|remove|list`."""

from __future__ import annotations

from typing import Annotated

import typer

from m1nd.cli import output
from m1nd.cli.common import reporting
from m1nd.cli.options import Home, Json

app = typer.Typer(help="The roots you registered: where project boxes may be written.", no_args_is_help=True)
PathArg = Annotated[str, typer.Argument(help="A repository root.", metavar="PATH")]


@app.command("add")
def add(path: PathArg, json_out: Json = False, home: Home = None) -> None:
    """Register a root."""
    from m1nd import roster
    from m1nd.paths import resolve_paths

    with reporting(json_out):
        root, added, warnings = roster.add_checked(resolve_paths(home), path)
    for warning in warnings:
        output.warn(warning)
    if json_out:
        output.emit_json({"root": root, "added": added})
    else:
        output.emit_text(f"{'added' if added else 'already in the roster'}: {root}")


@app.command("remove")
def remove(path: PathArg, json_out: Json = False, home: Home = None) -> None:
    """Unregister a root (its box is left as it is)."""
    from m1nd import roster
    from m1nd.errors import NotFound
    from m1nd.paths import resolve_paths

    with reporting(json_out):
        root, removed = roster.remove(resolve_paths(home), path)
        if not removed:
            raise NotFound(f"not in the roster: {root}")
    if json_out:
        output.emit_json({"root": root, "removed": True})
    else:
        output.emit_text(f"removed: {root}")


@app.command("list")
def list_(json_out: Json = False, home: Home = None) -> None:
    """List the registered roots with their labels and whether they are reachable."""
    from m1nd import roster
    from m1nd.paths import resolve_paths
    from m1nd.routing import build_roots

    with reporting(json_out):
        paths = resolve_paths(home)
        roots = build_roots(None, roster.load(paths), [], paths.home)
    rows = [{"path": r.path, "label": r.label, "reachable": r.reachable} for r in roots.roots]
    if json_out:
        output.emit_json({"roots": rows})
        return
    if not rows:
        output.emit_text("the roster is empty (m1nd roster add PATH)")
    for row in rows:
        output.emit_text(f"{row['label']}\t{row['path']}{'' if row['reachable'] else '  (unreachable)'}")
