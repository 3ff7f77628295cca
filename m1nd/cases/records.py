"""The durable records of case intelligence, under `<home>/records/` (never in a
repository): the sentinel allowlist and the last result of each probe.

They cannot be recomputed from letters, so m1nd never deletes them, and a record
that cannot be read fails closed (an error, never "nothing allowed yet" silently
turning into "run everything", nor the reverse).
"""

from __future__ import annotations

import os

import orjson

from m1nd.errors import M1ndError
from m1nd.fsutil import atomic_write
from m1nd.paths import Paths, ensure_dir, ensure_home

VERSION = 1
ALLOW = "sentinel-allow.json"
RUNS = "sentinel-runs.json"


def records_dir(paths: Paths) -> str:
    return os.path.join(paths.home, "records")


def load(paths: Paths, name: str, key: str) -> dict:
    path = os.path.join(records_dir(paths), name)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise M1ndError(f"cannot read record {path}: {exc.strerror}") from None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise M1ndError(f"record {path} does not parse: repair or remove it (m1nd never does)") from None
    if type(doc) is not dict or doc.get("version") != VERSION or type(doc.get(key)) is not dict:
        raise M1ndError(f"record {path} is not a version {VERSION} {key} record: repair or remove it")
    return doc[key]


def save(paths: Paths, name: str, key: str, value: dict) -> None:
    directory = records_dir(paths)
    path = os.path.join(directory, name)
    try:
        ensure_home(paths)
        ensure_dir(directory)
        atomic_write(path, orjson.dumps({"version": VERSION, key: value},
                                        option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    except OSError as exc:
        raise M1ndError(f"cannot write record {path}: {exc.strerror or exc}") from None


def allowlist(paths: Paths) -> dict:
    """{receipt digest: {id, probe, fingerprint}}: the exact commands the local user allowed."""
    return load(paths, ALLOW, "allowed")


def last_runs(paths: Paths) -> dict:
    """{receipt digest: {probe, status, day, exit, timed_out}}: each probe's last run."""
    return load(paths, RUNS, "last")
