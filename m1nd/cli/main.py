"""The `m1nd` entry point: runs the typer app and handles errors in one place."""

from __future__ import annotations

import sys

from m1nd.errors import EXIT_USAGE


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) == 3 and args[:2] == ["hook", "run"] and not args[2].startswith("-"):
        # The git hook path runs on every checkout: skip typer's start-up cost.
        from m1nd.gitops.hookrun import run_hook

        sys.exit(run_hook(args[2]))
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
            exc.show()
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
