"""One error type for everything m1nd reports to a user, carrying its exit code.

The CLI catches `M1ndError` in one place and prints its one-line message (or the
JSON error envelope with `--json`).  Exit codes follow the contract: 0 success,
1 failure, 2 usage error, 3 not found.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3


class M1ndError(Exception):
    exit_code = EXIT_FAILURE
    # An error whose message m1nd composed over several lines (a configuration snippet to
    # copy) keeps its newlines on a terminal; every other message is one line.
    multiline = False

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(M1ndError):
    exit_code = EXIT_USAGE


class NotFound(M1ndError):
    exit_code = EXIT_NOT_FOUND
