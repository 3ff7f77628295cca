"""`m1nd serve` against the machine's other users and hostile web pages, with raw HTTP:
a token on every request (loopback too), a redirect that never leaves the server, and
no odd byte in a path that makes a 500 or a traceback (docs/threat-model.md)."""

from __future__ import annotations

import socket

import pytest

from servekit import Server, mailbox  # noqa: F401  (mailbox is a fixture)


def raw(srv: Server, target: bytes, headers: bytes = b"") -> tuple[int, bytes]:
    """(status, the whole response) of one raw GET: the exact bytes of `target` go out."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % srv.port + headers
                     + b"Connection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 "), data  # an answer, never a dropped connection
    return int(data[9:12]), data


def location(response: bytes) -> bytes:
    for line in response.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"location:"):
            return line.split(b":", 1)[1].strip()
    raise AssertionError(response)


@pytest.fixture
def tokened(mailbox):
    srv = Server(token=True)
    yield srv
    assert srv.stop() == 0
    assert "Traceback" not in srv.stderr(), srv.stderr()


def test_loopback_prints_a_token_and_refuses_requests_without_it_or_with_a_wrong_one(tokened):
    assert tokened.token and f"?token={tokened.token}" in tokened.line
    wrong = tokened.token[:-1] + ("A" if tokened.token[-1] != "A" else "B")
    for target in (b"/", b"/api/health", b"/letters/abcd", b"/api/inbox_sweep", b"/?token=" + wrong.encode()):
        assert raw(tokened, target)[0] == 401, target
    assert raw(tokened, b"/api/health", b"Authorization: Bearer %s\r\n" % tokened.token.encode())[0] == 200


@pytest.mark.parametrize("target", [b"//evil.example/", b"/\\evil.example", b"/%2f%2fevil.example",
                                    b"/%5c%5cevil.example", b"/\\/evil.example", b"//evil.example/%0d%0aX:%20y"])
def test_the_token_stripping_redirect_stays_on_the_server(tokened, target):
    status, response = raw(tokened, target + b"?token=" + tokened.token.encode())
    assert status == 303
    where = location(response)
    assert where.startswith(b"/") and not where.startswith((b"//", b"/\\")), where
    assert b"evil.example" not in where.split(b"/")[0] and b"\r" not in where


@pytest.mark.parametrize("path", [b"/%e2%80%ae", b"/%ff", b"/%0d%0a", b"/%00", b"/letters/%ff", b"/api/letters/%e2%80%ae",
                                  b"/letters/%00abcd", b"/api/mailbox?brain=%ff"])
def test_odd_bytes_in_a_path_never_give_a_500_or_drop_the_connection(tokened, path):
    auth = b"Authorization: Bearer %s\r\n" % tokened.token.encode()
    status, _ = raw(tokened, path, auth)
    assert status < 500, path
    status, response = raw(tokened, path + (b"&" if b"?" in path else b"?") + b"token=" + tokened.token.encode())
    assert status < 500, path
    if status == 303:
        assert not location(response).startswith(b"//")


def test_no_token_is_for_loopback_only(mailbox):
    from conftest import run_script

    done = run_script("serve", "--host", "0.0.0.0", "--allow-remote", "--no-token", "--port", "0", timeout=60)
    assert done.returncode == 2 and b"loopback" in done.stderr and b"Traceback" not in done.stderr


def test_with_no_token_the_inbox_sweep_still_needs_it(mailbox):
    srv = Server()  # --no-token
    try:
        assert raw(srv, b"/api/health")[0] == 200
        assert raw(srv, b"/api/inbox_sweep")[0] == 401
        assert raw(srv, b"/api/inbox_sweep", b"Authorization: Bearer %s\r\n" % srv.token.encode())[0] == 200
    finally:
        assert srv.stop() == 0


def test_a_held_letter_shows_as_held_on_every_page_and_route(mailbox):
    import os
    import random
    import string

    import orjson

    from m1nd.letters import letter_id
    from servekit import m1nd

    rng = random.Random(15)  # a made-up secret, built at test time
    needle = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
    line = orjson.dumps({"ts": "2026-05-03T08:00:00Z", "class": "bug", "repo": "repo-a",
                         "what": "AWS_SECRET_ACCESS_KEY" + "=" + needle})
    with open(os.path.join(os.environ["M1ND_HOME"], "field-reports.jsonl"), "ab") as fh:
        fh.write(line + b"\n")
    assert m1nd("distribute").returncode == 0
    lid = letter_id(line).encode()
    srv = Server(token=True)
    try:
        auth = b"Authorization: Bearer %s\r\n" % srv.token.encode()
        for target in (b"/", b"/?state=all", b"/letters/" + lid, b"/api/letters/" + lid,
                       b"/cases", b"/api/cases"):
            status, response = raw(srv, target, auth)
            assert status == 200, (target, response[:300])
            assert needle.encode() not in response, target
        assert lid in raw(srv, b"/letters/" + lid, auth)[1]
    finally:
        assert srv.stop() == 0


def _json_error(response: bytes) -> dict:
    import json

    head, body = response.split(b"\r\n\r\n", 1)
    assert b"content-type: application/json" in head.lower(), head
    doc = json.loads(body)
    assert set(doc) == {"error"} and set(doc["error"]) == {"code", "message"}, doc
    return doc["error"]


def test_refusals_on_api_routes_are_the_json_error_document(tokened):
    auth = b"Authorization: Bearer %s\r\n" % tokened.token.encode()
    wrong = tokened.token[:-1] + ("A" if tokened.token[-1] != "A" else "B")
    for target, headers in ((b"/api/health", b""), (b"/api/mailbox?brain=medulla", b""),
                            (b"/api/health", b"Authorization: Bearer %s\r\n" % wrong.encode()),
                            (b"/api/cases?token=" + wrong.encode(), b"")):
        status, response = raw(tokened, target, headers)
        assert status == 401, target
        assert _json_error(response)["code"] == "unauthorized"
    with socket.create_connection(("127.0.0.1", tokened.port), timeout=30) as sock:
        sock.sendall(b"POST /api/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % tokened.port + auth
                     + b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 405") and _json_error(data)["code"] == "method_not_allowed"
    with socket.create_connection(("127.0.0.1", tokened.port), timeout=30) as sock:
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: evil.example\r\n" + auth + b"Connection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 421") and _json_error(data)["code"] == "misdirected"
    # a page keeps its one plain line
    status, response = raw(tokened, b"/")
    assert status == 401 and b"text/plain" in response.split(b"\r\n\r\n", 1)[0]
