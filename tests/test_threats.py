"""Threats from letters written by someone else: no line, field or path breaks a read.

Each test here is one boundary of docs/threat-model.md.
"""

from __future__ import annotations

import pytest

from m1nd.letters import MAX_DEPTH, load
from tests.conftest import read_terminal, write_spool


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


# -- sentinel probes are code from elsewhere --------------------------------------------

import os  # noqa: E402
import shutil  # noqa: E402
import stat  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

import orjson  # noqa: E402

from m1nd.letters import letter_id  # noqa: E402
from tests.conftest import run_cli  # noqa: E402

FP = "fp:seek/false_absence"


def _repo(name: str) -> Path:
    path = Path(os.environ["HOME"]) / "src" / name
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    assert run_cli("roster", "add", str(path)).code == 0
    return path


def _guarded(spool_path, probe: str, repo: str = "repo-a") -> tuple[bytes, bytes]:
    w = orjson.dumps({"ts": "2026-05-01T09:00:00Z", "class": "bug", "kind": "false_absence", "repo": repo,
                      "tool": "seek", "what": "gone"})
    r = orjson.dumps({"ts": "2026-05-02T09:00:00Z", "class": "triage", "repo": repo, "what": "fixed",
                      "answers": [letter_id(w)], "disposition": "fixed", "fingerprint": FP,
                      "sentinel": {"probe": probe, "expect": "absent"}})
    write_spool(spool_path, [w, r])
    assert run_cli("distribute").code == 0
    return w, r


def test_a_grant_copied_into_another_box_runs_nothing_there(spool_path):
    repo_a = _repo("repo-a")
    w, r = _guarded(spool_path, "touch ran-here")
    assert run_cli("sentinels", "allow", letter_id(r)).code == 0
    repo_b = _repo("repo-b")
    (repo_b / ".m1nd").mkdir(exist_ok=True)
    write_spool(repo_b / ".m1nd" / "inbox.jsonl", [w, r])  # pushed into repo-b by someone else
    result = run_cli("sentinels", "run")
    assert not (repo_b / "ran-here").exists()
    assert result.code in (0, 1) and "Traceback" not in result.stderr
    assert "runs in:" in result.stdout


def test_a_grant_does_not_follow_a_moved_root(spool_path):
    repo_a = _repo("repo-a")
    _, r = _guarded(spool_path, "touch ran-here")
    assert run_cli("sentinels", "allow", letter_id(r)).code == 0
    assert run_cli("sentinels", "run", "--json").json["green"] == 1
    (repo_a / "ran-here").unlink()
    moved = repo_a.with_name("repo-moved")
    shutil.move(repo_a, moved)
    assert run_cli("roster", "add", str(moved)).code == 0
    doc = run_cli("sentinels", "run", "--json").json
    assert doc["green"] == 0 and not (moved / "ran-here").exists()


def test_a_program_committed_in_the_repository_never_shadows_the_probe(spool_path, monkeypatch):
    repo_a = _repo("repo-a")
    marker = repo_a / "shadowed"
    for where in (repo_a, repo_a / "bin"):
        where.mkdir(exist_ok=True)
        fake = where / "true"
        fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f":.:bin:{repo_a / 'bin'}:{os.environ['PATH']}:")
    _, r = _guarded(spool_path, "true")
    assert run_cli("sentinels", "allow", letter_id(r)).code == 0
    doc = run_cli("sentinels", "run", "--json").json
    assert doc["green"] == 1 and not marker.exists()


@pytest.mark.parametrize("probe", ["true\x00x", "true\x1b[2K", "true \u202e"])
def test_a_probe_with_a_nul_or_control_is_refused_at_allow_and_run_goes_on(spool_path, probe):
    _repo("repo-a")
    _, r = _guarded(spool_path, probe)
    allowed = run_cli("sentinels", "allow", letter_id(r))
    assert allowed.code == 2 and "control character" in allowed.stderr
    _no_raw_control(allowed.stderr)
    result = run_cli("sentinels", "run")
    assert result.code == 0 and "Traceback" not in result.stderr
    _no_raw_control(result.stdout + result.stderr)


# -- a held letter's text never leaves ---------------------------------------------------

def _secret() -> str:
    # made up at test time from parts: an AWS-style assignment of 40 characters
    import random
    import string

    rng = random.Random(15)
    return "AWS_SECRET_ACCESS_KEY" + "=" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))


def _held_letter(spool_path, tmp_path) -> tuple[str, str]:
    root = tmp_path / "src" / "repo-a"
    root.mkdir(parents=True)
    assert run_cli("roster", "add", str(root)).code == 0
    secret = _secret()
    raw = orjson.dumps({"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "class": "bug", "repo": "repo-a",
                        "what": f"deploy failed: {secret}"})
    write_spool(spool_path, [raw])
    assert run_cli("distribute").code == 0
    return letter_id(raw), secret.split("=")[1]


def test_a_held_letter_never_shows_in_show_or_show_json(spool_path, tmp_path):
    lid, needle = _held_letter(spool_path, tmp_path)
    human = run_cli("show", lid)
    doc = run_cli("show", lid, "--json")
    assert human.code == 0 and doc.code == 0
    assert needle not in human.stdout + doc.stdout
    assert doc.json["held"] and doc.json["letter"] == {"ts": "2026-05-01T10:00:00Z"}
    for args in (["show", lid, "--reveal"], ["show", lid, "--reveal", "--json"]):
        refused = run_cli(*args)  # stdout is not a terminal here
        assert refused.code == 2 and needle not in refused.stdout + refused.stderr


def test_show_reveal_prints_a_held_letter_on_a_terminal(spool_path, tmp_path):
    import pty
    import sys

    lid, needle = _held_letter(spool_path, tmp_path)
    leader, follower = pty.openpty()
    env = dict(os.environ, M1ND_PAGER="cat", PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.Popen([sys.executable, "-m", "m1nd", "show", lid, "--reveal"], stdin=follower,
                            stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    out = read_terminal(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    os.close(leader)
    assert needle.encode() in out


def test_a_held_letter_never_reaches_a_report_an_alert_or_an_exec_sink(spool_path, tmp_path, monkeypatch):
    # the letter is observed on the reports' clock, so the first report's period holds it
    monkeypatch.setenv("M1ND_NOW", "2026-05-01T11:00:00Z")
    lid, needle = _held_letter(spool_path, tmp_path)
    captured = tmp_path / "sink-input"
    outputs = [run_cli("report", "alert", "--now", "2026-05-01T14:00:00Z", "--json").stdout]
    r = run_cli("report", "--to", f"exec:sh -c 'cat > {captured}'", "--now", "2026-05-01T22:00:00Z")
    assert r.code == 0, r.stderr
    outputs.append(r.stdout + r.stderr)
    assert captured.exists() and lid in captured.read_text()
    outputs.append(captured.read_text())
    runs = run_cli("report", "list", "--json").json["reports"]
    assert runs
    for fmt in ("md", "html", "json"):
        rendered = run_cli("report", "render", runs[0]["run_id"], "--format", fmt)
        assert rendered.code == 0 and lid in rendered.stdout
        outputs.append(rendered.stdout)
    outputs.append(run_cli("cases").stdout)
    for text in outputs:
        assert needle not in text


# -- a reply goes where its letter is --------------------------------------------------

def test_a_reply_to_a_letter_that_arrived_by_git_naming_an_unknown_repo_is_filed_into_its_box(spool_path):
    repo_a = _repo("repo-a")
    write_spool(spool_path, [{"what": "first", "repo": "repo-a"}])
    assert run_cli("distribute").code == 0
    box = repo_a / ".m1nd" / "inbox.jsonl"
    arrived = orjson.dumps({"ts": "2026-05-01T10:00:00Z", "class": "bug", "repo": HOSTILE, "what": "from elsewhere"})
    write_spool(box, [arrived])  # pushed into repo-a's box, naming a repository unknown here
    done = run_cli("answer", letter_id(arrived), "--what", "fixed it", "--disposition", "fixed")
    assert done.code == 0, done.stderr
    receipt = run_cli("distribute", "--json").json
    assert receipt["pending"] == []
    assert done.stdout.strip() in [letter_id(l) for l in box.read_bytes().splitlines() if l.strip()]


# -- hostile lines, generated, over the read commands ------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NASTY = st.sampled_from(["\x1b]52;c;aGk=\x07", "\u202e", "\u2066", "\x9b", "\x00", "\r", "[/bold]", "\ud800x"])
_TEXT = st.one_of(st.text(max_size=20), _NASTY, st.lists(_NASTY, max_size=3).map("".join))
_KEYS = st.sampled_from(["ts", "agent", "class", "repo", "brain", "tool", "what", "answers", "kind", "sentinel",
                         "fingerprint", "case_id", "disposition", "other"])


@st.composite
def hostile_lines(draw) -> bytes:
    key = draw(_KEYS)
    choice = draw(st.integers(0, 5))
    if choice == 0:  # deep nesting in any key
        depth = draw(st.integers(60, 300))
        return b'{"what":"w","%s":' % key.encode() + b"[" * depth + b"1" + b"]" * depth + b"}"
    if choice == 1:  # not UTF-8
        return b'{"what":"\xff\xfe","repo":"' + draw(st.binary(max_size=8)).replace(b"\n", b"") + b'"}'
    if choice == 2:  # numbers at the limits, wrong types
        value = draw(st.sampled_from([b"1e999", b"-0", b"18446744073709551616", b"null", b"[1]", b"{}", b"true"]))
        return b'{"what":"w","%s":%s}' % (key.encode(), value)
    if choice == 3:  # duplicated keys
        return b'{"%s":"a","%s":[],"what":"w"}' % (key.encode(), key.encode())
    if choice == 4:  # huge value
        return orjson.dumps({"what": "w", key: "x" * draw(st.integers(60000, 70000))})
    fields = {draw(_KEYS): draw(_TEXT) for _ in range(draw(st.integers(1, 5)))}
    try:
        return orjson.dumps(fields)
    except TypeError:  # an unpaired surrogate: write its escape as a hostile writer would
        return b'{"what":"\\ud800"}'


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(line=hostile_lines())
def test_no_hostile_box_line_breaks_a_read_command_or_reaches_the_terminal_raw(tmp_path_factory, line):
    home = tmp_path_factory.mktemp("home")
    os.environ["M1ND_HOME"] = str(home)
    spool = home / "field-reports.jsonl"
    write_spool(spool, [{"what": "plain letter", "repo": "all"}])
    assert run_cli("distribute").code == 0
    write_spool(home / "inbox.jsonl", [line])
    lid = letter_id(orjson.dumps({"what": "plain letter", "repo": "all"}))
    for args in (["sweep"], ["box", "medulla"], ["doctor"], ["cases"], ["show", lid], ["--inbox-sweep"],
                 ["sweep", "--json"], ["report", "alert", "--json"], ["sentinels", "run"]):
        result = run_cli(*args)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, (args, result.stderr)
        assert result.code in (0, 1), (args, result.code, result.stderr)
        if "--json" not in args and "--inbox-sweep" not in args:
            _no_raw_control(result.stdout + result.stderr)


def test_a_home_whose_path_is_not_utf8_is_one_clear_error_naming_it(tmp_path):
    env = dict(os.environ, M1ND_HOME=os.fsdecode(os.fsencode(str(tmp_path)) + b"/h\xff"))
    from tests.conftest import run_script

    for args in (["write", "--what", "x"], ["distribute"], ["sweep"], ["cases"], ["report", "alert"]):
        done = run_script(*args, env=env)
        assert done.returncode == 1, (args, done.stderr)
        assert done.stderr.count(b"\n") == 1 and b"not a UTF-8 path" in done.stderr and b"h\\xff" in done.stderr


# -- the same hostile lines over the hooks, every report format and every serve route --

import re  # noqa: E402
import sys  # noqa: E402

import httpx  # noqa: E402

# every character a terminal or a reader could be fooled by: C0 but tab/newline, DEL, C1, bidi, line separators
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
_PLAIN = orjson.dumps({"ts": "2026-05-01T10:00:00Z", "class": "bug", "repo": "repo-a", "what": "plain letter"})
_NOW = "2026-05-01T22:00:00Z"


def _assert_human(where, text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, (where, text[-2000:])
    found = _RAW.search(text)
    assert found is None, (where, repr(text[max(0, found.start() - 40):found.end() + 40]))


def _home_with_repo(root: Path) -> tuple[dict, Path]:
    """A home whose roster holds one real git repository with one letter committed in its box."""
    env = dict(os.environ, M1ND_HOME=str(root / "home"), HOME=str(root))
    repo = root / "src" / "repo-a"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=agent-a", "-c", "user.email=a@example.invalid",
                    "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    from tests.conftest import run_script

    assert run_script("roster", "add", str(repo), env=env).returncode == 0
    write_spool(root / "home" / "field-reports.jsonl", [_PLAIN])
    # filed before the report's latest boundary (21:00Z), so the first report holds it
    done = run_script("distribute", env=dict(env, M1ND_NOW="2026-05-01T12:00:00Z"))
    assert done.returncode == 0, done.stderr
    assert (repo / ".m1nd" / "inbox.jsonl").is_file()
    return env, repo


def _hook_and_reports(root: Path, env: dict, repo: Path) -> dict:
    """Exit code and human output of the post-checkout hook, doctor and each report format."""
    from tests.conftest import run_script

    out = {}
    for name, args in (("hook", ["hook", "run", "post-checkout"]), ("doctor", ["doctor"]),
                       ("json inbox", ["--inbox-sweep", "--no-distribute"]), ("sweep", ["sweep"]),
                       ("report", ["report", "--to", str(root / "sink"), "--now", _NOW])):
        done = run_script(*args, cwd=repo, env=env)
        out[name] = (done.returncode, done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace"))
    listed = run_script("report", "list", "--json", env=env)
    runs = orjson.loads(listed.stdout)["reports"]
    out["listed"] = (listed.returncode, len(runs))
    for fmt in ("md", "html", "json"):
        done = run_script("report", "render", runs[0]["run_id"], "--format", fmt, env=env)
        out[fmt] = (done.returncode, done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace"))
    for page in sorted((root / "sink").rglob("*")):
        if page.is_file() and page.suffix in (".md", ".html", ".txt"):
            out[f"sink {page.name}"] = (0, page.read_text(errors="replace"))
    return out


_BASELINE: dict = {}


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(line=hostile_lines())
def test_no_hostile_box_line_breaks_the_hook_or_a_report_in_any_format(tmp_path_factory, line):
    if not _BASELINE:  # the same commands over the same home without the line, once
        clean = tmp_path_factory.mktemp("clean")
        _BASELINE.update(_hook_and_reports(clean, *_home_with_repo(clean / "h")))
    baseline = _BASELINE
    assert all(baseline[name][0] == 0 for name in ("hook", "json inbox", "sweep", "report", "md", "html", "json"))
    root = tmp_path_factory.mktemp("hostile")
    env, repo = _home_with_repo(root)
    with open(repo / ".m1nd" / "inbox.jsonl", "ab") as fh:  # arrived by git: line 2 of the box
        fh.write(line + b"\n")
    got = _hook_and_reports(root, env, repo)
    for name, (code, text) in got.items():
        if name.startswith("sink") or name == "listed":
            continue
        assert code == baseline[name][0], (name, code, text[-2000:])
        if name.startswith("json"):
            assert "Traceback" not in text
        else:
            _assert_human(name, text)
    for name, (_, text) in got.items():
        if name.startswith("sink") and not name.endswith(".json"):
            _assert_human(name, text)
    if load(line) is None:
        assert "repo-a: 1 malformed (line 2)" in got["doctor"][1], got["doctor"][1]


def _serve_routes(lid: str) -> list[str]:
    return ["/", f"/letters/{lid}", "/cases", "/reports", "/nothing", "/api/health", "/api/mailbox?brain=repo-a",
            "/api/mailbox?brain=medulla", f"/api/letters/{lid}", "/api/cases", "/api/doctor", "/api/reports",
            "/api/inbox_sweep", "/api/nothing"]


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory):
    """One real `m1nd serve` over a home with a real repository, for every example."""
    sys.path.insert(0, str(Path(__file__).parent / "serve"))
    from servekit import Server

    root = tmp_path_factory.mktemp("served")
    env, repo = _home_with_repo(root)
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    srv = Server(token=True, env=env)
    auth = {"authorization": f"Bearer {srv.token}"}
    base = srv.url.rstrip("/")
    lid = letter_id(_PLAIN)
    baseline = {path: httpx.get(base + path, headers=auth, timeout=60).status_code for path in _serve_routes(lid)}
    assert baseline["/"] == 200 and baseline[f"/api/letters/{lid}"] == 200
    yield srv, base, auth, repo, lid, baseline
    assert srv.stop() == 0
    assert "Traceback" not in srv.stderr(), srv.stderr()[-3000:]


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(line=hostile_lines())
def test_no_hostile_box_line_breaks_a_serve_route_or_page(hostile_server, line):
    srv, base, auth, repo, lid, baseline = hostile_server
    with open(repo / ".m1nd" / "inbox.jsonl", "ab") as fh:  # the box grows by one hostile line
        fh.write(line + b"\n")
    for path in [*_serve_routes(lid), f"/letters/{letter_id(line)}", f"/api/letters/{letter_id(line)}"]:
        response = httpx.get(base + path, headers=auth, timeout=60)
        assert response.status_code < 500, (path, response.text[-2000:])
        if path in baseline:
            assert response.status_code == baseline[path], (path, response.status_code, response.text[-2000:])
        if "json" not in response.headers.get("content-type", ""):
            _assert_human(path, response.text)
    assert "Traceback" not in srv.stderr() and "internal error" not in srv.stderr(), srv.stderr()[-3000:]
    doctor = httpx.get(base + "/api/doctor", headers=auth, timeout=60).json()
    if load(line) is None:
        boxes = next(c for c in doctor["checks"] if c["name"] == "boxes")
        assert "repo-a:" in boxes["message"] and "malformed" in boxes["message"], boxes


# -- generated probes: `sentinels run` and `allow` never crash and never print raw controls --

# Only harmless programs, with control, NUL and bidi characters (and spaces) woven in: a
# generated probe may be allowed and run for real.
_CONTROL_CHARS = "".join(map(chr, [*range(0, 32), 127, *range(0x80, 0xA0), 0x61C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                    *range(0x2066, 0x206A), 0x2028, 0x2029, 0x20]))
_PROBES = st.builds(lambda program, noise, at: program[:at] + noise + program[at:],
                    st.sampled_from(["true", "false", "echo hi", "pytest -q", "sh check.sh"]),
                    st.text(alphabet=_CONTROL_CHARS, min_size=0, max_size=4), st.integers(0, 12))


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(probe=_PROBES)
def test_a_generated_probe_never_crashes_sentinels_or_reaches_the_terminal_raw(tmp_path_factory, probe):
    from tests.conftest import run_script

    root = tmp_path_factory.mktemp("probe")
    env, repo = _home_with_repo(root)
    w = orjson.dumps({"ts": "2026-05-01T09:00:00Z", "class": "bug", "kind": "false_absence", "repo": "repo-a",
                      "tool": "seek", "what": "gone"})
    r = orjson.dumps({"ts": "2026-05-02T09:00:00Z", "class": "triage", "repo": "repo-a", "what": "fixed",
                      "answers": [letter_id(w)], "disposition": "fixed", "fingerprint": FP,
                      "sentinel": {"probe": probe, "expect": "absent"}})
    write_spool(root / "home" / "field-reports.jsonl", [w, r])
    assert run_script("distribute", env=env).returncode == 0
    controlled = _RAW.search(probe) is not None or "\n" in probe or "\t" in probe  # a newline or tab too
    for args in (["sentinels", "run"], ["sentinels", "allow", letter_id(r)], ["sentinels", "run"],
                 ["sentinels", "run", "--json"]):
        done = run_script(*args, cwd=repo, env=env)
        text = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
        if args[1] == "allow":
            # a probe holding a NUL, a control or a bidi character is refused at allow (exit 2)
            assert done.returncode == (2 if controlled else 0), (probe, text)
        else:
            assert done.returncode in (0, 1), (args, done.returncode, text)
        if "--json" in args:
            assert "Traceback" not in text
            orjson.loads(done.stdout)
        else:
            _assert_human(args, text)


# -- the hook names a malformed line, as doctor does --------------------------------------

def test_the_post_checkout_hook_names_a_malformed_line_of_its_box(tmp_path):
    from tests.conftest import run_script

    env, repo = _home_with_repo(tmp_path)
    write_spool(repo / ".m1nd" / "inbox.jsonl", [_deep_line("what", 70)])  # arrived by git: line 2
    done = run_script("hook", "run", "post-checkout", cwd=repo, env=env)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "box repo-a has 1 malformed line (line 2); m1nd doctor names them" in err, err
    assert "repo-a has 1 open letter" in err  # the rest of the notice as before
    _assert_human("hook", err + done.stdout.decode())
