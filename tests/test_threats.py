"""Threats from letters written by someone else: no line, field or path breaks a read.

Each test here is one boundary of docs/threat-model.md.
"""

from __future__ import annotations

import pytest

from m1nd.letters import MAX_DEPTH, load
from tests.conftest import write_spool


def _deep_line(key: str, levels: int) -> bytes:
    """A letter line whose `key` holds arrays nested so the line is `levels` deep."""
    inner = levels - 1  # the line's own object is the first level
    return b'{"what":"deep","%s":' % key.encode() + b"[" * inner + b'"x"' + b"]" * inner + b"}"


def test_a_line_nested_past_the_limit_is_malformed_and_one_at_the_limit_is_a_letter():
    at_limit = b'{"what":"w","k":' + b"[" * (MAX_DEPTH - 1) + b"1" + b"]" * (MAX_DEPTH - 1) + b"}"
    past = b'{"what":"w","k":' + b"[" * MAX_DEPTH + b"1" + b"]" * MAX_DEPTH + b"}"
    assert load(at_limit) is not None
    assert load(past) is None
    assert load(b'{"what":"w","k":' + b'{"a":' * MAX_DEPTH + b"1" + b"}" * MAX_DEPTH + b"}") is None


@pytest.mark.parametrize("key", ["sentinel", "fingerprint", "case_id", "disposition", "other"])
def test_a_deeply_nested_line_in_a_box_breaks_no_read_command(cli, spool_path, m1nd_home, key):
    write_spool(spool_path, [{"what": "plain letter", "repo": "all"}])
    assert cli("distribute").code == 0
    medulla = m1nd_home / "inbox.jsonl"
    assert medulla.exists()
    # the hostile line arrives in the box directly, as by git
    write_spool(medulla, [_deep_line(key, 256)])
    for args in (["sweep"], ["sweep", "--json"], ["box", "medulla"], ["doctor"], ["cases"], ["--inbox-sweep"]):
        result = cli(*args)
        assert "Recursion" not in result.stdout + result.stderr, args
        assert result.code in (0, 1), (args, result.stderr)
    doctor = cli("doctor", "--json").json
    boxes = next(c for c in doctor["checks"] if c["name"] == "boxes")
    assert boxes["message"] == "medulla: 1 malformed (line 2)"
    sweep = cli("sweep").stdout
    assert "plain letter" in sweep and "deep" not in sweep


# -- terminal control from a letter ----------------------------------------------------

HOSTILE = "r\x1b]52;c;aGk=\x07\x1b[2J\u202eepo\u2066\x9b"
RAW_CONTROLS = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066"]


def _no_raw_control(text: str) -> None:
    for ch in RAW_CONTROLS:
        assert ch not in text, repr(text)


def test_a_hostile_repo_prints_escaped_in_the_receipt_the_warning_and_doctor(cli, spool_path):
    write_spool(spool_path, [{"what": "w\u202e\x1b[1A", "repo": HOSTILE}, b'{"what":'])
    for args in (["distribute"], ["sweep"], ["doctor"], ["box", "medulla"], ["cases"]):
        result = cli(*args)
        _no_raw_control(result.stdout + result.stderr)
    assert "\\u202e" in cli("distribute").stdout


def test_a_spool_path_that_looks_like_markup_prints_as_written(cli, tmp_path):
    spool = tmp_path / "s[/etc/hosts]" / "spool[bold].jsonl"
    write_spool(spool, [{"what": "w", "repo": "all"}])
    result = cli("doctor", "--spool", str(spool))
    assert "MarkupError" not in result.stderr and result.code == 0, result.stderr
    assert "[/etc/hosts]" in result.stdout.replace("\n", "")
