"""The Starlette application: routes, each a thin call into `source` (data) and
`pages` (HTML); every request first passes the `guard`."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.routing import Route

from m1nd.errors import M1ndError, NotFound, UsageError
from m1nd.safetext import safe
from m1nd.serve import documents, pages
from m1nd.serve.documents import Doc
from m1nd.serve.guard import Guard
from m1nd.serve.source import Mailbox
from m1nd.serve.style import ICON

JSON = "application/json"
HTML = "text/html; charset=utf-8"
# `m1nd box`'s filter options, as query parameters of /api/mailbox
BOX_FILTERS = ("state", "agent", "class", "tool", "since", "until")


def _json(doc: Doc) -> Response:
    return Response(doc.body, status_code=doc.status, media_type=JSON)


def _html(body: str, status: int = 200, csp: str = pages.PAGE_CSP) -> Response:
    return Response(body.encode("utf-8", "surrogateescape"), status_code=status, media_type=HTML,
                    headers={"content-security-policy": csp})


def _unexpected(request, exc: Exception) -> M1ndError:
    """A failure no command would report: one line in the server's log, and a 500
    that says as much (never a traceback to the client)."""
    import sys

    sys.stderr.write(safe(f"m1nd: error: {request.method} {request.url.path}: {type(exc).__name__}: {exc}") + "\n")
    sys.stderr.flush()
    return M1ndError(f"internal error ({type(exc).__name__}); the server's log has the details")


async def _api(request, work) -> Response:
    try:
        return _json(await run_in_threadpool(work, request))
    except M1ndError as exc:
        return _json(documents.error(exc))
    except Exception as exc:
        return _json(documents.error(_unexpected(request, exc)))


async def _page(request, work) -> Response:
    try:
        body = await run_in_threadpool(work, request)
    except Exception as exc:
        if not isinstance(exc, M1ndError):
            exc = _unexpected(request, exc)
        status = documents.STATUS.get(exc.exit_code, 500)
        return _html(pages.problem(status, exc.message), status)
    if isinstance(body, tuple):
        return _html(body[1], body[0])
    return _html(body)


def _route(path, work, kind) -> Route:
    async def endpoint(request):
        return await kind(request, work)
    return Route(path, endpoint, methods=["GET", "HEAD"])


async def _health(request) -> Response:  # answered on the event loop: it reads nothing
    try:
        documents.only_params(request.query_params, set())
        return _json(documents.health())
    except M1ndError as exc:
        return _json(documents.error(exc))


async def _api_not_found(request) -> Response:
    return _json(documents.error(NotFound(f"no such route: {request.url.path} (see the README's m1nd serve section)")))


async def _icon(request) -> Response:
    return Response(ICON, media_type="image/svg+xml")


async def _not_found(request) -> Response:
    return _html(pages.problem(404, f"nothing at {request.url.path}"), 404)


def build_app(mailbox: Mailbox, allowed_hosts: frozenset[str], token: str | None, port: int,
              required: bool = True, remote: bool = False):
    routes = _api_routes(mailbox) + _page_routes(mailbox) + [
        Route("/favicon.svg", _icon, methods=["GET", "HEAD"]),
        Route("/favicon.ico", _icon, methods=["GET", "HEAD"]),
        Route("/{rest:path}", _not_found, methods=["GET", "HEAD"]),
    ]
    app = Starlette(routes=routes)
    return Guard(app, allowed_hosts, token, port, required=required, remote=remote)


def _api_routes(mailbox: Mailbox) -> list[Route]:
    """/api/…: the documents the commands print with --json."""
    def inbox_sweep(request) -> Doc:
        documents.only_params(request.query_params, set())
        return mailbox.inbox_sweep()

    def mailbox_doc(request) -> Doc:
        params = request.query_params
        documents.only_params(params, {"brain", *BOX_FILTERS})
        return mailbox.box(params.get("brain"), {k: params[k] for k in BOX_FILTERS if k in params})

    def letter_doc(request) -> Doc:
        documents.only_params(request.query_params, set())
        return mailbox.show(request.path_params["ident"])

    def cases_doc(request) -> Doc:
        documents.only_params(request.query_params, set())
        return mailbox.cases()

    def reports_doc(request) -> Doc:
        params = request.query_params
        documents.only_params(params, {"limit", "offset"})
        return mailbox.reports(params.get("limit"), params.get("offset"))

    def doctor(request) -> Doc:
        documents.only_params(request.query_params, set())
        return mailbox.doctor()

    return [
        _route("/api/inbox_sweep", inbox_sweep, _api),
        _route("/api/mailbox", mailbox_doc, _api),
        _route("/api/letters/{ident}", letter_doc, _api),
        _route("/api/doctor", doctor, _api),
        _route("/api/reports", reports_doc, _api),
        _route("/api/cases", cases_doc, _api),
        Route("/api/health", _health, methods=["GET", "HEAD"]),
        Route("/api/{rest:path}", _api_not_found, methods=["GET", "HEAD"]),
    ]


def _page_routes(mailbox: Mailbox) -> list[Route]:
    """The HTML pages: the mailbox, a letter's thread, cases, reports and one report."""
    def index(request):
        filters = pages.Filters.parse(request.query_params)
        return mailbox.index(filters, lambda data: pages.index(data, filters))

    def show_thread(data):
        if data.candidates:
            return 400, pages.candidates(data.focus, data.candidates)
        return pages.thread(data)

    def letter(request):
        ident = request.path_params["ident"]
        if not pages.ID_PREFIX.fullmatch(ident):
            raise UsageError(f"{ident!r} is not a letter id (12 hex digits, or a prefix of at least 4)")
        return mailbox.letter(ident.lower(), show_thread)

    def cases_page(request):
        from m1nd.cases.display import page_doc

        return pages.cases(page_doc(mailbox.cases_overlay()))

    def reports_page(request):
        return pages.reports(mailbox.delivered())

    async def report(request) -> Response:
        from m1nd.reports.html import csp, stylesheet

        try:
            body = await run_in_threadpool(mailbox.report_html, request.path_params["run_id"])
        except Exception as exc:
            if not isinstance(exc, M1ndError):
                exc = _unexpected(request, exc)
            status = documents.STATUS.get(exc.exit_code, 500)
            return _html(pages.problem(status, exc.message), status)
        # served as stored, under the report's own policy (its one inline stylesheet)
        return Response(body, media_type=HTML,
                        headers={"content-security-policy": csp(stylesheet()) + "; frame-ancestors 'none'"})

    return [
        _route("/", index, _page),
        _route("/letters/{ident}", letter, _page),
        _route("/cases", cases_page, _page),
        _route("/reports", reports_page, _page),
        Route("/reports/{run_id}", report, methods=["GET", "HEAD"]),
    ]
