"""Everything the CLI prints goes through here: JSON documents, errors, warnings,
and the rich consoles for human output (colour decided in one place)."""

from __future__ import annotations

import os
import sys

from m1nd import jsonout
from m1nd.errors import M1ndError


def in_hook() -> bool:
    return os.environ.get("M1ND_IN_HOOK") == "1"


def colour_allowed(stream) -> bool:
    """Colour only on a TTY, never with NO_COLOR set, never inside a git hook."""
    if os.environ.get("NO_COLOR") is not None or in_hook():
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def console(stderr: bool = False):
    """A rich Console for human output (rich is imported only here, only when needed)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    colour = colour_allowed(stream)
    return Console(
        file=stream,
        no_color=not colour,
        color_system="auto" if colour else None,
        force_terminal=colour or None,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )


def emit_json(doc) -> None:
    out = sys.stdout.buffer
    out.write(jsonout.dumps(doc))
    out.flush()


def emit_text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"m1nd: warning: {message}\n")


def error_line(message: str) -> None:
    sys.stderr.write(f"m1nd: error: {message}\n")


def error(exc: M1ndError, as_json: bool) -> None:
    if as_json:
        emit_json({"error": {"code": exc.exit_code, "message": exc.message}})
    else:
        error_line(exc.message)
