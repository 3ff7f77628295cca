"""Every help screen ends with examples; a mistyped command or option gets a
"did you mean"; `write --help` lists the kinds."""

from __future__ import annotations

import pytest

from conftest import run_cli


def command_paths() -> list[list[str]]:
    from typer.main import get_command

    from m1nd.cli.app import app

    def walk(cmd, path):
        yield path
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, path + [name])

    return list(walk(get_command(app), []))


def test_the_walk_finds_every_command_and_subcommand():
    paths = [" ".join(p) for p in command_paths()]
    assert {"", "sweep", "roster add", "report status", "cases explain", "sentinels allow", "completion"} <= set(paths)
    assert len(paths) > 40


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "m1nd")
def test_every_help_ends_with_examples_of_that_command(path):
    r = run_cli(*path, "--help")
    assert r.code == 0, r.stderr
    lines = [line.strip(" │") for line in r.stdout.splitlines() if line.strip(" │")]
    start = max(i for i, line in enumerate(lines) if line.startswith("Examples"))
    examples = lines[start + 1:]
    assert examples, "Examples: is followed by examples"
    assert all(line.startswith(("m1nd ", "git ")) for line in examples), examples
    assert any(" ".join(["m1nd", *path]) in line for line in examples), examples  # its own examples


def test_write_help_lists_every_kind():
    from m1nd.cases.fingerprints import VOCABULARY
    from m1nd.cli.letters import SYMPTOM_KINDS

    assert SYMPTOM_KINDS == VOCABULARY
    text = " ".join(run_cli("write", "--help").stdout.replace("│", " ").split())
    for kind in (*VOCABULARY, "mission"):
        assert kind in text, kind


@pytest.mark.parametrize("args,hint", [
    (["swep"], "Did you mean 'sweep'"),
    (["roster", "lst"], "Did you mean 'list'"),
    (["sweep", "--limt", "3"], "No such option: --limt; did you mean --limit?"),
    (["write", "--wat", "x"], "No such option: --wat; did you mean --what?"),
])
def test_a_mistyped_command_or_option_gets_one_line_with_a_did_you_mean(args, hint):
    r = run_cli(*args)
    assert r.code == 2 and hint in r.stderr and r.stderr.count("\n") == 1, r.stderr

