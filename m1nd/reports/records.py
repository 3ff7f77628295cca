"""Where the reports' records live under `<home>/records/reports/`, and how they are
written and read: canonical JSON, its sha256, and a read that fails closed."""

from __future__ import annotations

import hashlib
import os

import orjson

from m1nd.errors import M1ndError
from m1nd.ledger import records_dir
from m1nd.paths import Paths


def canonical(obj) -> bytes:
    """Canonical JSON: keys sorted, no whitespace, UTF-8 (a path that is not: `\\xNN` escapes)."""
    from m1nd.jsonout import record

    return record(obj, option=orjson.OPT_SORT_KEYS)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def reports_dir(paths: Paths) -> str:
    return os.path.join(records_dir(paths), "reports")


def runs_dir(paths: Paths) -> str:
    return os.path.join(reports_dir(paths), "runs")


def run_dir(paths: Paths, run_id: str) -> str:
    return os.path.join(runs_dir(paths), run_id)


def profile_dir(paths: Paths, profile: str) -> str:
    return os.path.join(reports_dir(paths), profile)


def _read_bytes(path: str, what: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise M1ndError(f"cannot read {what} {path}: {exc.strerror}") from None
