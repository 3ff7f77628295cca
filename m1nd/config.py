"""The owner's optional settings, `<home>/config.toml`.

Only what a command needs is read, and only when it needs it.  A config that does
not parse fails closed with a clear error.
"""

from __future__ import annotations

import os

from m1nd.errors import M1ndError
from m1nd.fates import DEFAULT_FOREIGN_MARKERS
from m1nd.fsutil import open_fd
from m1nd.paths import Paths


def load(paths: Paths) -> dict:
    try:
        with os.fdopen(open_fd(paths.config), "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise M1ndError(f"cannot read {paths.config}: {exc.strerror}") from None
    import tomllib

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise M1ndError(f"{paths.config} is not valid TOML: {exc}") from None


def foreign_markers(paths: Paths) -> tuple[str, ...]:
    mailbox = load(paths).get("mailbox", {})
    if not isinstance(mailbox, dict):
        raise M1ndError(f"{paths.config}: [mailbox] must be a table")
    markers = mailbox.get("foreign_markers")
    if markers is None:
        return DEFAULT_FOREIGN_MARKERS
    if not isinstance(markers, list) or not all(isinstance(m, str) and m for m in markers):
        raise M1ndError(f"{paths.config}: mailbox.foreign_markers must be a list of non-empty strings")
    return tuple(markers)
