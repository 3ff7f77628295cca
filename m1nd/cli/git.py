"""`m1nd init`, `m1nd merge-driver`, `m1nd hooks install|uninstall|status`, `m1nd hook run`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from m1nd.cli import output
from m1nd.cli.common import reporting
from m1nd.cli.options import Home, HooksForce, Json

PathArg = Annotated[Optional[str], typer.Argument(
    help="A path inside the repository (default: the current directory); its work tree's top level is used.",
    metavar="[PATH]")]


def init(
    path: PathArg = None,
    private: Annotated[bool, typer.Option("--private", help="Keep the box local (ignored) instead.")] = False,
    json_out: Json = False,
    home: Home = None,
) -> None:
    """Consent once: the box becomes a committed file that travels with the code."""
    from m1nd.gitops.consent import init as run_init
    from m1nd.paths import resolve_paths

    with reporting(json_out):
        result = run_init(path or ".", resolve_paths(home), private=private)
    if json_out:
        output.emit_json(result.as_json())
        return
    mark = {"done": "+", "found": "=", "warn": "!"}
    output.emit_text(f"m1nd init {'--private ' if private else ''}in {result.root}")
    for step in result.steps:
        output.emit_text(f"  {mark[step.status]} {step.message}")
    if result.next_command:
        output.emit_text(f"next: {result.next_command}")
    elif private:
        output.emit_text("next: nothing to commit: the box stays on this machine")
    else:
        output.emit_text("next: nothing to commit: the box and .gitattributes are committed")
    if result.warning:
        output.warn(result.warning)


def merge_driver(
    base: Annotated[str, typer.Argument(help="The common ancestor's version (%O).", metavar="BASE")],
    ours: Annotated[str, typer.Argument(help="Our version, and where the result goes (%A).", metavar="OURS")],
    theirs: Annotated[str, typer.Argument(help="Their version (%B).", metavar="THEIRS")],
) -> None:
    """Git's merge driver for boxes: the union of letters by id, never a conflict."""
    from m1nd.gitops.merge import merge_files

    try:
        merge_files(base, ours, theirs)
    except OSError as exc:
        output.error_line(f"merge driver: {exc.strerror or exc}: {exc.filename or ours}")
        raise typer.Exit(1) from None


hooks_app = typer.Typer(help="Git hook shims that keep boxes current (never blocking git).", no_args_is_help=True)


def _print_change(change, verb: str) -> None:
    if not change.actions:
        output.emit_text(f"no m1nd hooks to {verb} in {change.hooks_dir}")
    for action in change.actions:
        output.emit_text(action.message)
    for note in change.notes:
        output.emit_text(note)


@hooks_app.command("install")
def hooks_install(
    path: PathArg = None,
    stage: Annotated[bool, typer.Option("--stage", help="Also install pre-commit: new letters join each commit.")] = False,
    force: HooksForce = False,
    json_out: Json = False,
) -> None:
    """Install the shims into the repository's hooks directory (foreign hooks are chained)."""
    from m1nd.gitops import hooks

    with reporting(json_out):
        change = hooks.install(path or ".", stage=stage, force=force)
    if json_out:
        output.emit_json(change.as_json())
        return
    output.emit_text(f"hooks directory: {change.hooks_dir}")
    _print_change(change, "install")


@hooks_app.command("uninstall")
def hooks_uninstall(path: PathArg = None, json_out: Json = False) -> None:
    """Remove m1nd's shims only, and put each chained hook back."""
    from m1nd.gitops import hooks

    with reporting(json_out):
        change = hooks.uninstall(path or ".")
    if json_out:
        output.emit_json(change.as_json())
        return
    _print_change(change, "remove")


@hooks_app.command("status")
def hooks_status(path: PathArg = None, json_out: Json = False) -> None:
    """Which shims are installed, current or outdated, and which hooks they chain."""
    from m1nd.gitops import hooks

    with reporting(json_out):
        st = hooks.status(path or ".")
    if json_out:
        output.emit_json(st.as_json())
        return
    output.emit_text(f"hooks directory: {st.hooks_dir}")
    if st.manager is not None:
        output.emit_text(st.manager.describe())
    elif st.hooks_path:
        output.emit_text(f"core.hooksPath is set ({st.hooks_path}): a hook manager owns the hooks")
    for h in st.hooks:
        output.emit_text(f"{h.name}: {h.describe()}")


hook_app = typer.Typer(help="What the hook shims call (always exits 0).", no_args_is_help=True)


@hook_app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook_run(
    name: Annotated[str, typer.Argument(help="post-checkout, post-merge, post-rewrite or pre-commit.", metavar="NAME")],
    args: Annotated[Optional[list[str]], typer.Argument(help="Git's own hook arguments: accepted and ignored.",
                                                        metavar="[ARGS]...")] = None,
) -> None:
    """File what may be filed, then report open letters (post-*) or stage the box (pre-commit)."""
    from m1nd.gitops.hookrun import run_hook

    raise typer.Exit(run_hook(name, list(args or [])))
