"""The `m1nd` entry point: runs the typer app and handles errors in one place.

Two promises of the CLI contract (section 10) live here:

- options given before the subcommand apply to it, as git's global options do:
  `m1nd --home H write …` is `m1nd write --home H …` (`hoist`);
- no traceback, ever: whatever escapes a command (a path that cannot be created,
  read or written, a closed or full stdout, a current directory that is gone) is one
  line on stderr naming what failed, and exit 1.
"""

from __future__ import annotations

import os
import re
import sys

from m1nd.errors import EXIT_FAILURE, EXIT_USAGE
from m1nd.safetext import safe

# Options a subcommand takes that may also be written before it (valued, then flags).
_GLOBAL_VALUED = ("--home", "--spool", "--root")
_GLOBAL_FLAGS = ("--no-distribute", "--json")
_GROUPS = ("roster", "hooks", "hook", "report", "cases", "sentinels")  # their options belong to the command after them


def hoist(args: list[str]) -> list[str]:
    """Move the global options written before the subcommand to just after it.

    Only when a subcommand follows them: `m1nd --home H --inbox-sweep` stays as it is
    (the root command takes those options itself)."""
    moved: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name = arg.split("=", 1)[0]
        if name in _GLOBAL_VALUED:
            if "=" in arg:
                moved.append(arg)
                i += 1
            elif i + 1 < len(args):
                moved += [arg, args[i + 1]]
                i += 2
            else:
                return args  # a missing value: the parser says so
        elif arg in _GLOBAL_FLAGS:
            moved.append(arg)
            i += 1
        else:
            break
    if not moved or i >= len(args) or args[i].startswith("-"):
        return args
    rest = args[i:]
    cut = 2 if rest[0] in _GROUPS and len(rest) > 1 and not rest[1].startswith("-") else 1
    return rest[:cut] + moved + rest[cut:]


def no_pager(args: list[str]) -> list[str]:
    """`--no-pager` anywhere (before a `--`), as git's global option: taken out of the
    arguments and turned into "no pager" for whatever command pages. The commands that
    also declare it take it either way."""
    end = args.index("--") if "--" in args else len(args)
    if "--no-pager" not in args[:end]:
        return args
    os.environ["M1ND_PAGER"] = ""
    return [a for a in args[:end] if a != "--no-pager"] + args[end:]


def _say(message: str) -> None:
    try:
        sys.stderr.write(f"m1nd: error: {safe(message)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _describe(exc: BaseException) -> str:
    """One line for an error no command turned into a message of its own."""
    if isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else None
        if isinstance(where, bytes):
            where = where.decode("utf-8", "backslashreplace")
        elif isinstance(where, str):
            where = where.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        what = exc.strerror or str(exc)
        return f"{where}: {what}" if where else what
    if isinstance(exc, UnicodeEncodeError) and exc.encoding.lower().replace("-", "").replace("_", "") != "utf8":
        # Python names some codecs by their kind ("charmap" for cp1252): stdout's name is the setting's
        name = getattr(sys.stdout, "encoding", None) if exc.encoding == "charmap" else exc.encoding
        return (f"this text cannot be written in the output's encoding, {name or exc.encoding} "
                f"(set PYTHONIOENCODING=utf-8, or a UTF-8 locale)")
    if isinstance(exc, UnicodeError):
        return f"a path or an argument is not valid text here ({exc})"
    return f"{type(exc).__name__}: {exc}"


def run() -> None:
    """The console script: `main`, then a fast exit.

    After a large sweep the interpreter would spend seconds freeing millions of
    objects one by one at shutdown; everything is written and flushed by then, so
    leave at once.
    """
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        code = 130
    except _StdoutGone:
        _say("cannot write to stdout: it is closed or full")
        code = EXIT_FAILURE
    except BaseException as exc:  # the last resort: one line, never a traceback
        _say(_describe(exc))
        code = EXIT_FAILURE
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        _say("cannot write to stdout: it is closed or full")
        code = code or EXIT_FAILURE
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or EXIT_FAILURE
    os._exit(code)


def usage_line(exc) -> None:
    """A usage error in m1nd's one style: one line on stderr, and where help is."""
    ctx = getattr(exc, "ctx", None)
    where = getattr(ctx, "command_path", "") or "m1nd"
    message = " ".join(str(exc.format_message()).split()).rstrip(".")
    # click words an option's near misses "(Possible options: --a, --b)"; say it as git does.
    message = re.sub(r"No such option: (\S+)\s*\(Possible options?: ([^)]*)\)", _closest_option, message)
    sys.stderr.write(f"m1nd: error: {safe(message)} (see {safe(where)} --help)\n")


def _closest_option(match) -> str:
    import difflib

    typed, candidates = match[1], match[2].split(", ")
    best = max(candidates, key=lambda c: difflib.SequenceMatcher(None, typed, c).ratio())
    return f"No such option: {typed}; did you mean {best}?"


class _StdoutGone(Exception):
    pass


def _stdout_broken(exc: BaseException) -> bool:
    """An error writing stdout (closed: EBADF or a None stream; full: ENOSPC; a
    closed pipe), as opposed to one about a file."""
    if isinstance(exc, BrokenPipeError):
        return True
    if isinstance(exc, OSError) and exc.filename is None and exc.errno in (9, 28):  # EBADF, ENOSPC
        return True
    return isinstance(exc, (AttributeError, ValueError)) and sys.stdout is None or (
        isinstance(exc, ValueError) and "closed file" in str(exc))


def _stand_in_streams() -> bool:
    """Started with stdout (or stderr) closed (`m1nd sweep >&-`): the first file opened
    would get descriptor 1, and "printing" would write into it.  /dev/null takes the
    descriptor first; whether stdout was missing is returned, to be reported at the end."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")
        return True
    return False


def _hook_run(args: list[str]) -> None:
    """The git hook path runs on every checkout: skip typer's start-up cost.  Git's own
    arguments (and anything a hook manager adds) are accepted and ignored."""
    from m1nd.gitops.hookstamp import answer

    if answer(args):  # nothing new since the last hook here (`python -m m1nd` asks first)
        sys.exit(0)
    from m1nd.gitops.hookrun import run_hook

    sys.exit(run_hook(args[2] if len(args) > 2 else "", args[3:]))


def _usage_exit(exc: Exception, args: list[str]) -> None:
    """A click usage error (it carries exit_code and format_message): said in m1nd's
    style, or as the JSON error envelope under --json; then exit with its code."""
    if "--json" in args:
        from m1nd.cli import output

        output.emit_json({"error": {"code": EXIT_USAGE, "message": exc.format_message()}})
    else:
        usage_line(exc)
    sys.exit(exc.exit_code)


# Commands that look at the others (`help` walks the tree); Tab completion needs all.
_NEEDS_THE_TREE = ("help",)


def only_the_invoked(app, args: list[str]):
    """The app with only the command or group `args` invokes (and the root options).

    Building click's command tree converts every command's signature (about 30 ms for
    all of them, on every run); a command's own help, options and errors are the same
    in a tree of one.  Whatever names no command (`--help`, `--version`, a typo) and
    completion get the whole tree."""
    import copy

    name = args[0] if args else ""
    if os.environ.get("_M1ND_COMPLETE") or name in _NEEDS_THE_TREE:
        return app
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    pruned = copy.copy(app)
    pruned.registered_commands, pruned.registered_groups = commands, groups
    return pruned


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    closed_stdout = _stand_in_streams()
    if args[:2] == ["hook", "run"] and not set(args[2:3]) & {"--help", "-h"}:
        _hook_run(args)
    try:
        os.getcwd()
    except OSError:
        _say("the current directory no longer exists (or cannot be read): cd somewhere else first")
        sys.exit(EXIT_FAILURE)
    args = no_pager(args)
    args = hoist(args)
    if args[:1] == ["report"]:
        # The cron path: nothing due is answered before typer loads.
        from m1nd.reports.quick import nothing_due

        if nothing_due(args[1:]):
            sys.exit(0)
    from typer.main import get_command

    from m1nd.cli.app import app

    command = get_command(only_the_invoked(app, args))
    if os.environ.get("_M1ND_COMPLETE"):  # Tab in a shell that sourced `m1nd completion SHELL`
        from typer.completion import completion_init

        completion_init()
    try:
        code = command.main(args=args, prog_name="m1nd", standalone_mode=False)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    except SystemExit:
        raise
    except Exception as exc:  # click's usage errors: they carry exit_code and show()
        if hasattr(exc, "exit_code") and hasattr(exc, "format_message"):
            _usage_exit(exc, args)
        if _stdout_broken(exc):
            raise _StdoutGone() from None
        raise
    if closed_stdout and code in (0, None):
        raise _StdoutGone()
    sys.exit(code if isinstance(code, int) else 0)
