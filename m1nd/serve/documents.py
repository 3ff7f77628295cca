"""The bodies of the JSON routes (serve.md §2): each the exact bytes its command
prints with `--json`, built by the same core functions and the one JSON format
(`m1nd.jsonout`), with the HTTP status standing for the command's exit code."""

from __future__ import annotations

from dataclasses import dataclass

from m1nd import __version__, jsonout
from m1nd.errors import EXIT_NOT_FOUND, EXIT_USAGE, M1ndError, UsageError

# exit code -> HTTP status: not found 404, usage 400, any other failure 500
STATUS = {EXIT_NOT_FOUND: 404, EXIT_USAGE: 400}


@dataclass(frozen=True)
class Doc:
    status: int
    body: bytes


def ok(doc) -> Doc:
    return Doc(200, jsonout.dumps(doc))


def error(exc: M1ndError) -> Doc:
    """The command's `--json` error document."""
    return Doc(STATUS.get(exc.exit_code, 500),
               jsonout.dumps({"error": {"code": exc.exit_code, "message": exc.message}}))


def health() -> Doc:
    return ok({"status": "ok", "version": __version__})


def only_params(params, allowed: set[str]) -> None:
    """A query parameter the route does not take is a usage error, as an unknown
    option is for the command."""
    for key in params.keys():
        if key not in allowed:
            raise UsageError(f"unknown query parameter {key!r} (this route takes: "
                             f"{', '.join(sorted(allowed)) or 'none'})")
    for key in allowed:
        if len(params.getlist(key)) > 1:
            raise UsageError(f"query parameter {key!r} given more than once")
