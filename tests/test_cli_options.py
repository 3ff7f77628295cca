"""Options declared once (m1nd.cli.options): a command cannot drift from the others in an
option's name, help text, metavar, range or default.

The click tree built from the typer app is walked; every option whose name one of the
shared declarations has must be one of those very declarations (the same object in the
command's signature), and what the command shows and defaults to must be what the
declaration says.
"""

from __future__ import annotations

import typing
from collections import defaultdict
from typing import Annotated, Optional

import typer
from typer.main import get_command

from m1nd.cli import main as cli_main
from m1nd.cli import options
from m1nd.cli.app import app

SHARED = {name: value for name, value in vars(options).items() if typing.get_origin(value) is Annotated}


def _info(alias):
    return typing.get_args(alias)[1]


def _names(alias) -> tuple:
    """The option's names: inside Annotated, typer takes the first (`default`) as one."""
    info = _info(alias)
    return tuple(d for d in (info.default, *info.param_decls) if isinstance(d, str))


def _commands(group):
    """(path, click command) for the group and everything under it."""
    def walk(cmd, path):
        yield path, cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, path + [name])

    return list(walk(get_command(group), []))


def _function(cmd):
    return getattr(cmd.callback, "__wrapped__", cmd.callback)


def _shown(param) -> dict:
    """What a command's option shows and does: its names, help, metavar, range, default."""
    return {"opts": tuple(param.opts), "help": param.help, "metavar": param.metavar,
            "min": getattr(param.type, "min", None), "max": getattr(param.type, "max", None),
            "default": ... if param.required else param.default}


def _declared(name: str) -> dict:
    info = _info(SHARED[name])
    return {"opts": _names(SHARED[name]), "help": info.help, "metavar": info.metavar,
            "min": info.min, "max": info.max, "default": options.DEFAULTS[name]}


def drift(group) -> list[str]:
    """Every option of the group's commands that bears a shared name but is not one of
    the shared declarations, or shows or defaults to something else."""
    names = {decl for alias in SHARED.values() for decl in _names(alias)}
    problems = []
    for path, cmd in _commands(group):
        where = " ".join(["m1nd", *path])
        if cmd.callback is None:
            continue
        hints = typing.get_type_hints(_function(cmd), include_extras=True)
        for param in cmd.params:
            if param.param_type_name != "option" or not set(param.opts) & names:
                continue
            hint = hints.get(param.name)
            used = [name for name, alias in SHARED.items()
                    if typing.get_origin(hint) is Annotated and _info(hint) is _info(alias)]
            if not used:
                problems.append(f"{where} {param.opts[0]}: its own declaration, not one of m1nd.cli.options")
                continue
            if _shown(param) != _declared(used[0]):
                problems.append(f"{where} {param.opts[0]}: {_shown(param)} is not options.{used[0]} "
                                f"{_declared(used[0])}")
    return problems


def test_every_shared_declaration_has_its_default_and_one_name():
    assert set(SHARED) == set(options.DEFAULTS)
    for name, alias in SHARED.items():
        assert len(_names(alias)) == 1, name


def test_every_command_takes_the_shared_declaration_of_each_shared_option():
    assert drift(app) == []


def test_every_option_two_command_modules_take_is_declared_once():
    modules = defaultdict(set)
    for _, cmd in _commands(app):
        if cmd.callback is None:
            continue
        for param in cmd.params:
            if param.param_type_name == "option":
                modules[param.opts[0]].add(_function(cmd).__module__)
    shared = {decl for alias in SHARED.values() for decl in _names(alias)}
    repeated = {name for name, where in modules.items() if len(where) > 1}
    assert repeated, "the walk sees options"
    assert repeated - shared == set()


def test_every_shared_declaration_is_taken_by_some_command():
    taken = set()
    for _, cmd in _commands(app):
        if cmd.callback is None:
            continue
        hints = typing.get_type_hints(_function(cmd), include_extras=True).values()
        taken |= {name for name, alias in SHARED.items()
                  for hint in hints if typing.get_origin(hint) is Annotated and _info(hint) is _info(alias)}
    assert set(SHARED) - taken == set()


def test_the_options_main_takes_before_the_command_are_shared_declarations():
    shared = {decl for alias in SHARED.values() for decl in _names(alias)}
    assert set(cli_main._GLOBAL_VALUED) | set(cli_main._GLOBAL_FLAGS) | {"--no-pager"} <= shared
    assert _names(options.NoPager) == ("--no-pager",)


def test_a_command_with_its_own_copy_of_a_shared_option_is_caught():
    demo = typer.Typer()

    @demo.command("same-text")
    def same_text(limit: Annotated[int, typer.Option("--limit", help="Show at most N letters (default 20).",
                                                     metavar="N", min=0)] = 20) -> None:
        """A copy that says the same today (and can drift tomorrow)."""

    @demo.command("other-default")
    def other_default(limit: options.Limit = 10, json_out: options.Json = False) -> None:
        """The shared declaration with another default."""

    @demo.command("fine")
    def fine(home: options.Home = None, roots: Optional[list[str]] = None) -> None:
        """Shared declarations only."""

    problems = drift(demo)
    assert len(problems) == 2, problems
    assert problems[0].startswith("m1nd same-text --limit: its own declaration")
    assert problems[1].startswith("m1nd other-default --limit: ") and "'default': 10" in problems[1]
