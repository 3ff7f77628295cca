"""Run the app: bind, print the URL on one flushed line, serve until SIGINT or
SIGTERM, then exit cleanly."""

from __future__ import annotations

import ipaddress
import secrets
import signal
import socket
import sys

from m1nd.errors import M1ndError, UsageError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
SWITCH_INTERVAL = 0.0005  # seconds (Python's default is 0.005)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def url_host(host: str) -> str:
    host = host.strip("[]")
    return f"[{host}]" if ":" in host else host


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """The `Host` headers a request may carry: the address served (and, for
    loopback, `localhost`); for a wildcard bind, this machine's own names and
    addresses."""
    names = {url_host(host).lower()}
    if is_loopback(host):
        names |= set(LOOPBACK_NAMES)
    if is_wildcard(host):
        names |= set(LOOPBACK_NAMES)
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name.lower())
            try:
                for info in socket.getaddrinfo(name, None):
                    names.add(url_host(info[4][0]).lower())
            except OSError:
                pass
    out = set()
    for name in names:
        out.add(f"{name}:{port}")
        if port == 80:
            out.add(name)
    return frozenset(out)


def bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UsageError(f"cannot serve on {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(512)
    except OSError as exc:
        sock.close()
        raise M1ndError(f"cannot listen on {url_host(host)}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock


def _open_locally(url: str) -> None:
    """Open `url` in a browser without putting the token on a command line other users
    can read: a 0600 local file that redirects to it."""
    import html
    import os
    import tempfile
    import webbrowser

    fd, path = tempfile.mkstemp(prefix="m1nd-serve-", suffix=".html")  # mode 0600
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f'<!doctype html><meta http-equiv="refresh" content="0; url={html.escape(url, quote=True)}">\n')
    webbrowser.open("file://" + path)


def serve(mailbox, host: str, port: int, allow_remote: bool, open_browser: bool, no_token: bool = False) -> None:
    import uvicorn

    from m1nd.serve.app import build_app

    if not is_loopback(host) and not allow_remote:
        raise UsageError(f"{host} is not a loopback address: pass --allow-remote to serve it "
                         "(every request then needs the token printed at start)")
    if no_token and not is_loopback(host):
        raise UsageError("--no-token is for a loopback address only: beyond this machine every request needs "
                         "the token")
    # A token on every request, loopback too: other users of this machine reach loopback.
    token = secrets.token_urlsafe(32)
    sock = bind(host, port)
    bound_port = sock.getsockname()[1]
    shown = socket.gethostname() if is_wildcard(host) else url_host(host)
    url = f"http://{shown}:{bound_port}/?token={token}"
    app = build_app(mailbox, allowed_hosts(host, bound_port), token, bound_port, required=not no_token,
                    remote=not is_loopback(host))
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False, lifespan="off",
                            proxy_headers=False, ws="none", timeout_graceful_shutdown=3, loop="asyncio",
                            http="h11")
    server = uvicorn.Server(config)
    # Requests are threads of one process: a thread computing a large view holds the
    # GIL for the whole switch interval each time a cheap request, which gives it up
    # at every stat and read, wants it back. A short interval keeps those waits short.
    sys.setswitchinterval(SWITCH_INTERVAL)
    # uvicorn re-raises the signal it caught once it has shut down, with the handlers
    # that were there before it started: make those do nothing, so that Ctrl-C and
    # SIGTERM end in a clean exit 0 after the graceful shutdown.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: None)
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    if not is_loopback(host):
        sys.stderr.write("m1nd: serving beyond this machine: every request needs the token in the URL above "
                         "(Authorization: Bearer TOKEN, or ?token=TOKEN once in a browser)\n")
        sys.stderr.flush()
    if open_browser:
        _open_locally(url)
    server.run(sockets=[sock])
