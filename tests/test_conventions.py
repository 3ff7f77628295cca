"""Conventions as git and gh have them: a global --no-pager, NO_COLOR only when
non-empty, a terminal that reports 0 or 1 columns laid out at 80."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import read_terminal, run_cli

PROJECT = Path(__file__).resolve().parent.parent


def on_a_terminal(*args: str, env: dict) -> str:
    """Run m1nd with stdout on a fresh pty (whose size nobody set: 0 × 0) and return what it printed."""
    main, side = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "m1nd", *args], stdout=side, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=dict(env, PYTHONPATH=str(PROJECT)))
    os.close(side)
    out = read_terminal(main)
    proc.wait(timeout=60)
    os.close(main)
    assert proc.returncode == 0, proc.stderr.read()
    return out.decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture
def tty_env(spool_path, cli) -> dict:
    cli("write", "--brain", "medulla", "--class", "bug", "--what", "a letter to show " + "wide " * 30)
    env = dict(os.environ, M1ND_PAGER="")
    env.pop("COLUMNS", None)
    return env


@pytest.mark.parametrize("command", [["doctor"], ["cases"], ["report", "status"], ["roster", "list"], ["sweep"],
                                     ["box", "medulla"], ["sentinels", "run"]])
@pytest.mark.parametrize("where", ["before", "after"])
def test_no_pager_is_a_global_option_every_command_takes(command, where):
    args = ["--no-pager", *command] if where == "before" else [*command, "--no-pager"]
    r = run_cli(*args)
    assert r.code == 0, r.stderr
    assert "No such option" not in r.stderr


def test_a_terminal_reporting_zero_columns_is_laid_out_at_80(tty_env):
    printed = on_a_terminal("sweep", env=tty_env)
    lines = printed.splitlines()
    assert "Open letters" in printed and "a letter to show" in printed
    assert max(len(line) for line in lines) <= 80 and max(len(line) for line in lines) > 60


def test_columns_of_1_is_laid_out_at_80(tty_env):
    printed = on_a_terminal("sweep", env=dict(tty_env, COLUMNS="1"))
    assert "a letter to show" in printed and max(len(line) for line in printed.splitlines()) > 60


def test_an_empty_no_color_leaves_colour_on_and_a_set_one_turns_it_off(tty_env):
    assert "\x1b[" in on_a_terminal("sweep", env=dict(tty_env, NO_COLOR=""))
    assert "\x1b[" not in on_a_terminal("sweep", env=dict(tty_env, NO_COLOR="1"))
