"""`m1nd serve`: the mailbox on a local web page and behind the JSON read routes."""

from __future__ import annotations

from typing import Annotated

import typer

from m1nd.cli import output
from m1nd.cli.common import reporting
from m1nd.cli.options import Home, Roots, Spool

_HTTP_STACK = {"starlette", "uvicorn", "anyio", "h11", "sniffio", "click", "idna"}


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (default: 127.0.0.1, loopback only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (default 8765; 0 picks a free one).")] = 8765,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the page in a browser once serving.")] = False,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a non-loopback address; every request then needs the printed token.")] = False,
    no_token: Annotated[bool, typer.Option("--no-token", help="Loopback only: serve without the token (but for "
                                           "/api/inbox_sweep, which always needs it).")] = False,
    home: Home = None,
    spool: Spool = None,
    roots: Roots = None,
) -> None:
    """Serve the mailbox read-only: a page to browse and the JSON read routes.

    Prints the URL on one line, then serves until Ctrl-C or SIGTERM.

    Example: m1nd serve --port 0
    """
    try:
        from m1nd.serve.server import serve as run_server
        from m1nd.serve.source import Mailbox
        import starlette.applications  # noqa: F401  (the extra's presence, checked before binding)
        import uvicorn  # noqa: F401
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _HTTP_STACK:
            raise
        from m1nd.serve import INSTALL_HINT

        output.error_line(f"m1nd serve needs the serve extra: {INSTALL_HINT}")
        raise typer.Exit(1)
    with reporting(False):
        run_server(Mailbox(home, spool, roots), host, port, allow_remote, open_browser, no_token)
