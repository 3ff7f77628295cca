"""The human views a person reads: letter text stays data (never markup, never
terminal control, newlines never start a line), ids are never cut at 60 or 80
columns, `--limit`/`--all` and every filter, `m1nd show` by prefix, replies under
their letter, the pager, one style of usage errors, `m1nd help`, `--ts` in UTC.

Snapshots (syrupy) pin the layouts at 60, 80 and 120 columns; regenerate them with
`pytest --snapshot-update` and read the diff before committing it.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import orjson
import pytest

from conftest import write_spool

ROUGH = [
    {"ts": "2026-05-02T10:00:00+02:00", "agent": "agent-[red]a", "class": "bug", "repo": "repo-a", "tool": "seek",
     "what": "seek broke on [/etc/hosts] and [bold]styled[/bold] text", "expected": "plain text"},
    {"ts": "2026-05-02T09:00:00Z", "agent": "agent-b", "class": "ux", "repo": "repo-a", "tool": "north (memory beat)",
     "what": "escape \x1b[31mred\x1b[0m and a bell \x07 and a C1 \x9b and DEL \x7f", "snippet": "line one\nline two"},
    {"ts": "2026-05-01", "agent": "agent-a", "class": "note", "repo": "repo-a", "tool": "seek",
     "what": "first line\nsecond line\r\nthird"},
    {"ts": "2026-05-01T12:00:00Z", "agent": "代理人", "class": "bug", "repo": "repo-a", "tool": "index",
     "what": "漢字の説明がとても長いので切られるはずです、それでも列は揃ったままでなければなりません"},
    {"ts": "2026-04-30T08:00:00Z", "agent": "agent-c", "class": "bug", "repo": "repo-a", "tool": "playwright",
     "what": "a foreign tool: external"},
]


def lid(letter: dict) -> str:
    return hashlib.sha256(orjson.dumps(letter)).hexdigest()[:12]


@pytest.fixture
def mailbox(tmp_path, spool_path, cli, monkeypatch):
    repo = tmp_path / "src" / "repo-a"
    (repo / ".git").mkdir(parents=True)
    letters = list(ROUGH)
    target = lid(ROUGH[3])
    letters.append({"ts": "2026-05-02T11:00:00Z", "agent": "agent-b", "class": "pickup", "repo": "repo-a",
                    "what": "picking up the wide one", "answers": [target]})
    letters.append({"ts": "2026-05-02T12:00:00Z", "agent": "agent-a", "class": "triage", "repo": "repo-a",
                    "what": "fixed the styled one", "answers": [lid(ROUGH[0])], "disposition": "fixed"})
    write_spool(spool_path, letters)
    assert cli("roster", "add", str(repo)).code == 0
    assert cli("distribute").code == 0
    return repo


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_human_views_keep_text_as_data_at_every_width(mailbox, cli, monkeypatch, snapshot, columns, tmp_path):
    monkeypatch.setenv("COLUMNS", str(columns))
    for args in (("sweep",), ("sweep", "--state", "all"), ("box", "repo-a", "--state", "all"),
                 ("show", lid(ROUGH[1]))):
        result = cli(*args)
        assert result.code == 0, result.stderr
        out = result.stdout
        assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out and "\x7f" not in out
        assert "\r" not in out
        if args[0] != "show":
            assert all(len(line) <= columns or "漢" in line or "代" in line for line in out.splitlines())
            # every listed letter's id is whole at the start of its line
            for letter in ROUGH:
                if any(letter["what"][:10] in line for line in out.splitlines()):
                    assert re.search(rf"^{lid(letter)}  ", out, re.M), (lid(letter), out)
            assert "[/etc/hosts]" in out or "--state" not in args  # markup printed as written
        if args[0] == "box":  # its first line names the root's path, which differs per run
            head, out = out.split("\n", 1)
            assert head.startswith("box repo-a — ")
        if args[0] == "show":  # show prints whole fields: the paths are scrubbed instead
            out = out.replace(str(tmp_path), "<tmp>")
        assert out == snapshot(name=" ".join(args[:3]))


def test_control_characters_print_escaped_and_newlines_never_start_a_line(mailbox, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = cli("sweep", "--state", "all").stdout
    assert "escape \\x1b[31mred\\x1b[0m and a bell \\x07 and a C1 \\x9b and DEL \\x7f" in out
    assert "first line⏎second line\\x0d⏎third" in out
    assert not any(line.startswith(("second line", "third", "line two")) for line in out.splitlines())
    shown = cli("show", lid(ROUGH[1])).stdout
    assert "│ line one" in shown and "│ line two" in shown  # a block, every line behind a gutter
    assert not any(line.startswith("line two") for line in shown.splitlines())
    styled = cli("show", lid(ROUGH[0])).stdout
    assert "[/etc/hosts] and [bold]styled[/bold]" in styled and "agent-[red]a" in styled


def test_replies_are_listed_under_their_letter_never_as_open_work(mailbox, cli):
    doc = orjson.loads(cli("box", "repo-a", "--json").stdout)
    # the pickup and the receipt are open, yet not open work
    assert doc["counts"]["open"] == 5 and doc["counts"]["open_work"] == 3
    out = cli("sweep", "--state", "all").stdout
    lines = out.splitlines()
    wide = next(i for i, line in enumerate(lines) if line.startswith(lid(ROUGH[3])))
    assert any("↳" in line and "picking up the wide one" in line for line in lines[wide + 1: wide + 4])
    assert not any(line.startswith(lid({"ts": "2026-05-02T11:00:00Z"})) for line in lines)
    assert "picking up the wide one" not in "\n".join(l for l in lines if not l.lstrip().startswith(("↳",)))


def test_newest_first_sorts_by_the_moment_not_the_text(mailbox, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = cli("sweep", "--state", "all").stdout
    ids = [line[:12] for line in out.splitlines() if re.match(r"^[0-9a-f]{12}  ", line)]
    # 10:00+02:00 is 08:00Z: older than 09:00Z, newer than 2026-05-01T12:00Z
    order = [lid(ROUGH[1]), lid(ROUGH[0]), lid(ROUGH[3]), lid(ROUGH[2]), lid(ROUGH[4])]
    assert ids == order


@pytest.mark.parametrize("args, expected", [
    ((), [1, 3, 2]),
    (("--state", "all"), [1, 0, 3, 2, 4]),
    (("--state", "open"), [1, 3, 2]),
    (("--state", "in_flight"), [3]),
    (("--state", "answered"), [0]),
    (("--state", "external"), [4]),
    (("--agent", "agent-b"), [1]),
    (("--class", "BUG", "--state", "all"), [0, 3, 4]),
    (("--tool", "north"), [1]),
    (("--tool", "North (memory beat)"), [1]),
    (("--since", "2026-05-02", "--state", "all"), [1, 0]),
    (("--until", "2026-05-01T23:59:59Z", "--state", "all"), [3, 2, 4]),
    (("--since", "2026-05-01T11:00:00Z", "--until", "2026-05-02T08:30:00+00:00", "--state", "all"), [0, 3]),
    (("--box", "repo-a", "--state", "all"), [1, 0, 3, 2, 4]),
    (("--box", "medulla", "--state", "all"), []),
])
def test_every_filter_of_the_sweep_and_the_box(mailbox, cli, monkeypatch, args, expected):
    monkeypatch.setenv("COLUMNS", "200")
    for command in (("sweep",), ("box", "repo-a")):
        if command[0] == "box" and "--box" in args:
            continue
        result = cli(*command, *args)
        assert result.code == 0, result.stderr
        ids = [line[:12] for line in result.stdout.splitlines() if re.match(r"^[0-9a-f]{12}  ", line)]
        assert ids == [lid(ROUGH[i]) for i in expected], (command, args)
    if "--box" not in args and args:
        # the JSON lists every matching letter of the box in file order, replies included
        doc = orjson.loads(cli("box", "repo-a", "--json", *args).stdout)
        listed = [l["id"] for l in doc["letters"] if not l["answers"]]
        assert listed == [lid(r) for r in ROUGH if lid(r) in {lid(ROUGH[i]) for i in expected}]


def test_limit_and_all(mailbox, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = cli("sweep", "--state", "all", "--limit", "2").stdout
    assert len([l for l in out.splitlines() if re.match(r"^[0-9a-f]{12}  ", l)]) == 2
    assert "… and 3 more: m1nd sweep --all shows every one" in out
    out = cli("sweep", "--state", "all", "--all").stdout
    assert len([l for l in out.splitlines() if re.match(r"^[0-9a-f]{12}  ", l)]) == 5 and "more:" not in out
    out = cli("box", "repo-a", "--limit", "1").stdout
    assert "… and 2 more: m1nd box repo-a --all" in out


def test_bad_filters_are_usage_errors_and_sweep_json_stays_the_v0_document(mailbox, cli):
    for args in (("sweep", "--state", "closed"), ("sweep", "--since", "yesterday"), ("box", "repo-a", "--until", "x")):
        result = cli(*args)
        assert result.code == 2 and result.stderr.count("\n") == 1 and result.stderr.startswith("m1nd: error: ")
    result = cli("sweep", "--json", "--agent", "agent-a")
    assert result.code == 2 and "m1nd box --json" in orjson.loads(result.stdout)["error"]["message"]
    assert orjson.loads(cli("sweep", "--json").stdout)["schema"] == "m1nd-inbox-sweep-v0"
    result = cli("sweep", "--box", "nowhere")
    assert result.code == 3


def colliding_prefix_letters() -> tuple[dict, dict, str]:
    """Two letters whose ids share their first 4 hex digits (found by counting)."""
    seen: dict[str, dict] = {}
    i = 0
    while True:
        letter = {"ts": "2026-05-01T00:00:00Z", "repo": "repo-a", "class": "note", "what": f"letter number {i}"}
        prefix = lid(letter)[:4]
        if prefix in seen:
            return seen[prefix], letter, prefix
        seen[prefix] = letter
        i += 1


def test_show_by_full_id_unique_prefix_ambiguous_prefix_and_unknown(mailbox, cli, spool_path, snapshot,
                                                                    monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    first, second, prefix = colliding_prefix_letters()
    write_spool(spool_path, [first, second])
    full = cli("show", lid(ROUGH[3]))
    assert full.code == 0
    assert cli("show", lid(ROUGH[3])[:6]).stdout == full.stdout
    assert "replies, oldest first:" in full.stdout and "picking up the wide one" in full.stdout
    assert "in flight" in full.stdout.splitlines()[0]
    ambiguous = cli("show", prefix)
    assert ambiguous.code == 2
    assert lid(first) in ambiguous.stderr and lid(second) in ambiguous.stderr
    assert cli("show", prefix, "--json").code == 2
    unknown = cli("show", "ffffffffffff")
    assert unknown.code == 3 and unknown.stderr.startswith("m1nd: error: no letter has the id")
    assert cli("show", "xyz").code == 2 and cli("show", "abc").code == 2  # not hex; fewer than 4 digits
    doc = orjson.loads(cli("show", lid(ROUGH[0])[:5], "--json").stdout)
    assert doc["id"] == lid(ROUGH[0]) and doc["state"] == "fired_clay"
    assert doc["letter"]["expected"] == "plain text" and doc["letter"]["snippet"] == ""
    assert [r["class"] for r in doc["replies"]] == ["triage"]
    assert {loc["kind"] for loc in doc["locations"]} == {"spool", "box"}
    assert full.stdout.replace(str(tmp_path), "<tmp>") == snapshot(name="show-wide")


def test_write_stores_ts_in_utc(cli, spool_path):
    for given, stored in (("2026-05-01T12:00:00+02:00", "2026-05-01T10:00:00Z"), ("2026-05-01", "2026-05-01T00:00:00Z"),
                          ("2026-05-01T10:00:00Z", "2026-05-01T10:00:00Z")):
        assert cli("write", "--repo", "all", "--what", "x", "--ts", given).code == 0
        assert orjson.loads(spool_path.read_bytes().splitlines()[-1])["ts"] == stored
    assert cli("write", "--repo", "all", "--what", "x", "--ts", "soon").code == 2


def test_usage_errors_are_one_line_in_one_style(cli):
    for args in (("frobnicate",), ("sweep", "--limit"), ("roster", "add", "a", "b"), ("write",),
                 ("sweep", "--state", "nope")):
        result = cli(*args)
        assert result.code == 2, args
        assert result.stderr.startswith("m1nd: error: ") and result.stderr.count("\n") == 1, (args, result.stderr)


def test_help_is_a_command_and_every_command_has_examples(cli):
    top = cli("help")
    assert top.code == 0 and "sweep" in top.stdout and "show" in top.stdout
    assert cli("help", "sweep").stdout == cli("sweep", "--help").stdout
    assert cli("help", "roster", "add").stdout == cli("roster", "add", "--help").stdout
    missing = cli("help", "nothing-like-it")
    assert missing.code == 2 and missing.stderr.count("\n") == 1
    for command in (("sweep",), ("box",), ("show",), ("write",), ("pickup",), ("answer",), ("distribute",),
                    ("doctor",), ("init",), ("demo",), ("help",)):
        assert "Examples" in cli(*command, "--help").stdout, command


def test_long_output_on_a_terminal_goes_through_the_pager(mailbox, tmp_path):
    from test_cli_contract import _run_on_a_tty

    paged = tmp_path / "paged.txt"
    pager = f"cat > {paged}"
    out = _run_on_a_tty(["sweep", "--state", "all"], {"M1ND_PAGER": pager, "PAGER": "more", "NO_COLOR": "1"})
    assert paged.read_text().startswith("Box ") and b"Box " not in out
    paged.unlink()
    _run_on_a_tty(["sweep"], {"M1ND_PAGER": None, "PAGER": pager, "NO_COLOR": "1"})
    assert paged.exists()  # $PAGER when $M1ND_PAGER is unset
    paged.unlink()
    out = _run_on_a_tty(["sweep", "--no-pager"], {"M1ND_PAGER": pager, "NO_COLOR": "1"})
    assert not paged.exists() and b"Box " in out
    out = _run_on_a_tty(["sweep"], {"M1ND_PAGER": "cat", "NO_COLOR": "1"})  # `cat` means no pager, as in git
    assert b"Box " in out
    out = _run_on_a_tty(["sweep"], {"M1ND_PAGER": pager, "M1ND_IN_HOOK": "1", "NO_COLOR": "1"})
    assert not paged.exists()  # never inside a git hook
