"""Each run builds click's tree for the one command it invokes (cli/main.py
`only_the_invoked`): that command's help, usage errors and option parsing must be
exactly those of the whole tree, and whatever names no command gets the whole tree."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from m1nd.cli.app import app
from m1nd.cli.main import only_the_invoked  # `help` walks the tree: it always gets all of it

NAMES = [n for n in [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups] if n != "help"]
PROBES = [["--help"], ["--no-such-option"], ["--limit", "x"], ["--json", "--help"]]


def _run(typer_app, args: list[str]) -> tuple[int, str]:
    done = CliRunner().invoke(typer_app, args, prog_name="m1nd", env={"COLUMNS": "100"})
    return done.exit_code, done.output


@pytest.mark.parametrize("name", NAMES)
def test_a_command_in_a_tree_of_one_answers_as_in_the_whole_tree(name):
    pruned = only_the_invoked(app, [name])
    assert pruned is not app
    assert [c.name for c in pruned.registered_commands] + [g.name for g in pruned.registered_groups] == [name]
    for probe in PROBES:
        assert _run(pruned, [name, *probe]) == _run(app, [name, *probe]), probe


@pytest.mark.parametrize("args", [[], ["--help"], ["--version"], ["swep"], ["help", "sweep"], ["--home", "h", "sweep"]])
def test_whatever_names_no_command_gets_the_whole_tree(args):
    assert only_the_invoked(app, args) is app


def test_the_whole_tree_is_left_as_it_was():
    before = ([c.name for c in app.registered_commands], [g.name for g in app.registered_groups])
    only_the_invoked(app, ["sweep"])
    assert ([c.name for c in app.registered_commands], [g.name for g in app.registered_groups]) == before
