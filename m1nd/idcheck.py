"""Doctor's `ids` check (contract section 2, "id collisions"): every 12-hex id that
two different letter lines share, across the spool and every reachable box.

Such letters are both filed and both listed (dedup compares raw bytes), but a reply
naming the id answers both: the check says so, as a warning.
"""

from __future__ import annotations

import hashlib

from m1nd.boxes import refusal
from m1nd.fsutil import open_regular
from m1nd.letters import iter_raw, parse
from m1nd.run import Run


def shared_ids(paths: list[str]) -> dict[str, list[str]]:
    """{id: [where each different line with it first appears]} for ids two or more
    different letter lines share."""
    first: dict[str, tuple] = {}  # id -> (digest, where, path, offset, length): no bytes kept
    shared: dict[str, dict[bytes, str]] = {}
    sha256 = hashlib.sha256
    for path in paths:
        try:
            fh = open_regular(path)
        except OSError:
            continue  # the spool and boxes checks name what cannot be read
        if fh is None:
            continue
        with fh:
            for number, (start, _, raw, _) in enumerate(iter_raw(fh), 1):
                if not raw or raw.isspace():
                    continue
                h = sha256(raw)
                lid = h.hexdigest()[:12]
                digest = h.digest()
                seen = first.get(lid)
                if seen is None:
                    first[lid] = (digest, f"{path}:{number}", path, start, len(raw))
                    continue
                if seen[0] == digest:
                    continue
                if parse(raw) is None or parse(_read_back(*seen[2:])) is None:
                    continue  # only letters share ids in any way that matters
                shared.setdefault(lid, {seen[0]: seen[1]}).setdefault(digest, f"{path}:{number}")
    return {lid: list(places.values()) for lid, places in sorted(shared.items())}


def _read_back(path: str, offset: int, length: int) -> bytes:
    with open_regular(path) as fh:
        fh.seek(offset)
        return fh.read(length)


def ids_check(run: Run):
    """The check from the files alone."""
    paths = [run.paths.spool] + [box.path for box in run.boxes() if refusal(box) is None]
    return ids_check_of(shared_ids(paths))


def ids_check_of(shared: dict[str, list[str]]):
    """The check from {id: [where each different line with it first appears]}."""
    from m1nd.checks import OK, WARN, Check

    if not shared:
        return Check("ids", OK, "no two different letters share an id")
    named = "; ".join(f"{lid} ({', '.join(places)})" for lid, places in list(shared.items())[:5])
    more = f" and {len(shared) - 5} more" if len(shared) > 5 else ""
    return Check(
        "ids", WARN,
        f"{len(shared)} id{'s' if len(shared) != 1 else ''} shared by different letters (both are kept and "
        f"listed; a reply naming the id answers both): {named}{more}",
        "",
    )
