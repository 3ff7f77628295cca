"""Everything the CLI prints goes through here: JSON documents, errors, warnings,
and the rich consoles for human output (colour decided in one place)."""

from __future__ import annotations

import os
import sys

from m1nd import jsonout
from m1nd.errors import M1ndError


def in_hook() -> bool:
    return os.environ.get("M1ND_IN_HOOK") == "1"


def is_tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def colour_allowed(stream) -> bool:
    """Colour only on a TTY, never with NO_COLOR set, never inside a git hook."""
    if os.environ.get("NO_COLOR") is not None or in_hook():
        return False
    return is_tty(stream)


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
    line = text if text.endswith("\n") else text + "\n"
    sys.stdout.flush()
    # surrogateescape gives back the original bytes of a path that is not UTF-8
    sys.stdout.buffer.write(line.encode("utf-8", "surrogateescape"))
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


class Progress:
    """A progress bar on stderr for long work: only on a TTY, never in a hook, and
    only once the work has taken more than a second (rich is imported then)."""

    DELAY = 1.0

    def __init__(self, label: str) -> None:
        import time

        self.label = label
        self.clock = time.monotonic
        self.started = self.clock()
        self.enabled = is_tty(sys.stderr) and not in_hook()
        self.bar = None
        self.task = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if self.clock() - self.started < self.DELAY or done >= total:
                return
            from rich.progress import BarColumn, DownloadColumn, Progress as Bar, TimeRemainingColumn

            self.bar = Bar("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                           TimeRemainingColumn(), console=console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
