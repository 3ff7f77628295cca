"""The `m1nd` entry point: runs the typer app and handles errors in one place."""

from __future__ import annotations

import os
import sys

from m1nd.errors import EXIT_USAGE


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
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 1
    os._exit(code)


def usage_line(exc) -> None:
    """A usage error in m1nd's one style: one line on stderr, and where help is."""
    ctx = getattr(exc, "ctx", None)
    where = getattr(ctx, "command_path", "") or "m1nd"
    message = " ".join(str(exc.format_message()).split()).rstrip(".")
    sys.stderr.write(f"m1nd: error: {message} (see {where} --help)\n")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) == 3 and args[:2] == ["hook", "run"] and not args[2].startswith("-"):
        # The git hook path runs on every checkout: skip typer's start-up cost.
        from m1nd.gitops.hookrun import run_hook

        sys.exit(run_hook(args[2]))
    if args[:1] == ["report"]:
        # The cron path: nothing due is answered before typer loads.
        from m1nd.reports.quick import nothing_due

        if nothing_due(args[1:]):
            sys.exit(0)
    from typer.main import get_command

    from m1nd.cli.app import app

    command = get_command(app)
    try:
        code = command.main(args=args, prog_name="m1nd", standalone_mode=False)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:  # click's usage errors: they carry exit_code and show()
        if not (hasattr(exc, "exit_code") and hasattr(exc, "format_message")):
            raise
        if "--json" in args:
            from m1nd.cli import output

            output.emit_json({"error": {"code": EXIT_USAGE, "message": exc.format_message()}})
        else:
            usage_line(exc)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
