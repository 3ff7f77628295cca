"""The rules every request passes before any route sees it (serve.md §1).

A plain ASGI middleware, in this order: the `Host` header must name the address
served (421, against DNS rebinding); only GET and HEAD (405); with a token, the
bearer token in the `Authorization` header, the cookie, or `?token=` once (401).
Every response gets `Cache-Control: no-store` and the security headers; a response
that set no Content-Security-Policy of its own gets the strict default.
"""

from __future__ import annotations

import hmac
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, quote, urlencode

from m1nd import jsonout

STRICT_CSP = (
    "default-src 'none'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
_ALWAYS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


def cookie_name(port: int) -> str:
    # Cookies ignore ports: two servers on one host must not overwrite each other's.
    return f"m1nd_token_{port}"


async def _plain(send, status: int, text: str, extra: list[tuple[bytes, bytes]] = (), head=False) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
               *extra, *_ALWAYS, (b"content-security-policy", STRICT_CSP.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def _refuse(send, scope, status: int, code: str, text: str,
                  extra: list[tuple[bytes, bytes]] = ()) -> None:
    """A refusal before any route: on `/api/` routes the JSON error document
    `{"error": {"code": …, "message": …}}` (serve.md §1), on pages one plain line."""
    head = scope["method"] == "HEAD"
    if not scope["path"].startswith("/api/"):
        await _plain(send, status, text, extra, head=head)
        return
    body = jsonout.dumps({"error": {"code": code, "message": text}})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               *extra, *_ALWAYS, (b"content-security-policy", STRICT_CSP.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


# The one route that carries held letters' text: it always needs the token.
ALWAYS_TOKEN = "/api/inbox_sweep"


def same_server_location(path: str, query: str) -> str:
    """Where the token-stripping redirect goes: a path on this server, never a location a
    browser could read as another host (`//host`, `/\\host`, encoded slashes) and never a
    raw byte a header cannot carry (CR, LF, NUL, non-Latin-1): every byte is re-quoted."""
    tail = path.lstrip("/\\")
    location = "/" + quote(tail, safe="/-._~!$&'()*+,;=:@")
    if location.startswith("//"):
        location = "/"
    return location + (f"?{quote(query, safe='=&-._~%+')}" if query else "")


class Guard:
    def __init__(self, app, allowed_hosts: frozenset[str], token: str | None, port: int,
                 required: bool = True, remote: bool = False) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.token = token.encode() if token else None
        self.required = required  # False with --no-token (loopback only): then only ALWAYS_TOKEN needs it
        self.remote = remote
        self.cookie = cookie_name(port)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = {}
        for key, value in scope["headers"]:
            headers.setdefault(key, value)
        head = scope["method"] == "HEAD"
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.allowed_hosts:
            await _refuse(send, scope, 421, "misdirected",
                          "misdirected request: this server answers only to its own address")
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _refuse(send, scope, 405, "method_not_allowed",
                          "method not allowed: m1nd serve is read-only (GET, HEAD)",
                          [(b"allow", b"GET, HEAD")])
            return
        set_cookie = None
        if self.token is not None and (self.required or scope["path"] == ALWAYS_TOKEN):
            scope, verdict = self._authorize(scope, headers)
            if verdict == "denied":
                await _refuse(send, scope, 401, "unauthorized", "unauthorized: send the token printed at start "
                              "(Authorization: Bearer TOKEN, or ?token=TOKEN once)",
                              [(b"www-authenticate", b'Bearer realm="m1nd"')])
                return
            if verdict == "query":
                set_cookie = (f"{self.cookie}={self.token.decode()}; HttpOnly; SameSite=Strict; Path=/").encode()
                if not scope["path"].startswith("/api/"):
                    # Take the token out of the address bar (and history) at once.
                    location = same_server_location(scope["path"], scope["query_string"].decode("latin-1"))
                    await _plain(send, 303, "see other", [(b"location", location.encode("latin-1")),
                                                          (b"set-cookie", set_cookie)], head=head)
                    return

        if self.remote and scope["path"] == ALWAYS_TOKEN:
            await _refuse(send, scope, 403, "forbidden",
                          "forbidden: /api/inbox_sweep carries held letters' text and is never served "
                          "beyond this machine")
            return

        async def send_secured(message) -> None:
            if message["type"] == "http.response.start":
                out = [h for h in message.get("headers", []) if h[0].lower() != b"cache-control"]
                names = {h[0].lower() for h in out}
                out += _ALWAYS
                if b"content-security-policy" not in names:
                    out.append((b"content-security-policy", STRICT_CSP.encode()))
                if set_cookie:
                    out.append((b"set-cookie", set_cookie))
                message = {**message, "headers": out}
            await send(message)

        await self.app(scope, receive, send_secured)

    def _authorize(self, scope, headers):
        """(scope with any `token` query parameter removed, 'ok' | 'query' | 'denied')."""
        pairs = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        offered = [v for k, v in pairs if k == "token"]
        if offered:
            rest = urlencode([(k, v) for k, v in pairs if k != "token"])
            scope = {**scope, "query_string": rest.encode("latin-1")}
        auth = headers.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer " and hmac.compare_digest(auth[7:].strip(), self.token):
            return scope, "ok"
        if len(offered) == 1 and hmac.compare_digest(offered[0].encode("latin-1", "replace"), self.token):
            return scope, "query"
        raw_cookie = headers.get(b"cookie")
        if raw_cookie:
            jar = SimpleCookie()
            try:
                jar.load(raw_cookie.decode("latin-1"))
            except Exception:  # a malformed Cookie header is simply no cookie
                jar = SimpleCookie()
            morsel = jar.get(self.cookie)
            if morsel is not None and hmac.compare_digest(morsel.value.encode("latin-1", "replace"), self.token):
                return scope, "ok"
        return scope, "denied"
