"""Everything the CLI prints goes through here: JSON documents, errors, warnings,
and the rich consoles for human output (colour decided in one place)."""

from __future__ import annotations

import io
import os
import sys
from contextlib import contextmanager

from m1nd import jsonout
from m1nd.errors import M1ndError
from m1nd.safetext import safe, safe_lines


def in_hook() -> bool:
    return os.environ.get("M1ND_IN_HOOK") == "1"


def is_tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def colour_allowed(stream) -> bool:
    """Colour only on a TTY, never with NO_COLOR set to a non-empty value (the
    no-color.org convention: `NO_COLOR=` leaves colour on), never inside a git hook."""
    if os.environ.get("NO_COLOR") or in_hook():
        return False
    return is_tty(stream)


def console(stderr: bool = False, stream=None):
    """A rich Console for human output (rich is imported only here, only when needed).

    `stream` is where to write (a pager's input, say); colour is decided by the
    terminal behind it (stdout's, for a pager)."""
    tty_stream = sys.stderr if stderr else sys.stdout
    colour = colour_allowed(tty_stream)
    stream = stream or tty_stream
    return _safe_console_class()(
        file=stream,
        no_color=not colour,
        color_system="auto" if colour else None,
        force_terminal=colour or None,
        highlight=False,
        markup=False,  # no string is ever read as markup: `[/etc/hosts]` prints as written
        emoji=False,
        soft_wrap=False,
        width=_width(tty_stream),
    )


_SAFE_CONSOLE = None


def _safe_console_class():
    """A rich Console whose every text segment passes through `safe` as it is written:
    rich's own control segments (colour, cursor for the progress bar) are kept, but
    no text a caller hands it can carry a control or bidi character to the terminal."""
    global _SAFE_CONSOLE
    if _SAFE_CONSOLE is None:
        from rich.console import Console
        from rich.segment import Segment

        class SafeConsole(Console):
            def _render_buffer(self, buffer):
                return super()._render_buffer(
                    seg if seg.control else Segment(safe_lines(seg.text), seg.style, seg.control) for seg in buffer)

            def on_broken_pipe(self) -> None:
                if self.file is not sys.stdout:
                    raise BrokenPipeError  # a pager that quit: paged() takes it as the end of the view
                super().on_broken_pipe()  # stdout's reader gone: nothing more to it, exit 1

        _SAFE_CONSOLE = SafeConsole
    return _SAFE_CONSOLE


class LineWriter:
    """Writes lines of text, each with optional styled spans [(start, end, style)]:
    through a rich console when colour is allowed, else as that console would write
    them without colour, without rich (plain_line)."""

    def __init__(self, stream=None) -> None:
        # The width lines are laid out for, with colour or without.  (rich's own width
        # would be 80 on a terminal whose TERM is dumb or unknown, whatever COLUMNS says;
        # lines are cut to this one before rich sees them.)
        self.width = max(40, _width(sys.stdout))
        if colour_allowed(sys.stdout):
            self.con, self.out = console(stream=stream), None
        else:
            self.con, self.out = None, stream or sys.stdout

    def line(self, text: str = "", style_spans=()) -> None:
        if self.out is not None:
            try:
                self.out.write(plain_line(text))
                self.out.flush()  # as rich does after each print: stderr lines stay in order with these
            except BrokenPipeError:
                if self.out is not sys.stdout:
                    raise  # a pager that quit: paged() takes it as the end of the view
                _reader_gone()
            return
        from rich.text import Text

        t = Text(text, no_wrap=True, overflow="ignore", end="\n")
        for start, end, style in style_spans:
            t.stylize(style, start, end)
        self.con.print(t, soft_wrap=True, markup=False, highlight=False, emoji=False)


def _reader_gone() -> None:
    """stdout's reader went away (`| head`): what rich does then, so that colour or not
    ends alike: nothing more reaches stdout, and exit 1."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the buffered rest must not fail again at exit
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass
    raise SystemExit(1)


def plain_line(text: str) -> str:
    """What a colourless rich console writes for `text` printed as one soft-wrapped
    line (and its newline): control codes rich drops are dropped, tabs become spaces to
    the next 8-cell stop, then `safe_lines` as SafeConsole applies it.  Views write this
    themselves when there is no colour to draw: importing and driving rich cost about
    20 ms of every read (tests/test_plain_lines.py holds the two to the same bytes)."""
    text = text.translate(_RICH_DROPS)
    if "\t" in text:
        text = "\n".join(_expand_tabs(line) for line in text.split("\n"))
    return safe_lines(text) + "\n"


_RICH_DROPS = dict.fromkeys((7, 8, 11, 12, 13))  # rich.control.strip_control_codes


def _expand_tabs(line: str) -> str:
    from rich.cells import cell_len  # small: the cell widths, not the console

    parts = line.split("\t")
    out, column = [], 0
    for part in parts[:-1]:
        column += cell_len(part)
        spaces = 8 - column % 8
        out.append(part + " " * spaces)
        column += spaces
    out.append(parts[-1])
    return "".join(out)


def width() -> int:
    """The width human output is laid out for (stdout's terminal, COLUMNS, else 80)."""
    return _width(sys.stdout)


def _width(stream) -> int | None:
    """COLUMNS when set, else the terminal's width, else 80 (a pipe, a log).

    A width of 0 or 1 (a pty nobody sized, a serial console) is no width at all:
    laid out for it, every line would be cut to nothing, so it counts as 80."""
    value = os.environ.get("COLUMNS", "")
    if value.isdigit() and int(value) > 1:
        return int(value)
    if is_tty(stream):
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
            if columns > 1:
                return columns
        except (OSError, ValueError):
            pass
    return 80


def pager_command() -> str | None:
    """The pager the way git picks one: $M1ND_PAGER, else $PAGER, else `less -FRX`;
    empty or `cat` means none."""
    for name in ("M1ND_PAGER", "PAGER"):
        value = os.environ.get(name)
        if value is not None:
            value = value.strip()
            return None if value in ("", "cat") else value
    return "less -FRX"


@contextmanager
def paged(enabled: bool = True):
    """Yield the text stream human output goes to: a pager's input when stdout is a
    terminal (never in a hook, never with --no-pager), else stdout itself."""
    command = pager_command() if enabled and is_tty(sys.stdout) and not in_hook() else None
    if command is None:
        yield sys.stdout
        return
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        yield sys.stdout
        return
    pipe = io.TextIOWrapper(proc.stdin, encoding="utf-8", errors="surrogateescape", write_through=False)
    try:
        yield pipe
        pipe.flush()
    except BrokenPipeError:
        # The reader quit the pager early: that is fine, and the same whether the view
        # was still being written or already sat in the pipe (the command goes on: its
        # warnings and exit code are what they would have been).
        pass
    finally:
        try:
            pipe.close()
        except (BrokenPipeError, OSError):
            pass
        proc.wait()


def emit_json(doc) -> None:
    out = sys.stdout.buffer
    out.write(jsonout.dumps(doc))
    out.flush()


def emit_text(text: str) -> None:
    text = safe_lines(text)
    line = text if text.endswith("\n") else text + "\n"
    sys.stdout.flush()
    # surrogateescape gives back the original bytes of a path that is not UTF-8
    sys.stdout.buffer.write(line.encode("utf-8", "surrogateescape"))
    sys.stdout.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"m1nd: warning: {safe(message)}\n")


def error_line(message: str, keep_lines: bool = False) -> None:
    """One error line; `keep_lines` for a message m1nd composed over several lines (its
    newlines kept, every control character still escaped)."""
    sys.stderr.write(f"m1nd: error: {safe_lines(message) if keep_lines else safe(message)}\n")


def error(exc: M1ndError, as_json: bool) -> None:
    if as_json:
        emit_json({"error": {"code": exc.exit_code, "message": exc.message}})
    else:
        error_line(exc.message, keep_lines=exc.multiline)


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
