"""`m1nd serve` as a real process on 127.0.0.1, driven by a real HTTP client:
every JSON route byte for byte against its command, the guard's statuses, the
token rules, the headers, the page's escaping and filters (shared/spec/serve.md)."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest

from servekit import HOSTILE, Server, m1nd, mailbox, write  # noqa: F401  (mailbox is a fixture)

@pytest.fixture
def server(mailbox):
    srv = Server()
    yield srv
    assert srv.stop() == 0


def get(srv: Server, path: str, **kw) -> httpx.Response:
    # /api/inbox_sweep needs the token even under --no-token: send it as a client would
    if srv.token and path.startswith("/api/inbox_sweep"):
        kw["headers"] = {"authorization": f"Bearer {srv.token}", **kw.get("headers", {})}
    return httpx.get(srv.url.rstrip("/") + path, timeout=30, **kw)


def same_as_command(response: httpx.Response, done: subprocess.CompletedProcess, status: int) -> None:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    assert response.content == done.stdout


# the server ---------------------------------------------------------------------

def test_cli_start_up_and_hook_path_never_import_the_http_stack():
    code = ("import sys, m1nd.cli.app, m1nd.cli.main, m1nd.gitops.hookrun;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('starlette', 'uvicorn', 'anyio', 'h11', 'm1nd.serve') or m.startswith('m1nd.serve')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_serve_without_the_extra_says_exactly_what_to_install_and_exits_1():
    code = ("import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None;"
            "sys.argv = ['m1nd', 'serve', '--port', '0']; from m1nd.cli.main import run; run()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == "m1nd: error: m1nd serve needs the serve extra: pip install 'm1nd[serve]'\n"


def test_the_url_is_one_loopback_line_and_port_0_picks_a_free_port(mailbox):
    with Server() as srv:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{40,}", srv.line)
        assert srv.port not in (0, 8765)
        assert get(srv, "/api/health").status_code == 200
        assert srv.stop() == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_end_in_a_clean_exit_0(mailbox, sig):
    srv = Server()
    assert get(srv, "/").status_code == 200
    # a browser keeps its connection open: shutting down must not wait for it
    with httpx.Client(timeout=30) as keep:
        assert keep.get(srv.url + "api/health").status_code == 200
        assert srv.stop(sig) == 0
    assert "Traceback" not in srv.stderr()


def test_a_port_in_use_is_one_error_line_and_exit_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = m1nd("serve", "--port", str(port))
    assert done.returncode == 1
    err = done.stderr.decode()
    assert err.startswith(f"m1nd: error: cannot listen on 127.0.0.1:{port}: ") and err.count("\n") == 1


def test_a_non_loopback_address_without_allow_remote_is_a_usage_error():
    done = m1nd("serve", "--host", "0.0.0.0", "--port", "0")
    assert done.returncode == 2
    assert b"--allow-remote" in done.stderr and b"Traceback" not in done.stderr


# JSON routes, byte for byte ----------------------------------------------------

def test_inbox_sweep_is_the_v0_document_of_a_no_distribute_sweep(server):
    same_as_command(get(server, "/api/inbox_sweep"), m1nd("--inbox-sweep", "--no-distribute"), 200)


@pytest.mark.parametrize("selector", ["medulla", "repo-a", "REPO-B", "path"])
def test_mailbox_is_the_box_command_for_every_kind_of_selector(server, mailbox, selector):
    if selector == "path":
        selector = str(mailbox["a"])
    response = get(server, "/api/mailbox", params={"brain": selector})
    same_as_command(response, m1nd("box", selector, "--json"), 200)
    assert response.json()["letters"], "the box has letters"


def test_mailbox_of_an_unknown_box_is_the_not_found_document_with_404(server):
    response = get(server, "/api/mailbox", params={"brain": "nope"})
    done = m1nd("box", "nope", "--json")
    assert done.returncode == 3
    same_as_command(response, done, 404)


def test_mailbox_without_a_box_outside_a_work_tree_is_the_usage_document_with_400(server):
    done = m1nd("box", "--json")
    assert done.returncode == 2
    same_as_command(get(server, "/api/mailbox"), done, 400)


def test_mailbox_without_a_box_serves_the_repository_the_server_runs_in(mailbox):
    with Server(cwd=mailbox["a"]) as srv:
        same_as_command(get(srv, "/api/mailbox"), m1nd("box", "--json", cwd=mailbox["a"]), 200)
        assert srv.stop() == 0


BOX_FILTERS = [
    {"state": "open"}, {"state": "answered"}, {"state": "all"}, {"agent": "agent-b"}, {"class": "UX"},
    {"tool": "seek"}, {"since": "2026-05-02"}, {"until": "2026-05-01T12:00:00Z"},
    {"state": "open", "agent": "agent-b"}, {"state": ""},
]


@pytest.mark.parametrize("filters", BOX_FILTERS, ids=lambda f: "&".join(f"{k}={v}" for k, v in f.items()))
def test_mailbox_takes_the_box_filters_as_query_parameters(server, filters):
    options = [a for k, v in filters.items() for a in (f"--{k}", v)]
    response = get(server, "/api/mailbox", params={"brain": "repo-a", **filters})
    same_as_command(response, m1nd("box", "repo-a", "--json", *options), 200)


def test_box_filters_narrow_the_letters(server, mailbox):
    everything = get(server, "/api/mailbox", params={"brain": "repo-a"}).json()["letters"]
    narrowed = get(server, "/api/mailbox", params={"brain": "repo-a", "agent": "agent-b"}).json()["letters"]
    # the pickup and the receipt reach their letter's box (mailbox.md 9)
    ids = mailbox["ids"]
    assert sorted(l["id"] for l in everything) == sorted([ids["bug"], ids["hostile"], ids["pickup"], ids["receipt"]])
    assert [l["id"] for l in narrowed] == [ids["hostile"]]


@pytest.mark.parametrize("filters", [{"state": "nope"}, {"since": "yesterday"}])
def test_a_bad_box_filter_is_the_usage_document_with_400(server, filters):
    options = [a for k, v in filters.items() for a in (f"--{k}", v)]
    done = m1nd("box", "repo-a", "--json", *options)
    assert done.returncode == 2
    same_as_command(get(server, "/api/mailbox", params={"brain": "repo-a", **filters}), done, 400)


@pytest.mark.parametrize("which", ["bug", "receipt", "hostile", "waiting", "prefix"])
def test_letters_is_the_show_command(server, mailbox, which):
    ident = mailbox["ids"]["bug"][:5] if which == "prefix" else mailbox["ids"][which]
    response = get(server, f"/api/letters/{ident}")
    same_as_command(response, m1nd("show", ident, "--json"), 200)
    assert response.json()["id"].startswith(ident)


@pytest.mark.parametrize("ident,status,code", [("ffffffffffff", 404, 3), ("zzzz", 400, 2), ("ab", 400, 2)])
def test_letters_of_an_unknown_or_malformed_id_is_the_show_error_document(server, ident, status, code):
    done = m1nd("show", ident, "--json")
    assert done.returncode == code
    same_as_command(get(server, f"/api/letters/{ident}"), done, status)


def test_an_unknown_query_parameter_is_a_usage_error_400(server):
    response = get(server, "/api/mailbox", params={"brain": "repo-a", "color": "red"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == 2


def test_doctor_is_the_doctor_document(server):
    same_as_command(get(server, "/api/doctor"), m1nd("doctor", "--json"), 200)


def test_doctor_is_200_even_when_a_check_is_an_error(mailbox, spool_path):
    spool_path.rename(spool_path.with_name("moved.jsonl"))
    spool_path.mkdir()  # a spool that cannot be read: the spool check is an error
    with Server() as srv:
        done = m1nd("doctor", "--json")
        assert done.returncode == 1
        response = get(srv, "/api/doctor")
        same_as_command(response, done, 200)
        assert any(c["status"] == "error" for c in response.json()["checks"])
        assert srv.stop() == 0


def test_health_says_ok_and_the_version(server):
    from m1nd import __version__

    response = get(server, "/api/health")
    assert response.status_code == 200
    assert response.content == f'{{\n  "status": "ok",\n  "version": "{__version__}"\n}}\n'.encode()


def test_an_unknown_api_route_is_a_json_404(server):
    response = get(server, "/api/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == 3


def test_answers_follow_new_letters_at_once(server):
    before = get(server, "/api/inbox_sweep").json()["total"]
    write("--what", "one more", "--repo", "repo-a")
    same_as_command(get(server, "/api/inbox_sweep"), m1nd("--inbox-sweep", "--no-distribute"), 200)
    assert get(server, "/api/inbox_sweep").json()["total"] == before + 1
    assert m1nd("distribute").returncode == 0
    same_as_command(get(server, "/api/mailbox", params={"brain": "repo-a"}), m1nd("box", "repo-a", "--json"), 200)


# the guard ---------------------------------------------------------------------

def _tree(root: Path) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "MKCOL"])
def test_every_write_method_is_405_and_changes_nothing(server, mailbox, m1nd_home, method, tmp_path):
    before = _tree(tmp_path)
    for path in ("/", "/api/mailbox?brain=repo-a", "/api/inbox_sweep", "/letters/" + mailbox["ids"]["bug"],
                 "/api/nothing"):
        response = httpx.request(method, server.url.rstrip("/") + path, content=b'{"what": "x"}', timeout=30,
                                 headers={"content-type": "application/json", "origin": "http://elsewhere.example"})
        assert response.status_code == 405, (method, path)
        assert response.headers["allow"] == "GET, HEAD"
        assert response.headers["cache-control"] == "no-store"
        assert not any(h.startswith("access-control-") for h in response.headers)
    assert _tree(tmp_path) == before


def test_a_foreign_host_header_is_421_and_localhost_is_accepted(server):
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1", f"127.0.0.2:{server.port}",
                 f"localhost:{server.port + 1}"):
        response = get(server, "/api/health", headers={"host": host})
        assert response.status_code == 421, host
        assert response.headers["cache-control"] == "no-store"
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}", f"LOCALHOST:{server.port}"):
        assert get(server, "/api/health", headers={"host": host}).status_code == 200, host


def test_no_cors_headers_and_no_store_everywhere_and_a_strict_csp_on_pages(server, mailbox):
    origin = {"origin": "http://elsewhere.example"}
    for path in ("/", "/api/health", "/api/inbox_sweep", "/api/doctor", "/api/mailbox?brain=medulla",
                 "/letters/" + mailbox["ids"]["bug"], "/nothing", "/letters/zzzz"):
        response = get(server, path, headers=origin)
        assert response.headers["cache-control"] == "no-store", path
        assert not any(h.startswith("access-control-") for h in response.headers), path
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp and "unsafe" not in csp, path
        assert "frame-ancestors 'none'" in csp


def test_head_answers_like_get_without_a_body(server):
    got, head = get(server, "/api/inbox_sweep"), httpx.head(server.url + "api/inbox_sweep", timeout=30,
                                                                headers={"authorization": f"Bearer {server.token}"})
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]


@pytest.fixture
def remote(mailbox):
    srv = Server("--host", "0.0.0.0", "--allow-remote")
    srv.token = srv.line.split("?token=", 1)[1]
    srv.local = f"http://127.0.0.1:{srv.port}"
    yield srv
    assert srv.stop() == 0


def test_a_remote_server_prints_its_token_in_the_url_and_refuses_requests_without_it(remote):
    assert re.fullmatch(r"http://[^/]+:\d+/\?token=[A-Za-z0-9_-]{40,}", remote.line)
    for path in ("/", "/api/health", "/api/inbox_sweep", "/letters/abcd"):
        response = httpx.get(remote.local + path, timeout=30)
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "seek returned" not in response.text
    wrong = remote.token[:-1] + ("A" if remote.token[-1] != "A" else "B")
    assert httpx.get(remote.local + "/api/health", headers={"authorization": f"Bearer {wrong}"},
                     timeout=30).status_code == 401
    assert httpx.get(remote.local + f"/api/health?token={wrong}", timeout=30).status_code == 401
    assert httpx.get(remote.local + "/api/health", cookies={f"m1nd_token_{remote.port}": wrong},
                     timeout=30).status_code == 401


def test_the_bearer_header_opens_every_route(remote):
    auth = {"authorization": f"Bearer {remote.token}"}
    # the v0 document carries held letters' text: never served beyond this machine
    assert httpx.get(remote.local + "/api/inbox_sweep", headers=auth, timeout=30).status_code == 403
    assert httpx.get(remote.local + "/api/health", headers=auth, timeout=30).status_code == 200
    assert httpx.get(remote.local + "/", headers=auth, timeout=30).status_code == 200


def test_the_token_in_the_query_once_becomes_a_cookie_for_the_page(remote):
    with httpx.Client(timeout=30) as browser:
        first = browser.get(remote.local + f"/?state=all&token={remote.token}")
        assert first.status_code == 303
        assert first.headers["location"] == "/?state=all"  # the token leaves the address bar
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"m1nd_token_{remote.port}={remote.token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        page = browser.get(remote.local + "/?state=all")
        assert page.status_code == 200 and "seek returned a deleted node" in page.text
        assert browser.get(remote.local + "/api/health").status_code == 200
    api = httpx.get(remote.local + f"/api/health?token={remote.token}", timeout=30)
    assert api.status_code == 200 and api.json()["status"] == "ok"


def test_a_remote_server_still_checks_the_host_header(remote):
    response = httpx.get(remote.local + "/api/health", headers={"host": "evil.example",
                                                                "authorization": f"Bearer {remote.token}"},
                         timeout=30)
    assert response.status_code == 421


# the page ----------------------------------------------------------------------

def test_a_letter_holding_html_script_and_markup_is_shown_escaped(server, mailbox):
    hostile = mailbox["ids"]["hostile"]
    for path in ("/?state=all", f"/letters/{hostile}"):
        page = get(server, path).text
        assert "<script" not in page and "<img" not in page and "<svg" not in page and "<b>bold" not in page
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in page
        assert "&lt;img src=x onerror=alert(1)&gt;" in page
        assert "&amp;amp; [bold]y[/bold] \\x1b[31mred" in page
        assert "\x1b" not in page
    assert "&lt;svg onload=alert(2)&gt;" in get(server, f"/letters/{hostile}").text


def _listed(page: str) -> set[str]:
    return set(re.findall(r'<a class="id" href="/letters/([0-9a-f]{12})"', page))


def test_the_page_shows_every_box_with_its_counts_and_markers(server):
    page = get(server, "/").text
    for label in ("medulla", "repo-a", "repo-b", "waiting to be filed"):
        assert f">{label}</a>" in page
    for word, key in (("open", "open_work"), ("in flight", "in_flight"), ("answered", "fired_clay"),
                      ("external", "external"), ("replies", "reply"), ("total", "total")):
        assert f'<span class="dot {key}"></span>{word} <b>' in page


def test_every_filter_narrows_the_letters(server, mailbox):
    ids = mailbox["ids"]
    cases = {
        "": {ids["hostile"], ids["medulla"], ids["waiting"]},  # open work, replies left out
        "?state=all": {ids["bug"], ids["hostile"], ids["external"], ids["medulla"], ids["waiting"]},
        "?state=all&replies=1": set(ids.values()),
        "?state=answered": {ids["bug"]},
        "?state=external": {ids["external"]},
        "?state=all&box=repo-a": {ids["bug"], ids["hostile"]},
        "?state=all&box=spool": {ids["waiting"]},
        "?state=all&agent=agent-b": {ids["hostile"]},
        "?state=all&class=BUG": {ids["bug"]},
        "?state=all&tool=seek": {ids["bug"]},
        "?state=all&since=2026-05-02": {ids["hostile"], ids["medulla"], ids["waiting"]},
        "?state=all&until=2026-05-01T12:00:00Z": {ids["bug"], ids["external"]},
        "?state=all&q=DELETED+node": {ids["bug"]},
    }
    for query, expected in cases.items():
        assert _listed(get(server, "/" + query).text) == expected, query


def test_letters_are_newest_first_and_pages_link_on(server, mailbox):
    ids = mailbox["ids"]
    page = get(server, "/?state=all").text
    order = re.findall(r'<a class="id" href="/letters/([0-9a-f]{12})"', page)
    assert order == [ids["waiting"], ids["medulla"], ids["hostile"], ids["bug"], ids["external"]]
    first = get(server, "/?state=all&limit=2").text
    assert re.findall(r'<a class="id" href="/letters/([0-9a-f]{12})"', first) == order[:2]
    assert 'href="/?state=all&amp;offset=2&amp;limit=2">older' in first


def test_a_bad_filter_is_a_400_page(server):
    for query in ("?state=nope", "?since=yesterday", "?limit=0", "?offset=-1"):
        response = get(server, "/" + query)
        assert response.status_code == 400, query
        assert response.headers["content-type"].startswith("text/html")


def test_a_thread_shows_the_letter_with_its_pickup_and_receipt(server, mailbox):
    ids = mailbox["ids"]
    for start in (ids["bug"], ids["receipt"], ids["bug"][:6]):
        page = get(server, f"/letters/{start}").text
        assert {ids["bug"], ids["pickup"], ids["receipt"]} <= _listed(page) | set(re.findall(r'id="l-([0-9a-f]{12})"', page))
        assert "fixed in abc123" in page and "looking at it" in page and "seek returned a deleted node" in page


def test_a_letter_that_does_not_exist_is_404_and_a_malformed_id_400(server):
    assert get(server, "/letters/ffffffffffff").status_code == 404
    assert get(server, "/letters/xyz!").status_code == 400
    assert get(server, "/letters/abc").status_code == 400
    assert get(server, "/letters/ffffffffffff%0A").status_code == 400  # the whole id is checked, not its first line
    assert get(server, "/nowhere").status_code == 404


def test_an_ambiguous_prefix_lists_the_candidates(mailbox, spool_path):
    seen: dict[str, str] = {}
    n = 0
    while True:  # find two letters whose ids share their first four hex digits
        line = b'{"what":"collide %d","repo":"repo-a"}' % n
        lid = hashlib.sha256(line).hexdigest()[:12]
        if lid[:4] in seen:
            break
        seen[lid[:4]] = (lid, line)
        n += 1
    with open(spool_path, "ab") as fh:
        fh.write(seen[lid[:4]][1] + b"\n" + line + b"\n")
    with Server() as srv:
        response = get(srv, f"/letters/{lid[:4]}")
        assert response.status_code == 400
        assert {lid, seen[lid[:4]][0]} <= _listed(response.text)
        done = m1nd("show", lid[:4], "--json")
        assert done.returncode == 2
        same_as_command(get(srv, f"/api/letters/{lid[:4]}"), done, 400)
        assert srv.stop() == 0


# delivered reports ---------------------------------------------------------------

@pytest.fixture
def delivered(mailbox, tmp_path):
    sink = tmp_path / "reports"
    for since, until in (("2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z"),
                         ("2026-05-01T00:00:00Z", "2026-05-03T00:00:00Z")):
        done = m1nd("report", "--since", since, "--until", until, "--to", str(sink))
        assert done.returncode == 0, done.stderr
    runs = m1nd("report", "list", "--json")
    return sink, [r["run_id"] for r in orjson.loads(runs.stdout)["reports"]]


@pytest.mark.parametrize("params", [{}, {"limit": "1"}, {"offset": "1"}, {"limit": "0"}, {"limit": "1", "offset": "1"}])
def test_reports_is_the_report_list_command_with_limit_and_offset(delivered, params):
    options = [a for k, v in params.items() for a in (f"--{k}", v)]
    with Server() as srv:
        response = get(srv, "/api/reports", params=params)
        same_as_command(response, m1nd("report", "list", "--json", *options), 200)
        assert srv.stop() == 0


@pytest.mark.parametrize("params", [{"limit": "300"}, {"limit": "abc"}, {"offset": "-1"}, {"offset": "10001"}])
def test_a_bad_limit_or_offset_is_the_usage_document_with_400(server, params):
    options = [a for k, v in params.items() for a in (f"--{k}", v)]
    done = m1nd("report", "list", "--json", *options)
    assert done.returncode == 2
    same_as_command(get(server, "/api/reports", params=params), done, 400)


def test_delivered_reports_are_listed_and_served_as_stored(delivered):
    sink, runs = delivered
    assert len(runs) == 2
    with Server() as srv:
        page = get(srv, "/reports").text
        assert [f'/reports/{r}' for r in runs] == re.findall(r'href="(/reports/[^"]+)"', page)
        for run in runs:
            response = get(srv, f"/reports/{run}")
            assert response.status_code == 200
            assert response.content == (sink / f"{run}.html").read_bytes()
            csp = response.headers["content-security-policy"]
            assert csp.startswith("default-src 'none'; style-src 'sha256-") and "script" not in csp
            assert response.headers["cache-control"] == "no-store"
        assert get(srv, "/reports/20260101T0000Z-m-000000000000").status_code == 404
        assert get(srv, "/reports/..%2f..%2fetc").status_code == 404
        assert srv.stop() == 0


def test_the_reports_page_says_when_there_are_none(server):
    page = get(server, "/reports")
    assert page.status_code == 200 and "No report delivered yet" in page.text


# cases ---------------------------------------------------------------------------

def test_cases_is_the_cases_command_and_the_page_lists_each_fingerprint(mailbox):
    seen = [write("--what", f"seek said nothing is there, {n}", "--repo", "repo-a", "--tool", "seek (warm cache)",
                  "--kind", "false_absence", "--ts", f"2026-05-02T0{n}:00:00Z") for n in range(3)]
    assert m1nd("distribute").returncode == 0
    with Server() as srv:
        done = m1nd("cases", "--json")
        assert done.returncode == 0, done.stderr
        response = get(srv, "/api/cases")
        same_as_command(response, done, 200)
        entry = next(e for e in response.json()["fingerprints"] if e["fingerprint"] == "fp:seek/false_absence")
        assert set(seen) <= set(entry["witnesses"])
        page = get(srv, "/cases").text
        assert "fp:seek/false_absence" in page
        assert set(seen) <= _listed(page)
        assert get(srv, "/api/cases", params={"state": "open"}).status_code == 400
        assert srv.stop() == 0


def test_a_failure_that_is_neither_not_found_nor_usage_is_the_error_document_with_500(server, m1nd_home):
    (m1nd_home / "roster.json").write_text("{not json")
    done = m1nd("--inbox-sweep", "--no-distribute")
    assert done.returncode == 1
    same_as_command(get(server, "/api/inbox_sweep"), done, 500)
    page = get(server, "/")
    assert page.status_code == 500 and "roster" in page.text
    assert "Traceback" not in server.stderr()


def test_the_served_index_puts_the_report_markers_beside_each_box_label(server):
    page = get(server, "/").text
    cards = re.findall(r'<div class="card box[^"]*">(.*?)<a class="label"[^>]*>([^<]*)</a>', page)
    labelled = {label: head for head, label in cards}
    assert "🟦" in labelled["repo-a"] and "🟪" in labelled["repo-b"] and "🟩" in labelled["medulla"], labelled
    assert all("🟦" not in head and "🟪" not in head for label, head in labelled.items()
               if label not in ("repo-a", "repo-b", "medulla"))
