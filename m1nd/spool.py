"""Writing letters to the spool: `m1nd write`, `pickup`, `answer` (contract section 9).

One letter is one compact JSON line with a fixed key order, so the same arguments
always give the same bytes (and so the same id).  It reaches the spool in one
O_APPEND write followed by fsync.
"""

from __future__ import annotations

import getpass
import os
import re

import orjson

from m1nd.clock import parse_now, stamp
from m1nd.errors import M1ndError, UsageError
from m1nd.fsutil import lock_for, open_fd, write_all
from m1nd.letters import MAX_LETTER_BYTES, is_oversized, letter_id
from m1nd.paths import Paths, ensure_home
from m1nd.secrets import likely_secret

KEY_ORDER = ("ts", "agent", "class", "kind", "repo", "brain", "tool", "what", "expected", "snippet",
             "answers", "disposition", "fingerprint", "case_id", "sentinel")
DISPOSITIONS = ("fixed", "declined", "moot")
_ID = re.compile(r"[0-9a-f]{12}")


def default_agent() -> str:
    agent = os.environ.get("M1ND_AGENT")
    if agent:
        return agent
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def check_ids(ids: list[str]) -> list[str]:
    for value in ids:
        if not _ID.fullmatch(value):  # fullmatch: "$" would accept a trailing newline
            raise UsageError(f"not a letter id: {value!r} (ids are 12 lowercase hex characters)")
    return ids


def compose(fields: dict) -> bytes:
    """The letter's bytes: known keys in fixed order, empty optional fields left out."""
    what = fields.get("what") or ""
    if not what.strip():
        raise UsageError("--what must not be empty")
    ordered = {}
    for key in KEY_ORDER:
        value = fields.get(key)
        if value in (None, "", [], ()):
            continue
        ordered[key] = list(value) if key == "answers" else value
    try:
        raw = orjson.dumps(ordered)
    except orjson.JSONEncodeError:  # argv bytes that are not UTF-8 arrive surrogate-escaped
        raise UsageError("an argument is not valid UTF-8 text: letters are UTF-8 JSON") from None
    if is_oversized(raw):
        raise M1ndError(
            f"refused: this letter is {len(raw)} bytes, over the {MAX_LETTER_BYTES // 1024} KiB a letter may "
            "have; write a shorter one (a long log belongs in a file the letter names)")
    kind = likely_secret(raw)
    if kind:
        raise M1ndError(
            f"refused: this letter carries a likely secret ({kind}); boxes get committed, "
            "so write it again with the secret redacted"
        )
    return raw


def append(paths: Paths, raw: bytes) -> str:
    """Append one letter line to the spool; returns its id.

    A failure (a read-only home, a full disk) is one clear error; at worst a partial
    write leaves one unterminated fragment, which the next writer closes with `\n`.
    """
    try:
        spool_dir = os.path.dirname(paths.spool)
        if spool_dir != paths.home and not os.path.isdir(spool_dir):
            # a spool named by --spool or M1ND_SPOOL: m1nd creates no directory for it
            raise M1ndError(f"cannot write the letter to the spool: {spool_dir} does not exist "
                            "(m1nd creates no directory for a spool outside the home)")
        ensure_home(paths)
        with lock_for(paths.locks, "spool", paths.spool):
            fd = open_fd(paths.spool, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)  # never a FIFO
            try:
                size = os.fstat(fd).st_size
                lead = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
                write_all(fd, lead + raw + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
    except OSError as exc:
        where = exc.filename or paths.spool
        raise M1ndError(f"cannot write the letter to the spool: {where}: {exc.strerror or exc}") from None
    return letter_id(raw)


def letter_fields(
    what: str,
    *,
    bound_root: str | None,
    ts: str | None = None,
    agent: str | None = None,
    klass: str | None = None,
    kind: str | None = None,
    repo: str | None = None,
    brain: str | None = None,
    tool: str | None = None,
    expected: str | None = None,
    snippet: str | None = None,
    answers: list[str] | None = None,
    disposition: str | None = None,
) -> dict:
    """Fill the defaults of section 9: ts now, agent from env or user, repo bound or `all`."""
    if disposition is not None and disposition not in DISPOSITIONS:
        raise UsageError(f"--disposition must be one of {', '.join(DISPOSITIONS)}")
    return {
        # a given --ts must parse; it is stored in UTC so that every letter's ts sorts alike
        "ts": stamp(parse_now(ts)) if ts else stamp(parse_now()),
        "agent": agent or default_agent(),
        "class": klass,
        "kind": kind,
        "repo": repo if repo is not None else (bound_root or "all"),
        "brain": brain,
        "tool": tool,
        "what": what,
        "expected": expected,
        "snippet": snippet,
        "answers": check_ids(list(answers or [])),
        "disposition": disposition,
    }
