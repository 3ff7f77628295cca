"""The CLI contract (spec/mailbox.md sections 7, 8 and 10).

Exit codes: 0 success, 1 failure, 2 usage error, 3 not found.  With `--json`, exactly
one JSON document on stdout, errors included: `{"error": {"code", "message"}}`.
Every command has `--help`; `m1nd --version` works; every command the README names
exists.  `m1nd box` and `m1nd doctor` are pinned here in detail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, git_init, run_cli, run_on_a_tty, run_script

REPO_ROOT = Path(__file__).resolve().parent.parent
V0_LETTER_KEYS = {"id", "ts", "agent", "class", "repo", "brain", "tool", "what", "expected", "snippet",
                  "answers", "answered_by", "state"}
RECEIPT_KEYS = {"spool_total", "appended", "to_project", "to_medulla", "pending"}
COUNT_KEYS = {"wet_ink", "in_flight", "fired_clay", "external", "open", "open_work"}  # section 7


# ----------------------------------------------------------------------------- helpers


def canonical(text: str) -> str:
    return json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def one_document(result) -> dict:
    """stdout is exactly one JSON document, formatted as the contract says."""
    assert result.stdout, result.stderr
    assert result.stdout == canonical(result.stdout)
    return json.loads(result.stdout)


def assert_error(result, code: int) -> str:
    """The `--json` error envelope on stdout, with the matching exit code."""
    assert result.code == code, (result.stdout, result.stderr)
    doc = one_document(result)
    assert set(doc) == {"error"}
    assert set(doc["error"]) == {"code", "message"}
    assert doc["error"]["code"] == code
    assert isinstance(doc["error"]["message"], str) and doc["error"]["message"]
    return doc["error"]["message"]


def home() -> Path:
    return Path(os.environ["M1ND_HOME"])


def user_home() -> Path:
    return Path(os.environ["HOME"])


def spool() -> Path:
    return home() / "field-reports.jsonl"


def copy_spool(fixture: str) -> None:
    home().mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / fixture, spool())


def repo(name: str, parent: str = "src") -> Path:
    return git_init(user_home() / parent / name)


def rostered(*paths: Path) -> None:
    for p in paths:
        assert run_cli("roster", "add", str(p)).code == 0


def place_box(root: Path, fixture: str) -> Path:
    box = root / ".m1nd" / "inbox.jsonl"
    box.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / fixture, box)
    return box


@pytest.fixture
def two_repos():
    a, b = repo("repo-a"), repo("repo-b")
    rostered(a, b)
    return a, b


@pytest.fixture
def refused(two_repos, tmp_path):
    """repo-b's `.m1nd` is a symlink: its box is refused."""
    _, b = two_repos
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (b / ".m1nd").symlink_to(elsewhere, target_is_directory=True)
    copy_spool("worked-example.jsonl")
    return elsewhere


# ----------------------------------------------------------------------------- exit codes and envelopes


def test_unknown_box_selector_is_not_found(two_repos):
    result = run_cli("box", "repo-z", "--json")
    assert "repo-z" in assert_error(result, 3)
    human = run_cli("box", "repo-z")
    assert human.code == 3 and human.stdout == ""
    assert human.stderr.startswith("m1nd: error: ")


def test_unknown_box_path_is_not_found(two_repos, tmp_path):
    stranger = git_init(tmp_path / "elsewhere" / "repo-z")
    assert_error(run_cli("box", str(stranger), "--json"), 3)
    assert_error(run_cli("box", str(tmp_path / "no" / "such" / "dir"), "--json"), 3)


def test_ambiguous_box_label_is_not_found():
    rostered(repo("repo-b"), repo("repo-b", parent="other"))
    assert_error(run_cli("box", "repo-b", "--json"), 3)
    # ... but each can still be named by its path
    assert run_cli("box", str(user_home() / "other" / "repo-b"), "--json").code == 0


@pytest.mark.parametrize("bad", ["zz", "89A55A8758CB", "89a", "89a55a8758cbb", "89a55a8758cg", ""])
@pytest.mark.parametrize("command", ["pickup", "answer"])
def test_bad_id_is_a_usage_error_and_writes_nothing(command, bad):
    message = assert_error(run_cli(command, bad, "--what", "on it", "--json"), 2)
    assert "id" in message
    assert not spool().exists()
    assert not home().exists(), "a refused command creates no home"


def test_bad_id_among_good_ones_writes_nothing():
    assert_error(run_cli("pickup", "89a55a8758cb", "nope", "--what", "on it", "--json"), 2)
    assert not spool().exists()


@pytest.mark.parametrize("command", [["write"], ["pickup", "89a55a8758cb"], ["answer", "89a55a8758cb"]])
def test_empty_what_is_a_usage_error(command):
    assert_error(run_cli(*command, "--what", "", "--json"), 2)
    human = run_cli(*command, "--what", "")
    assert human.code == 2 and human.stdout == "" and "--what" in human.stderr
    assert not spool().exists()


@pytest.mark.parametrize("command", [["write"], ["pickup", "89a55a8758cb"], ["answer", "89a55a8758cb"]])
def test_missing_what_is_a_usage_error(command):
    assert_error(run_cli(*command, "--json"), 2)
    assert not spool().exists()


@pytest.mark.parametrize("command", ["pickup", "answer"])
def test_missing_ids_is_a_usage_error(command):
    assert_error(run_cli(command, "--what", "on it", "--json"), 2)
    assert not spool().exists()


def test_bad_disposition_is_a_usage_error():
    assert_error(run_cli("answer", "89a55a8758cb", "--what", "done", "--disposition", "maybe", "--json"), 2)
    assert not spool().exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus", "--json"],
        ["sweep", "--json", "--bogus"],
        ["distribute", "--bogus", "--json"],
        ["box", "medulla", "--json", "--bogus"],
        ["doctor", "--json", "--bogus"],
        ["write", "--what", "x", "--bogus", "--json"],
        ["roster", "add", ".", "--bogus", "--json"],
    ],
)
def test_unknown_option_with_json_is_a_usage_error_envelope(args):
    assert "--bogus" in assert_error(run_cli(*args), 2)


@pytest.mark.parametrize("args", [["--bogus"], ["sweep", "--bogus"], ["doctor", "--bogus"], ["nosuchcommand"]])
def test_usage_errors_without_json_exit_2_and_print_nothing_on_stdout(args):
    result = run_cli(*args)
    assert result.code == 2
    assert result.stdout == ""
    assert result.stderr


def test_bad_now_is_a_usage_error():
    assert_error(run_cli("doctor", "--json", "--now", "not-a-time"), 2)


def test_roster_remove_of_an_unknown_root_is_not_found(tmp_path):
    assert_error(run_cli("roster", "remove", str(tmp_path / "never-added"), "--json"), 3)


@pytest.mark.parametrize("args", [["--inbox-sweep"], ["sweep", "--json"]])
def test_refused_box_on_sweep_prints_the_document_and_exits_1(refused, args):
    result = run_cli(*args)
    assert result.code == 1
    doc = one_document(result)
    assert doc["schema"] == "m1nd-inbox-sweep-v0"  # the document, not an error envelope
    assert doc["total"] == 5
    assert doc["distribution"]["to_project"] == 4
    assert "repo-b" in result.stderr and "symlink" in result.stderr
    assert list(refused.iterdir()) == [], "nothing written through the symlink"
    # The rest of the run went on: the other boxes were filed.
    assert (user_home() / "src" / "repo-a" / ".m1nd" / "inbox.jsonl").exists()
    assert (home() / "inbox.jsonl").exists()


def test_refused_box_with_no_distribute_still_prints_and_exits_1(refused):
    result = run_cli("--inbox-sweep", "--no-distribute")
    assert result.code == 1
    assert one_document(result)["distribution"] is None
    assert "repo-b" in result.stderr


def test_refused_box_on_human_sweep_and_distribute_exits_1(refused):
    human = run_cli("sweep")
    assert human.code == 1 and "repo-b" in human.stderr
    receipt = run_cli("distribute", "--json")
    assert receipt.code == 1
    assert set(one_document(receipt)) == RECEIPT_KEYS


def test_refused_box_cannot_be_viewed(refused):
    assert "symlink" in assert_error(run_cli("box", "repo-b", "--json"), 1)


def test_unreadable_spool_on_inbox_sweep_is_an_error_envelope(tmp_path):
    spool().mkdir(parents=True)
    result = run_cli("--inbox-sweep")
    assert "spool" in assert_error(result, 1)


def test_json_success_documents_are_single_and_canonical(two_repos):
    copy_spool("worked-example.jsonl")
    for args in (["--inbox-sweep"], ["--inbox-sweep", "--no-distribute"], ["sweep", "--json"],
                 ["sweep", "--json", "--no-distribute"], ["distribute", "--json"], ["box", "repo-a", "--json"],
                 ["doctor", "--json"], ["roster", "list", "--json"]):
        result = run_cli(*args)
        assert result.code == 0, (args, result.stderr)
        one_document(result)


def test_sweep_json_equals_inbox_sweep(two_repos):
    copy_spool("worked-example.jsonl")
    assert run_cli("distribute").code == 0
    assert run_cli("sweep", "--json").stdout == run_cli("--inbox-sweep").stdout
    assert run_cli("sweep", "--json", "--no-distribute").stdout == run_cli(
        "--inbox-sweep", "--no-distribute"
    ).stdout


# ----------------------------------------------------------------------------- distribute --json


def test_distribute_json_prints_exactly_the_receipt_keys(two_repos):
    copy_spool("worked-example.jsonl")
    result = run_cli("distribute", "--json")
    assert result.code == 0
    doc = one_document(result)
    assert set(doc) == RECEIPT_KEYS
    assert doc == {"spool_total": 5, "appended": 5, "to_project": 4, "to_medulla": 1, "pending": []}
    again = one_document(run_cli("distribute", "--json"))
    assert again == {**doc, "appended": 0}


def test_distribute_json_with_nothing_anywhere():
    doc = one_document(run_cli("distribute", "--json"))
    assert doc == {"spool_total": 0, "appended": 0, "to_project": 0, "to_medulla": 0, "pending": []}


def test_distribute_receipt_matches_the_sweep_distribution(two_repos):
    copy_spool("case-variants.jsonl")
    receipt = one_document(run_cli("distribute", "--json"))
    again = one_document(run_cli("--inbox-sweep"))["distribution"]
    assert again == {**receipt, "appended": 0}


# ----------------------------------------------------------------------------- m1nd box


def box_json(*args, cwd=None) -> dict:
    result = run_cli("box", *args, "--json", cwd=cwd)
    assert result.code == 0, (result.stdout, result.stderr)
    doc = one_document(result)
    assert set(doc) == {"served_brain", "letters", "counts"}
    assert set(doc["served_brain"]) == {"project_root", "display_name"}
    assert set(doc["counts"]) == COUNT_KEYS
    assert doc["counts"]["open"] == doc["counts"]["wet_ink"] + doc["counts"]["in_flight"]
    for letter in doc["letters"]:
        assert set(letter) == V0_LETTER_KEYS
    return doc


def ids(doc: dict) -> list[str]:
    return [letter["id"] for letter in doc["letters"]]


def test_box_medulla(two_repos):
    copy_spool("worked-example.jsonl")
    run_cli("distribute")
    doc = box_json("medulla")
    assert doc["served_brain"] == {"project_root": None, "display_name": "medulla"}
    assert ids(doc) == ["5f5a51bd048f"]
    # Its answer is in repo-b's box, not this one: wet ink here, never a re-fold of the spool.
    # the letter answers another (a reply): open, but not open work (section 7)
    assert doc["counts"] == {"wet_ink": 1, "in_flight": 0, "fired_clay": 0, "external": 0, "open": 1, "open_work": 0}


def test_box_medulla_before_anything_exists():
    doc = box_json("medulla")
    assert doc["letters"] == [] and doc["counts"]["open"] == 0
    assert not home().exists(), "viewing a box writes nothing"


def test_box_by_root_path_label_and_case(two_repos, tmp_path):
    a, _ = two_repos
    copy_spool("worked-example.jsonl")
    run_cli("distribute")
    expected = box_json(str(a))
    assert expected["served_brain"] == {"project_root": str(a), "display_name": "repo-a"}
    assert ids(expected) == ["89a55a8758cb", "232d8e3f0c2e", "0b99a99db016"]
    assert box_json(str(a) + "/") == expected
    assert box_json("repo-a") == expected
    assert box_json("REPO-A") == expected
    assert box_json("Repo-A") == expected
    rel = os.path.relpath(a, tmp_path / "work")
    assert box_json(rel) == expected


def test_box_defaults_to_the_bound_root(two_repos):
    a, _ = two_repos
    copy_spool("worked-example.jsonl")
    run_cli("distribute")
    (a / "deep" / "er").mkdir(parents=True)
    assert box_json(cwd=a / "deep" / "er") == box_json("repo-a")


def test_box_default_for_an_unrostered_bound_root(tmp_path):
    """The bound root is a root of the run even when it is not in the roster."""
    a = repo("repo-a")
    doc = box_json(cwd=a)
    assert doc["served_brain"] == {"project_root": str(a), "display_name": "repo-a"}
    assert doc["letters"] == []


def test_box_without_selector_outside_a_work_tree_is_a_usage_error():
    # The contract is silent; the implementation asks for a selector (exit 2).
    assert_error(run_cli("box", "--json"), 2)


def test_box_from_root_option(tmp_path):
    a = repo("repo-a")
    place_box(a, "box-repo-a-arrived-by-git.jsonl")
    result = run_cli("box", "repo-a", "--json", "--root", str(a))
    assert result.code == 0
    assert run_cli("box", "repo-a", "--json").code == 3  # not a root of that run


def test_box_file_order_duplicates_kept_missions_left_out(two_repos):
    a, _ = two_repos
    place_box(a, "box-repo-a-arrived-by-git.jsonl")
    doc = box_json("repo-a")
    # File order, the duplicate of line 2 kept (line 4), the mission (line 5) left out.
    assert ids(doc) == ["89a55a8758cb", "0d1e2dcd665d", "96cd45b968d1", "0d1e2dcd665d", "f41a3f56cb77"]
    states = {l["id"]: l["state"] for l in doc["letters"]}
    assert states["0d1e2dcd665d"] == "in_flight"
    # Counts of distinct letters, from this box alone.
    assert doc["counts"] == {"wet_ink": 3, "in_flight": 1, "fired_clay": 0, "external": 0, "open": 4, "open_work": 3}


def test_box_fates_come_from_the_box_alone(two_repos):
    """The seek letter is answered by a receipt that is only in the spool, not in this box."""
    a, _ = two_repos
    place_box(a, "box-repo-a-arrived-by-git.jsonl")
    copy_spool("worked-example.jsonl")
    swept = {l["id"]: l for l in one_document(run_cli("--inbox-sweep", "--no-distribute"))["letters"]}
    assert swept["89a55a8758cb"]["state"] == "fired_clay"
    doc = box_json("repo-a")
    seek = next(l for l in doc["letters"] if l["id"] == "89a55a8758cb")
    assert seek["state"] == "wet_ink" and seek["answered_by"] == []
    # Once distribution files the receipt into this box, the box itself knows.
    assert run_cli("distribute").code == 0
    doc = box_json("repo-a")
    seek = next(l for l in doc["letters"] if l["id"] == "89a55a8758cb")
    assert seek["state"] == "fired_clay" and seek["answered_by"] == ["0b99a99db016"]
    assert doc["counts"] == {"wet_ink": 3, "in_flight": 1, "fired_clay": 1, "external": 1, "open": 4, "open_work": 2}


def test_box_malformed_lines_are_skipped(two_repos):
    _, b = two_repos
    place_box(b, "box-repo-b-conflict.jsonl")
    result = run_cli("box", "repo-b")
    assert result.code == 0
    assert "malformed" in result.stderr
    assert ids(box_json("repo-b")) == ["599e904e1408", "e4907411fe11", "e805d51ac9aa"]


def test_box_view_writes_nothing(two_repos, tmp_path):
    copy_spool("worked-example.jsonl")
    # the read model under <home>/state/ and the coverage ledger under <home>/records/ are what a read may keep
    before = sorted(p for p in tmp_path.rglob("*") if not {"state", "records"} & set(p.relative_to(tmp_path).parts))
    for sel in ("repo-a", "repo-b", "medulla"):
        assert run_cli("box", sel, "--json").code == 0
        assert run_cli("box", sel).code == 0
    assert sorted(p for p in tmp_path.rglob("*") if not {"state", "records"} & set(p.relative_to(tmp_path).parts)) == before


# ----------------------------------------------------------------------------- help and version


def _command_paths() -> list[list[str]]:
    """Every command and subcommand path of the real app, walked from the click tree."""
    from typer.main import get_command

    from m1nd.cli.app import app

    root = get_command(app)
    paths: list[list[str]] = []

    def walk(cmd, prefix):
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            paths.append(prefix + [name])
            walk(sub, prefix + [name])

    walk(root, [])
    return paths


def test_the_contract_commands_exist():
    names = {" ".join(p) for p in _command_paths()}
    for command in ("sweep", "distribute", "box", "doctor", "write", "pickup", "answer", "roster",
                    "roster add", "roster remove", "roster list", "demo"):
        assert command in names


@pytest.mark.parametrize("path", [[]] + _command_paths(), ids=lambda p: " ".join(p) or "m1nd")
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_command_has_help(path, flag):
    result = run_cli(*path, flag)
    assert result.code == 0, result.stderr
    assert "Usage" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p))
def test_every_command_has_help_text(path):
    from typer.main import get_command

    from m1nd.cli.app import app

    cmd = get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    assert (cmd.help or cmd.short_help or "").strip(), f"m1nd {' '.join(path)} has no help text"


def test_version_in_a_subprocess():
    from m1nd import __version__

    done = run_script("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == f"m1nd {__version__}\n"
    assert done.stderr == b""


def test_help_in_a_subprocess():
    done = run_script("--help")
    assert done.returncode == 0
    assert b"Usage" in done.stdout


def test_no_arguments_prints_help_and_exits_0():
    result = run_cli()
    assert result.code == 0 and "Usage" in result.stdout


# ----------------------------------------------------------------------------- README command reference


def _readme_code(readme: Path) -> list[str]:
    """Inline code spans and the lines of fenced code blocks of README.md."""
    if not readme.exists():
        return []
    text = readme.read_text(encoding="utf-8")
    pieces: list[str] = []
    fence = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
    for block in fence.finditer(text):
        pieces.extend(block.group(2).splitlines())
    prose = fence.sub("", text)
    pieces.extend(re.findall(r"``?([^`\n]+?)``?", prose))
    return pieces


def readme_invocations(readme: Path = REPO_ROOT / "README.md") -> list[list[str]]:
    """The words after `m1nd` of every invocation in README code (prompts and `cd x &&` skipped).

    In a Markdown table a code span writes alternatives with an escaped pipe
    (`m1nd roster add\\|remove\\|list`): each alternative counts as its own invocation.
    """
    found = []
    for piece in _readme_code(readme):
        piece = piece.replace("\\|", "\0")
        for segment in re.split(r"&&|\|\||[|;]", piece):
            segment = segment.strip()
            segment = re.sub(r"^\$\s+", "", segment)
            if not segment.startswith("m1nd "):
                continue
            words = segment.split()[1:]
            firsts = words[0].split("\0") if words else [""]
            seconds = words[1].split("\0") if len(words) > 1 else [None]
            for first in firsts:
                for second in seconds:
                    alt = [first] + ([second] if second is not None else []) + [w.replace("\0", "|") for w in words[2:]]
                    found.append(alt)
    return found


def _is_placeholder(word: str) -> bool:
    return word[:1] in "<[{" or word.isupper() or word in ("...", "…")


def _documents() -> list[Path]:
    return [REPO_ROOT / "README.md"] + sorted((REPO_ROOT / "docs").glob("**/*.md"))


def unknown_commands(document: Path) -> list[str]:
    """The invocations in a document's code whose command (or group subcommand, or
    top-level flag) does not exist."""
    from typer.main import get_command

    from m1nd.cli.app import app

    root = get_command(app)
    top_flags = {opt for p in root.params for opt in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
    missing = []
    for words in readme_invocations(document):
        first = words[0]
        if _is_placeholder(first):
            continue
        if first.startswith("-"):
            flag = first.split("=", 1)[0]
            if flag not in top_flags:
                missing.append(f"m1nd {first}: not a top-level flag")
            continue
        cmd = root.commands.get(first)
        if cmd is None:
            missing.append(f"m1nd {first}: no such command")
            continue
        sub = words[1] if len(words) > 1 else None
        if hasattr(cmd, "commands") and sub and not sub.startswith("-") and not _is_placeholder(sub):
            if sub not in cmd.commands:
                missing.append(f"m1nd {first} {sub}: no such subcommand")
    return missing


@pytest.mark.parametrize("document", _documents(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_documented_command_exists(document):
    """Each `m1nd WORD` in the README's (and docs') code is a real command or a top-level flag."""
    assert unknown_commands(document) == []


def test_an_unknown_documented_command_is_caught(tmp_path):
    doc = tmp_path / "README.md"
    doc.write_text("Run `m1nd frobnicate`, `m1nd roster purge`, `m1nd --colour` and `m1nd sweep --json`.\n")
    assert unknown_commands(doc) == ["m1nd frobnicate: no such command", "m1nd roster purge: no such subcommand",
                                     "m1nd --colour: not a top-level flag"]


def test_readme_parser_finds_invocations(tmp_path):
    """The parser itself: code spans, fenced blocks, prompts and `cd x &&` prefixes."""
    sample = (
        "Run `m1nd sweep` or `m1nd --inbox-sweep`. m1nd is prose, not a command.\n\n"
        "```sh\n$ m1nd roster add ~/src/repo-a\ncd repo-a && m1nd write --what x\npython -m m1nd --version\n```\n"
        "\n| command | what |\n|---|---|\n| `m1nd roster add\\|remove` | roots |\n"
    )
    (tmp_path / "README.md").write_text(sample, encoding="utf-8")
    assert readme_invocations(tmp_path / "README.md") == [["roster", "add", "~/src/repo-a"], ["write", "--what", "x"], ["sweep"],
                                    ["--inbox-sweep"], ["roster", "add"], ["roster", "remove"]]


# ----------------------------------------------------------------------------- doctor


def doctor_json(*args, code=None) -> tuple[int, dict]:
    result = run_cli("doctor", "--json", *args)
    doc = one_document(result)
    assert doc["schema"] == "m1nd-doctor-v0"
    if code is not None:
        assert result.code == code, result.stdout
    return result.code, doc


def checks(doc) -> dict[str, dict]:
    return {c["name"]: c for c in doc["checks"]}


def test_doctor_checks_include_the_core_names(two_repos):
    copy_spool("worked-example.jsonl")
    _, doc = doctor_json(code=0)
    assert {"spool", "boxes", "roster", "pending", "consent"} <= set(checks(doc))
    for check in doc["checks"]:
        assert set(check) == {"name", "status", "message", "fix"}
        assert check["status"] in ("ok", "warn", "error")
        assert isinstance(check["fix"], str)


def test_doctor_checks_include_every_contract_name(two_repos):
    """Section 8: at least spool, boxes, roster, pending, held, consent, git."""
    copy_spool("worked-example.jsonl")
    _, doc = doctor_json()
    assert {"spool", "boxes", "roster", "pending", "held", "consent", "git"} <= set(checks(doc))


def test_doctor_exit_1_when_a_check_is_error(refused):
    code, doc = doctor_json(code=1)
    assert checks(doc)["boxes"]["status"] == "error"
    assert checks(doc)["boxes"]["fix"]
    assert run_cli("doctor").code == 1  # the human view too
    assert doc["mailbox"] is not None  # a refused box does not hide the mailbox


def test_doctor_exit_0_with_warnings_only(two_repos):
    rostered(user_home() / "src" / "repo-gone")
    copy_spool("malformed.jsonl")
    code, doc = doctor_json(code=0)
    statuses = {c["status"] for c in doc["checks"]}
    assert "warn" in statuses and "error" not in statuses


def test_doctor_with_nothing_anywhere(tmp_path):
    code, doc = doctor_json(code=0)
    assert doc["mailbox"] == {"memory_misdelivery": 0, "confusion_rate_7d": 0, "spool_letters": 0,
                              "pending_distribution": [], "spool_path": str(spool())}
    assert not home().exists(), "doctor writes nothing"


@pytest.mark.parametrize(
    "now, expected",
    [
        (None, 3),  # M1ND_NOW = 2026-05-03: 04-26 (7 days), 05-03, 05-04 (tomorrow)
        ("2026-05-03T23:59:59Z", 3),
        ("2026-05-04T00:00:00Z", 3),  # 04-27..05-05: 05-03, 05-04, 05-05
        ("2026-04-25T00:00:00Z", 2),  # ..04-26: 04-25, 04-26
        ("2026-04-24T12:00:00Z", 1),  # ..04-25: 04-25
        ("2026-04-23T12:00:00Z", 0),  # ..04-24
        ("2026-05-12T00:00:00Z", 1),  # 05-05..05-13: 05-05
        ("2026-05-13T00:00:00Z", 0),
        ("2026-06-01T00:00:00Z", 0),
        # The day is the UTC day: 23:30 at -02:00 on 04-24 is 01:30Z on 04-25.
        ("2026-04-24T23:30:00-02:00", 2),
        # ... and 00:30 at +02:00 on 04-25 is 22:30Z on 04-24.
        ("2026-04-25T00:30:00+02:00", 1),
        ("2026-04-25", 2),  # a date alone is midnight UTC
    ],
)
def test_doctor_now_moves_the_confusion_window(now, expected):
    repo("repo-a")
    copy_spool("misdelivery-window.jsonl")
    args = ["--now", now] if now else []
    _, doc = doctor_json(*args)
    assert doc["mailbox"]["confusion_rate_7d"] == expected
    assert doc["mailbox"]["memory_misdelivery"] == 8  # all-time: the clock does not matter


def test_doctor_now_defaults_to_the_environment(monkeypatch):
    copy_spool("misdelivery-window.jsonl")
    monkeypatch.setenv("M1ND_NOW", "2026-04-24T12:00:00Z")
    assert doctor_json()[1]["mailbox"]["confusion_rate_7d"] == 1
    # --now wins over the environment
    assert doctor_json("--now", "2026-05-03T09:00:00Z")[1]["mailbox"]["confusion_rate_7d"] == 3


def test_doctor_mailbox_is_null_when_the_spool_cannot_be_read(two_repos):
    spool().mkdir(parents=True)  # the spool path is a directory
    code, doc = doctor_json()
    assert doc["mailbox"] is None
    spool_check = checks(doc)["spool"]
    assert spool_check["status"] == "error"
    assert str(spool()) in spool_check["message"]
    assert code == 1
    # doctor itself still ran every other check
    assert {"boxes", "roster", "pending", "consent"} <= set(checks(doc))
    human = run_cli("doctor")
    assert human.code == 1 and "mailbox" in human.stdout


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_doctor_mailbox_is_null_when_the_spool_is_not_readable(two_repos):
    copy_spool("worked-example.jsonl")
    spool().chmod(0)
    try:
        _, doc = doctor_json(code=1)
    finally:
        spool().chmod(0o600)
    assert doc["mailbox"] is None
    assert checks(doc)["spool"]["status"] == "error"


def test_doctor_spool_option_and_pending(two_repos, tmp_path):
    other = tmp_path / "elsewhere.jsonl"
    shutil.copyfile(FIXTURES / "case-variants.jsonl", other)
    _, doc = doctor_json("--spool", str(other))
    assert doc["mailbox"]["spool_path"] == str(other)
    assert doc["mailbox"]["spool_letters"] == 11
    assert doc["mailbox"]["pending_distribution"] == ["REPO-C", "repo-c"]
    assert checks(doc)["pending"]["status"] == "warn"


def test_doctor_uses_the_runs_real_roots_never_an_empty_roster(tmp_path):
    """Letters for the bound root are not pending when doctor runs inside it."""
    a = repo("repo-a")
    copy_spool("worked-example.jsonl")
    result = run_cli("doctor", "--json", cwd=a)
    assert json.loads(result.stdout)["mailbox"]["pending_distribution"] == ["repo-b"]
    result = run_cli("doctor", "--json", "--root", str(repo("repo-b")), cwd=a)
    assert json.loads(result.stdout)["mailbox"]["pending_distribution"] == []


# ----------------------------------------------------------------------------- private state


def _sweep_doc(*args) -> dict:
    result = run_cli("--inbox-sweep", *args)
    assert result.code == 0, result.stderr
    return one_document(result)


def _box_bytes() -> dict[str, bytes]:
    found = {}
    for p in sorted(user_home().rglob(".m1nd/inbox.jsonl")) + [home() / "inbox.jsonl"]:
        if p.exists():
            found[str(p)] = p.read_bytes()
    return found


def test_the_result_never_depends_on_private_state(tmp_path):
    """Section 6: after any sequence of runs, the document (and the boxes) equal what a
    first run over the same spool, roster and boxes gives."""
    a, b = repo("repo-a"), repo("repo-b")
    rostered(b)
    copy_spool("worked-example.jsonl")
    _sweep_doc()
    rostered(a)  # a roster change between runs
    with open(spool(), "ab") as fh:  # new letters, the last one still being written
        fh.write((FIXTURES / "case-variants.jsonl").read_bytes()[:-40])
    _sweep_doc()
    with open(spool(), "ab") as fh:  # ... and finished
        fh.write((FIXTURES / "case-variants.jsonl").read_bytes()[-40:])
    run_cli("distribute", cwd=a)  # a run with a bound root
    incremental = _sweep_doc()
    boxes = _box_bytes()

    shutil.rmtree(home() / "state", ignore_errors=True)
    fresh = _sweep_doc()
    assert fresh["distribution"]["appended"] == 0  # everything was already filed
    assert fresh == incremental
    assert _box_bytes() == boxes


def test_a_replaced_spool_is_read_again():
    repo("repo-a"), repo("repo-b")
    rostered(user_home() / "src" / "repo-a", user_home() / "src" / "repo-b")
    copy_spool("worked-example.jsonl")
    _sweep_doc()
    replacement = spool().with_suffix(".new")
    shutil.copyfile(FIXTURES / "case-variants.jsonl", replacement)
    os.replace(replacement, spool())
    incremental = _sweep_doc()
    shutil.rmtree(home() / "state", ignore_errors=True)
    fresh = _sweep_doc()
    assert incremental["distribution"] == {**fresh["distribution"], "appended": 9}
    assert {k: v for k, v in incremental.items() if k != "distribution"} == {
        k: v for k, v in fresh.items() if k != "distribution"}


@pytest.mark.parametrize("how", ["deleted", "emptied", "dir-deleted"])
def test_a_box_that_lost_its_letters_is_filed_again(two_repos, how):
    """A box can lose its file outside m1nd (`git clean -X` removes a local, ignored box;
    a checkout of an older commit removes a committed one).  Its letters are still in
    the spool, and a letter is appended whenever no line of the box has its id: the
    next distribution files them again, exactly as a first run would."""
    a, _ = two_repos
    copy_spool("worked-example.jsonl")
    assert run_cli("distribute").code == 0
    box = a / ".m1nd" / "inbox.jsonl"
    filed = box.read_bytes()
    if how == "deleted":
        box.unlink()
    elif how == "emptied":
        box.write_bytes(b"")
    else:
        shutil.rmtree(a / ".m1nd")
    receipt = one_document(run_cli("distribute", "--json"))
    assert box.exists() and box.read_bytes() == filed
    assert receipt["appended"] == 3


@pytest.mark.parametrize("args", [["sweep", "--no-distribute"], ["sweep", "--json", "--no-distribute"],
                                  ["--inbox-sweep", "--no-distribute"]])
@pytest.mark.parametrize("first", [False, True], ids=["fresh", "after-a-run"])
def test_no_distribute_writes_nothing_and_creates_no_directory(two_repos, tmp_path, args, first):
    copy_spool("malformed.jsonl")
    if first:
        assert run_cli("distribute").code == 0
        with open(spool(), "ab") as fh:  # something new that a filing run would file
            fh.write(b'\n{"repo":"repo-a","what":"new since the last run"}\n')

    def state():
        # <home>/state/ (the read model) and <home>/records/ (the coverage ledger) are where a read-only run
        # may write (section 6)
        return sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*")
                      if not {"state", "records"} & set(p.relative_to(tmp_path).parts) and p.name != "m1nd-home")

    before = state()
    result = run_cli(*args)
    assert result.code == 0, result.stderr
    assert state() == before


# ----------------------------------------------------------------------------- colour


def _run_on_a_tty(args: list[str], env_changes: dict) -> bytes:
    """Run `python -m m1nd ARGS` with stdout and stderr on a pseudo-terminal."""
    code, out = run_on_a_tty(args, env_changes)
    assert code in (0, 1)
    return out


@pytest.mark.parametrize(
    "env_changes, coloured",
    [
        ({"NO_COLOR": None, "M1ND_IN_HOOK": None}, True),
        ({"NO_COLOR": "1", "M1ND_IN_HOOK": None}, False),
        ({"NO_COLOR": None, "M1ND_IN_HOOK": "1"}, False),  # inside a git hook
    ],
    ids=["tty", "no-color", "in-hook"],
)
def test_colour_only_on_a_tty_without_no_color_outside_hooks(two_repos, env_changes, coloured):
    copy_spool("worked-example.jsonl")
    out = _run_on_a_tty(["sweep", "--no-pager"], env_changes)  # a pager may emit its own escapes
    assert b"Box " in out
    assert (b"\x1b[" in out) is coloured


def test_no_colour_off_a_tty(two_repos, monkeypatch):
    monkeypatch.delenv("NO_COLOR")
    copy_spool("worked-example.jsonl")
    for args in (["sweep"], ["box", "repo-a"], ["doctor"]):
        result = run_cli(*args)
        assert "\x1b[" not in result.stdout + result.stderr, args


@pytest.mark.parametrize("moment", ["9999-12-31T23:59:59-14:00", "9999-12-31T23:00:00Z", "0001-01-01T00:00:00+14:00",
                                    "0001-01-02T00:00:00Z"])
@pytest.mark.parametrize("command", [("doctor",), ("report",), ("report", "alert"), ("distribute",)])
def test_a_clock_at_the_edge_of_the_calendar_is_a_usage_error_not_a_crash(command, moment):
    r = run_cli(*command, "--now", moment)
    assert r.code == 2, (r.stdout, r.stderr)
    assert r.stderr == f"m1nd: error: time out of range: {moment!r} (a year from 1000 to 9000)\n"


def test_a_clock_inside_the_calendar_runs_every_dated_command():
    for moment in ("1000-01-01T00:00:00Z", "9000-12-31T23:59:59Z"):
        for command in (("doctor",), ("report",), ("report", "alert"), ("distribute",)):
            r = run_cli(*command, "--now", moment)
            assert r.code == 0, (command, moment, r.stderr)
