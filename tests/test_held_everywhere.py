"""The held rule judges a letter wherever it lives (mailbox contract, section 4).

A teammate's clone pushes box lines holding a likely secret; this clone pulls them.
Every view here shows them held (id, ts, state, the kind of secret), none shows the
secret; `m1nd show ID --reveal` prints it on a terminal; the v0 document carries it.
Real git (a bare remote, two clones), real files, real processes for the terminal
and the server.
"""

from __future__ import annotations

import os
import random
import string
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from m1nd.letters import letter_id
from tests.conftest import read_terminal, run_cli, write_spool


def _git(*args, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _secret() -> tuple[str, str]:
    """(the assignment, its value): made up at test time from parts."""
    rng = random.Random(1515)
    value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
    return "AWS_SECRET_" + "ACCESS_KEY=" + value, value


@pytest.fixture
def pulled(tmp_path):
    """Clone B (this home's root) after pulling what clone A pushed: a box with a plain
    letter, a held letter, a held honesty letter and a held reply to the plain one."""
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    a = tmp_path / "teammate" / "repo-a"
    _git("clone", "-q", str(remote), str(a), cwd=tmp_path)
    _git("commit", "-q", "--allow-empty", "-m", "start", cwd=a)
    _git("push", "-q", "origin", "main", cwd=a)
    b = tmp_path / "src" / "repo-a"
    _git("clone", "-q", str(remote), str(b), cwd=tmp_path)
    assert run_cli("roster", "add", str(b)).code == 0

    assignment, value = _secret()
    plain = orjson.dumps({"ts": "2026-05-03T07:00:00Z", "agent": "agent-b", "class": "bug", "repo": "repo-a",
                          "tool": "seek", "what": "plain letter"})
    held = orjson.dumps({"ts": "2026-05-03T08:00:00Z", "agent": "agent-b", "class": "memory_misdelivery",
                         "repo": "repo-a", "tool": "seek", "what": f"deploy failed: {assignment}"})
    honesty = orjson.dumps({"ts": "2026-05-03T08:10:00Z", "agent": "agent-b", "class": "honesty",
                            "repo": "repo-a", "tool": "north", "what": f"memory claim wrong, {assignment}"})
    reply = orjson.dumps({"ts": "2026-05-03T08:20:00Z", "agent": "agent-b", "class": "pickup", "repo": "repo-a",
                          "what": f"looking, creds {assignment}", "answers": [letter_id(plain)]})
    box = a / ".m1nd" / "inbox.jsonl"
    box.parent.mkdir()
    box.write_bytes(b"\n".join([plain, held, honesty, reply]) + b"\n")
    _git("add", "-f", ".m1nd/inbox.jsonl", cwd=a)
    _git("commit", "-q", "-m", "box", cwd=a)
    _git("push", "-q", "origin", "main", cwd=a)
    _git("pull", "-q", "origin", "main", cwd=b)
    assert (b / ".m1nd" / "inbox.jsonl").read_bytes() == box.read_bytes()
    ids = {"plain": letter_id(plain), "held": letter_id(held), "honesty": letter_id(honesty),
           "reply": letter_id(reply)}
    return b, ids, value


def _ok(*args, cwd=None) -> str:
    r = run_cli(*args, cwd=cwd)
    assert r.code == 0, (args, r.stdout, r.stderr)
    return r.stdout + r.stderr


def test_a_secret_in_a_pulled_box_line_is_held_in_every_view_and_named_by_doctor(pulled):
    root, ids, value = pulled
    outputs = {
        "sweep": _ok("sweep", "--state", "all"),
        "box": _ok("box", "--state", "all", cwd=root),
        "box --json": _ok("box", "--json", cwd=root),
        "show": _ok("show", ids["held"]),
        "show --json": _ok("show", ids["held"], "--json"),
        "show of the letter replied to": _ok("show", ids["plain"]),
        "show reply": _ok("show", ids["reply"], "--json"),
        "doctor": _ok("doctor"),
        "doctor --json": _ok("doctor", "--json"),
        "cases": _ok("cases"),
        "cases claims": _ok("cases", "claims", "--json"),
    }
    for where, text in outputs.items():
        assert value not in text, where
    assert "(held: " in outputs["sweep"] and "(held: " in outputs["box"]
    assert f"↳ {ids['reply']} (held)" in outputs["sweep"]
    views = {v["id"]: v for v in orjson.loads(outputs["box --json"])["letters"]}
    assert set(views[ids["held"]]) == {"id", "ts", "state", "held"}
    assert views[ids["plain"]]["what"] == "plain letter"  # the rest of the box as it was
    shown = orjson.loads(outputs["show --json"])
    assert shown["held"] and shown["letter"] == {"ts": "2026-05-03T08:00:00Z"}
    held_check = next(c for c in orjson.loads(outputs["doctor --json"])["checks"] if c["name"] == "held")
    assert held_check["status"] == "warn"
    assert f"repo-a line 2 (id {ids['held']}" in held_check["message"]
    assert f"repo-a line 4 (id {ids['reply']}" in held_check["message"]
    claims = orjson.loads(outputs["cases claims"])
    assert claims == {"claims": []}  # the held honesty letter is left out, as from cases


def test_show_reveal_prints_a_pulled_held_letter_and_the_v0_document_carries_it(pulled):
    import pty

    root, ids, value = pulled
    doc = run_cli("--inbox-sweep")
    assert doc.code == 0 and value in doc.stdout  # the one exception
    refused = run_cli("show", ids["held"], "--reveal")  # stdout is not a terminal here
    assert refused.code == 2 and value not in refused.stdout + refused.stderr
    leader, follower = pty.openpty()
    env = dict(os.environ, M1ND_PAGER="cat", PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    proc = subprocess.Popen([sys.executable, "-m", "m1nd", "show", ids["held"], "--reveal"], stdin=follower,
                            stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    out = read_terminal(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    os.close(leader)
    assert value.encode() in out


def test_a_pulled_held_letter_never_reaches_a_report_an_alert_or_an_exec_sink(pulled, tmp_path):
    root, ids, value = pulled
    _ok("sweep")  # first sight: the coverage ledger observes the box's letters
    alerts = run_cli("report", "alert", "--now", "2026-05-03T14:00:00Z", "--json")
    assert alerts.code == 0, alerts.stderr
    alerted = [a for a in alerts.json if a["id"] == ids["held"]] if isinstance(alerts.json, list) else \
        [a for a in alerts.json.get("alerts", []) if a["id"] == ids["held"]]
    assert alerted and alerted[0]["held"]
    captured = tmp_path / "sink-input"
    r = run_cli("report", "--to", f"exec:sh -c 'cat > {captured}'", "--now", "2026-05-03T22:00:00Z")
    assert r.code == 0, r.stderr
    outputs = [alerts.stdout, r.stdout + r.stderr, captured.read_text()]
    assert ids["held"] in outputs[-1]
    runs = run_cli("report", "list", "--json").json["reports"]
    for fmt in ("md", "html", "json"):
        rendered = run_cli("report", "render", runs[0]["run_id"], "--format", fmt)
        assert rendered.code == 0 and ids["held"] in rendered.stdout
        outputs.append(rendered.stdout)
    for text in outputs:
        assert value not in text


def test_a_pulled_held_letter_is_held_on_every_serve_page_and_route(pulled):
    from tests.serve.servekit import Server

    root, ids, value = pulled
    with Server(token=True) as server:
        routes = ["/", "/cases", f"/letters/{ids['held']}", f"/letters/{ids['plain']}",
                  f"/api/letters/{ids['held']}", f"/api/letters/{ids['reply']}", "/api/mailbox",
                  "/api/cases", "/api/doctor"]
        with httpx.Client(base_url=server.url, timeout=60) as client:
            for route in routes:
                params = {"token": server.token} | ({"brain": "repo-a"} if route == "/api/mailbox" else {})
                got = client.get(route, params=params, follow_redirects=True)
                assert got.status_code == 200, (route, got.status_code)
                assert value not in got.text, route
            letter = client.get(f"/api/letters/{ids['held']}", params={"token": server.token}).json()
            assert letter["held"]
            mailbox = client.get("/api/mailbox", params={"token": server.token, "brain": "repo-a"}).json()
            assert {v["id"]: v for v in mailbox["letters"]}[ids["held"]]["held"]
            whole = client.get("/api/inbox_sweep", params={"token": server.token})
            assert whole.status_code == 200 and value in whole.text  # the v0 document, the one exception
    assert "Traceback" not in server.stderr()


def test_answering_the_held_box_lines_retires_them_from_doctors_held_check(pulled):
    root, ids, value = pulled

    def held_check():
        doc = run_cli("doctor", "--json")
        return next(c for c in doc.json["checks"] if c["name"] == "held")

    assert held_check()["status"] == "warn"
    done = run_cli("answer", ids["held"], ids["honesty"], ids["reply"], "--what", "rotated the key")
    assert done.code == 0, done.stderr
    check = held_check()
    assert check["status"] == "ok" and "all answered" in check["message"], check
    assert value not in check["message"]


def test_a_held_letter_is_never_a_witness_so_its_fields_reach_no_fingerprint_case_or_escalation(tmp_path):
    """A fingerprint and an escalation are made of a witness's fields (its tool names the
    family); a held letter's fields never leave, so it is never a witness.  Two plain
    witnesses beside it still make a case and an escalation (the check is not vacuous)."""
    repo = tmp_path / "src" / "repo-a"
    repo.mkdir(parents=True)
    _git("init", "-q", "-b", "main", str(repo), cwd=tmp_path)
    assert run_cli("roster", "add", str(repo)).code == 0
    assignment, value = _secret()

    def crash(hour: int, tool: str) -> bytes:
        return orjson.dumps({"ts": f"2026-05-03T0{hour}:00:00Z", "agent": "agent-b", "class": "bug",
                             "repo": "repo-a", "tool": tool, "kind": "crash", "what": f"crashed at step {hour}"})

    held = [crash(1, f"deploy {assignment}"), crash(2, f"deploy {assignment}")]
    plain = [crash(3, "seek"), crash(4, "seek")]
    box = repo / ".m1nd" / "inbox.jsonl"  # lines from someone else's clone, as git brings them
    box.parent.mkdir()
    box.write_bytes(b"\n".join(held + plain) + b"\n")

    _ok("distribute")
    written = box.read_bytes()
    assert value.encode() not in written[len(b"\n".join(held + plain)) + 1:]  # nothing m1nd appended
    escalations = [orjson.loads(line) for line in written.splitlines()[4:]]
    assert [e.get("fingerprint") for e in escalations] == ["fp:seek/crash"]
    for args in (("cases",), ("cases", "--json"), ("cases", "explain", letter_id(held[0])),
                 ("cases", "explain", "--json", letter_id(held[1]))):
        out = _ok(*args)
        assert value not in out and "deploy" not in out, args
    assert "fp:seek/crash" in _ok("cases", "--json")
    explained = orjson.loads(run_cli("cases", "explain", "--json", letter_id(held[0])).stdout)
    assert explained["fingerprint"] is None


@pytest.fixture
def pulled_odd_fields(tmp_path):
    """Pulled box lines whose one likely secret sits outside the text: in `ts`, in an
    `answers` entry (beside U+202E), in `kind`.  Each line is held; each is an alert
    class, so alerts and reports itemize it."""
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    a = tmp_path / "teammate" / "repo-a"
    _git("clone", "-q", str(remote), str(a), cwd=tmp_path)
    b = tmp_path / "src" / "repo-a"
    assignment, value = _secret()
    plain = orjson.dumps({"ts": "2026-05-03T07:00:00Z", "agent": "agent-b", "class": "bug", "repo": "repo-a",
                          "tool": "seek", "what": "plain letter"})
    base = {"agent": "agent-b", "class": "memory_misdelivery", "repo": "repo-a", "tool": "seek"}
    in_ts = orjson.dumps(base | {"ts": assignment, "what": "wrong memory"})
    in_answers = orjson.dumps(base | {"ts": "2026-05-03T08:00:00Z", "class": "pickup", "what": "looking",
                                      "answers": [letter_id(plain), "\u202e" + assignment]})
    in_kind = orjson.dumps(base | {"ts": "2026-05-03T09:00:00Z", "kind": assignment, "what": "wrong again"})
    in_tool = orjson.dumps(base | {"ts": "2026-05-03T09:30:00Z", "class": "honesty", "kind": "false_absence",
                                   "tool": assignment, "what": "said empty"})
    box = a / ".m1nd" / "inbox.jsonl"
    box.parent.mkdir(parents=True)
    box.write_bytes(b"\n".join([plain, in_ts, in_answers, in_kind, in_tool]) + b"\n")
    _git("add", "-f", ".m1nd/inbox.jsonl", cwd=a)
    _git("commit", "-q", "-m", "box", cwd=a)
    _git("push", "-q", "origin", "main", cwd=a)
    _git("clone", "-q", str(remote), str(b), cwd=tmp_path)
    assert run_cli("roster", "add", str(b)).code == 0
    ids = {"plain": letter_id(plain), "ts": letter_id(in_ts), "answers": letter_id(in_answers),
           "kind": letter_id(in_kind), "tool": letter_id(in_tool)}
    return b, ids, value


def test_a_secret_in_a_held_letters_ts_answers_or_kind_reaches_no_view_report_sink_or_page(pulled_odd_fields,
                                                                                          tmp_path):
    from tests.serve.servekit import Server

    root, ids, value = pulled_odd_fields
    outputs = {"sweep": _ok("sweep", "--state", "all"),
               "box": _ok("box", "--state", "all", cwd=root), "box --json": _ok("box", "--json", cwd=root),
               "doctor": _ok("doctor"), "cases claims": _ok("cases", "claims"),
               "cases claims --json": _ok("cases", "claims", "--json")}
    exported = tmp_path / "labels.jsonl"
    _ok("cases", "claims", "--export", str(exported))
    outputs["claims export"] = exported.read_text() if exported.exists() else ""
    for name in ("ts", "answers", "kind", "tool", "plain"):
        outputs[f"show {name}"] = _ok("show", ids[name])
        outputs[f"show {name} --json"] = _ok("show", ids[name], "--json")
    views = {v["id"]: v for v in orjson.loads(outputs["box --json"])["letters"]}
    assert all(views[ids[n]]["held"] for n in ("ts", "answers", "kind"))  # each line is held
    assert views[ids["ts"]]["ts"] == "" and views[ids["answers"]]["ts"] == "2026-05-03T08:00:00Z"
    alerts = run_cli("report", "alert", "--now", "2026-05-04T14:00:00Z", "--json")
    assert alerts.code == 0, alerts.stderr
    assert {ids["ts"], ids["kind"]} <= {a["id"] for a in alerts.json["alerts"]}
    outputs["alert"] = alerts.stdout
    captured = tmp_path / "sink-input"
    r = run_cli("report", "--to", f"exec:sh -c 'cat > {captured}'", "--now", "2026-05-04T22:00:00Z")
    assert r.code == 0, r.stderr
    outputs["exec sink"] = captured.read_text()
    assert ids["ts"] in outputs["exec sink"] and ids["answers"] in outputs["exec sink"]
    run_id = run_cli("report", "list", "--json").json["reports"][0]["run_id"]
    for fmt in ("md", "html", "json"):
        outputs[f"report {fmt}"] = _ok("report", "render", run_id, "--format", fmt)
    with Server(token=True) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            routes = ["/", "/?state=all", f"/reports/{run_id}", "/api/mailbox?brain=repo-a&state=all"]
            routes += [f"{p}{ids[n]}" for p in ("/letters/", "/api/letters/") for n in ("ts", "answers", "kind", "plain")]
            for route in routes:
                got = client.get(route + ("&" if "?" in route else "?") + f"token={server.token}",
                                 follow_redirects=True)
                assert got.status_code == 200, (route, got.status_code)
                outputs[route] = got.text
    assert "Traceback" not in server.stderr()
    for where, text in outputs.items():
        assert value.lower() not in text.lower(), where  # a tool family is lowercased
        assert "\u202e" not in text, where


def test_no_filter_or_search_matches_a_held_letter_by_a_field_it_never_shows(pulled):
    """A filter on agent, class or tool, or serve's text search, that matched a held
    letter would tell its hidden fields a guess at a time: none matches it."""
    from tests.serve.servekit import Server

    root, ids, value = pulled
    everything = _ok("sweep", "--state", "all", "--all")
    assert ids["held"] in everything and ids["plain"] in everything  # listed (as held) without a filter
    for args in (("sweep", "--state", "all", "--all", "--agent", "agent-b"),
                 ("sweep", "--state", "all", "--all", "--class", "memory_misdelivery"),
                 ("sweep", "--state", "all", "--all", "--tool", "seek"),
                 ("box", "--state", "all", "--all", "--agent", "agent-b")):
        out = _ok(*args, cwd=root)
        assert ids["held"] not in out and ids["honesty"] not in out, args
    assert ids["plain"] in _ok("sweep", "--state", "all", "--all", "--agent", "agent-b")  # the filter still works
    by_class = orjson.loads(_ok("box", "--json", "--class", "memory_misdelivery", cwd=root))["letters"]
    assert by_class == []
    by_agent = orjson.loads(_ok("box", "--json", "--agent", "agent-b", cwd=root))["letters"]
    assert [v["id"] for v in by_agent] == [ids["plain"]]
    with Server(token=True) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            def page(**params):
                got = client.get("/", params={"state": "all", **params},
                                 headers={"Authorization": f"Bearer {server.token}"})
                assert got.status_code == 200
                return got.text

            assert ids["held"] in page()
            for params in ({"q": value[:6]}, {"q": "deploy failed"}, {"q": "AWS_SECRET"}, {"agent": "agent-b"},
                           {"class": "memory_misdelivery"}, {"tool": "seek"}):
                assert ids["held"] not in page(**params), params
            assert ids["plain"] in page(q="plain letter")
    assert "Traceback" not in server.stderr()


@pytest.mark.parametrize("field", ["repo", "brain"])
def test_a_held_letter_with_its_secret_in_a_routing_field_can_be_answered_as_doctor_says(tmp_path, field):
    """The reply copies neither `repo` nor `brain` of such a letter (it would be held in
    turn): it names the box the letter is in, lands there, and retires the held check."""
    repo = tmp_path / "src" / "repo-a"
    repo.mkdir(parents=True)
    _git("init", "-q", "-b", "main", str(repo), cwd=tmp_path)
    assert run_cli("roster", "add", str(repo)).code == 0
    assignment, value = _secret()
    line = orjson.dumps({"ts": "2026-05-03T08:00:00Z", "agent": "agent-b", "class": "bug", "repo": "repo-a",
                         "what": "deploy failed"} | {field: assignment})
    box = repo / ".m1nd" / "inbox.jsonl"  # as git brings a teammate's box line
    box.parent.mkdir()
    box.write_bytes(line + b"\n")
    held = next(c for c in run_cli("doctor", "--json").json["checks"] if c["name"] == "held")
    assert held["status"] == "warn" and letter_id(line) in held["message"]
    done = run_cli("answer", letter_id(line), "--what", "rotated the key")
    assert done.code == 0, done.stderr
    assert run_cli("distribute").code == 0
    reply = orjson.loads(box.read_bytes().splitlines()[-1])
    assert reply["answers"] == [letter_id(line)] and value not in box.read_bytes().splitlines()[-1].decode()
    assert (reply["repo"], reply.get("brain")) == ("repo-a", str(repo))
    held = next(c for c in run_cli("doctor", "--json").json["checks"] if c["name"] == "held")
    assert held["status"] == "ok", held


def test_a_medulla_letter_with_a_likely_secret_is_held_in_every_report_and_alert_that_leaves_the_machine(
        tmp_path, spool_path):
    """The medulla box is private to the home, so its letters are never held there; a
    report goes to a sink (a mailer), so in reports and alerts such a letter is held."""
    assignment, value = _secret()
    write_spool(spool_path, [{"ts": "2026-05-03T08:00:00Z", "agent": "agent-b", "class": "memory_misdelivery",
                              "what": f"note to self: {assignment}"},
                             {"ts": "2026-05-03T08:05:00Z", "agent": "agent-b", "class": "bug", "what": "plain note"}])
    assert run_cli("distribute", "--now", "2026-05-03T08:10:00Z").code == 0
    assert "note to self: AWS_SECRET" in _ok("sweep", "--state", "all")  # shown here: private to the home
    alerts = run_cli("report", "alert", "--now", "2026-05-03T14:00:00Z", "--json")
    assert alerts.code == 0 and [a.get("held") for a in alerts.json["alerts"]] == ["credential assignment"]
    captured = tmp_path / "sink-input"
    r = run_cli("report", "--to", f"exec:sh -c 'cat > {captured}'", "--now", "2026-05-03T22:00:00Z")
    assert r.code == 0, r.stderr
    outputs = [alerts.stdout, r.stdout + r.stderr, captured.read_text()]
    assert "plain note" in outputs[-1] and "held: credential assignment" in outputs[-1]
    run_id = run_cli("report", "list", "--json").json["reports"][0]["run_id"]
    outputs += [_ok("report", "render", run_id, "--format", fmt) for fmt in ("md", "html", "json")]
    for text in outputs:
        assert value not in text
