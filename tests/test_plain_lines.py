"""Human views without colour are written without rich, byte for byte as rich writes them.

Importing and driving rich's console cost a read about 20 ms; without colour there is
nothing for it to draw, so the views write their lines themselves (output.plain_line).
The oracle is rich itself: the same lines through a colourless rich console, for any
text a letter can carry.
"""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_on_a_tty
from m1nd.cli import output
from m1nd.cli.cases import print_line

# Letter text at its most awkward: tabs at every column, wide and zero-width characters,
# combining marks, emoji, controls, bidi marks, surrogates, newlines.
PIECES = st.sampled_from(["\t", "\t\t", "漢字", "ｗ", "e\u0301", "\u200b", "🙂", "\x1b[31m", "\r", "\x07", "\b",
                          "\x0c", "\u202e", "\u2028", "\udcff", "\n", "\\x1b", "[bold]x[/]", "  ", "…"])
TEXT = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=12).map("".join)
STYLE = st.sampled_from(["bold", "yellow", "green", "dim", ""])


def _through_rich(write) -> str:
    """What `write(lines)` prints when a colourless rich console draws every line."""
    buf = io.StringIO()
    lines = output.LineWriter(stream=buf)
    lines.con, lines.out = output.console(stream=buf), None  # the rich path, as without colour
    write(lines)
    return buf.getvalue()


def _plain(write) -> str:
    buf = io.StringIO()
    lines = output.LineWriter(stream=buf)
    assert lines.out is buf and lines.con is None  # no terminal here: the plain path
    write(lines)
    return buf.getvalue()


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=4), style=STYLE)
def test_a_plain_line_is_the_bytes_a_colourless_rich_console_writes(texts, style):
    def write(lines):
        for text in texts:
            lines.line(text, [(0, len(text) // 2, style)] if style else [])

    assert _plain(write) == _through_rich(write)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.one_of(TEXT, st.tuples(TEXT, STYLE)), max_size=5))
def test_a_cases_line_of_styled_pieces_is_the_bytes_rich_writes(parts):
    def write(lines):
        print_line(lines, *parts)

    assert _plain(write) == _through_rich(write)


def test_tabs_stop_every_eight_cells_counting_wide_characters_as_two():
    assert output.plain_line("a\tb") == "a" + " " * 7 + "b\n"
    assert output.plain_line("漢\tb") == "漢" + " " * 6 + "b\n"
    assert output.plain_line("12345678\tb") == "12345678" + " " * 8 + "b\n"


def test_a_plain_line_carries_no_control_character_to_the_terminal():
    line = output.plain_line("\x1b]52;c;aGk=\x07 \u202eevil \x9b2J")
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) <= 0x9F or c == "\u202e" for c in line)


def test_a_sweep_without_colour_never_imports_richs_console(tmp_path):
    home = tmp_path / "home"
    spool = tmp_path / "spool.jsonl"
    spool.write_text('{"ts":"2026-01-01T00:00:00Z","brain":"agent-a","event":"note","what":"seek\\treturned"}\n')
    # -X importtime lists every module the real process imported, on stderr
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "m1nd", "sweep", "--home", str(home),
                           "--spool", str(spool)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if "import time:" in line}
    assert "m1nd.cli.render" in imported and "rich.console" not in imported
    assert "seek returned" in done.stdout  # a tab in a letter is shown as a space


def _on_a_tty(args: list[str], env_changes: dict, home, spool) -> tuple[int, bytes]:
    """(exit code, what reached the terminal) of `m1nd ARGS` on a pty, colour allowed
    unless `env_changes` sets NO_COLOR."""
    return run_on_a_tty(args, {"M1ND_HOME": str(home), "M1ND_SPOOL": str(spool), "NO_COLOR": None,
                               **env_changes})


def _many_letters(tmp_path):
    spool = tmp_path / "spool.jsonl"
    spool.write_text("".join(f'{{"ts":"2026-01-01T00:00:{i % 60:02d}Z","agent":"agent-a","class":"bug",'
                             f'"tool":"seek","what":"letter {i} of many"}}\n' for i in range(3000)) + "not json\n")
    return tmp_path / "home", spool


@pytest.mark.parametrize("pager", ["head -c 1", "head -3"])
@pytest.mark.parametrize("colour", [{"NO_COLOR": "1"}, {}], ids=["without-colour", "with-colour"])
def test_a_pager_that_quits_early_changes_neither_the_exit_code_nor_the_warnings(tmp_path, colour, pager):
    # Whether the pager quit while the view was still being written (3,000 letters) or
    # after all of it sat in the pipe (a short view) is a matter of timing: the command
    # must end the same either way, with colour or without.
    home, spool = _many_letters(tmp_path)
    for args in (["sweep", "--state", "all", "--all"], ["sweep"]):
        code, out = _on_a_tty(args, {"M1ND_PAGER": pager, **colour}, home, spool)
        assert code == 0, out[-400:]
        assert b"1 malformed line" in out, out[-400:]  # the read's warning, after the view


@pytest.mark.parametrize("term", ["dumb", "xterm-256color"])
def test_views_are_laid_out_for_columns_with_colour_or_without(tmp_path, term):
    import re

    home, spool = _many_letters(tmp_path)
    texts = []
    for colour in ({"NO_COLOR": "1"}, {}):
        code, out = _on_a_tty(["sweep", "--no-pager"], {"TERM": term, "COLUMNS": "60", **colour}, home, spool)
        assert code == 0, out[-400:]
        texts.append(re.sub(rb"\x1b\[[0-9;]*m", b"", out).decode().replace("\r\n", "\n"))
    assert texts[0] == texts[1]
    view = [line for line in texts[0].splitlines() if not line.startswith("m1nd: warning: ")]  # stderr's
    assert max(len(line) for line in view) <= 60 and len(view) > 10


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
def test_an_output_that_cannot_encode_the_view_says_how_to_fix_it_in_one_line(tmp_path, encoding):
    import os

    spool = tmp_path / "spool.jsonl"
    spool.write_text('{"ts":"2026-01-01T00:00:00Z","agent":"agent-a","class":"bug","what":"café déjà vu ✓"}\n',
                     encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": encoding, "M1ND_HOME": str(tmp_path / "home"), "M1ND_SPOOL": str(spool)}
    done = subprocess.run([sys.executable, "-m", "m1nd", "sweep"], capture_output=True, env=env, timeout=60)
    assert done.returncode == 1
    err = done.stderr.decode("ascii")
    assert err.count("\n") == 1 and "PYTHONIOENCODING=utf-8" in err and encoding in err, err
