"""The filing record (git.md 3): which letters m1nd filed into each consented box,
under `<home>/records/filed/`, so that doctor can tell a letter git dropped (filed,
then gone from the box, every branch and every stash: in danger) from one never filed
yet (waiting to be filed: the next safe filing files it).

One file per box, named for the box's real path, one full sha256 digest (hex) per
line, append-only.  It is a record, not state: m1nd never deletes it.  Reading is
forgiving in one way only: a line that is not a digest is skipped (the worst a damaged
record does is call a dropped letter "waiting to be filed", whose fix is the same).
"""

from __future__ import annotations

import hashlib
import os

from m1nd.fsutil import write_all
from m1nd.paths import Paths, ensure_dir, ensure_home


def record_path(paths: Paths, box_path: str) -> str:
    real = os.path.realpath(box_path)
    name = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return os.path.join(paths.home, "records", "filed", name + ".digests")


def record(paths: Paths, box_path: str, digests: list[bytes]) -> None:
    """Append the digests of letters just filed into a consented box (one write, fsynced)."""
    if not digests:
        return
    path = record_path(paths, box_path)
    ensure_home(paths)
    ensure_dir(os.path.dirname(path))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        write_all(fd, b"".join(d.hex().encode() + b"\n" for d in digests))
        os.fsync(fd)
    finally:
        os.close(fd)


def filed_ids(paths: Paths, box_path: str) -> set[str]:
    """The 12-hex ids of the letters the record says were filed into this box."""
    try:
        with open(record_path(paths, box_path), "rb") as fh:
            data = fh.read()
    except OSError:
        return set()
    return {line[:12].decode() for line in data.split(b"\n") if len(line) == 64}
