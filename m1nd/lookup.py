"""Finding the letters a reply names (contract section 9): ids and id prefixes over
the union of the spool and every reachable box, read as they are (no distribution).

The one place ids given on the command line are resolved; the read model of the
mailbox can replace the reading here without changing its callers.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass

from m1nd.boxes import refusal
from m1nd.errors import NotFound, UsageError
from m1nd.fsutil import open_regular
from m1nd.letters import Letter, iter_raw, parse
from m1nd.run import Run

MIN_PREFIX = 4
_PREFIX = re.compile(r"[0-9a-f]{4,12}")


@dataclass(frozen=True)
class Resolved:
    ids: list[str]  # full 12-hex ids, in the order given
    first: Letter | None  # the letter the first id names, when some letter has it


def _scan(path: str, prefixes: tuple[str, ...], found: dict[str, Letter]) -> None:
    try:
        fh = open_regular(path, "letters file")
    except OSError:
        return  # unreadable here: doctor and the sweep name it
    if fh is None:
        return
    sha256 = hashlib.sha256
    with fh:
        for _, _, raw, _ in iter_raw(fh):
            if not raw or raw.isspace():
                continue
            lid = sha256(raw).hexdigest()[:12]
            if lid.startswith(prefixes) and lid not in found:
                letter = parse(raw, lid)
                if letter is not None:
                    found[lid] = letter


def union_matching(run: Run, prefixes: tuple[str, ...]) -> dict[str, Letter]:
    """{id: first letter with that id} for every letter of the spool and the reachable
    boxes whose id starts with one of `prefixes` (spool first, then the boxes)."""
    found: dict[str, Letter] = {}
    _scan(run.paths.spool, prefixes, found)
    for box in run.boxes():
        if refusal(box) is None:
            _scan(box.path, prefixes, found)
    return found


def box_holding(run: Run, lid: str):
    """The first readable box (run order) that holds a letter with id `lid`, or None."""
    for box in run.boxes():
        if refusal(box) is None:
            found: dict[str, Letter] = {}
            _scan(box.path, (lid,), found)
            if lid in found:
                return box
    return None


def reply_route(run: Run, letter: Letter) -> tuple[str, str | None]:
    """(repo, brain) for a reply to `letter`: its own fields, so the reply travels with it;
    but when those would not route the reply into the box holding the letter here (a
    letter that arrived by git naming a repository unknown here), `brain` names that
    box (its root path, or `medulla`): a reply never waits for a box its letter is in.
    A held letter whose secret sits in `repo` or `brain` has neither copied (the reply
    would be held in turn): the reply names the box the letter is in, or the medulla box."""
    from m1nd.routing import MEDULLA, PROJECT
    from m1nd.secrets import likely_secret

    repo, brain = letter.repo, letter.brain or None
    secret = likely_secret(f"{repo}\n{brain or ''}".encode()) is not None
    box = box_holding(run, letter.id)
    if box is None:
        return ("", MEDULLA) if secret else (repo, brain)
    route = run.roots.resolve(letter.brain, letter.repo)
    if box.root is None:
        if secret:
            return "", MEDULLA
        return (repo, brain) if route.kind == MEDULLA else (repo, "medulla")
    if not secret and route.kind == PROJECT and route.root is not None and route.root.path == box.root.path:
        return repo, brain
    try:
        box.root.path.encode("utf-8")
    except UnicodeEncodeError:  # a letter is UTF-8 JSON: it cannot name this box
        from m1nd.errors import M1ndError

        raise M1ndError(f"letter {letter.id} is in the box of {os.fsencode(box.root.path)!r}, a path that is not "
                        "UTF-8: no reply can name that box (rename the directory)") from None
    return (box.label if secret else repo), box.root.path


def check_given(given: list[str]) -> None:
    """Every id given is 4 to 12 lowercase hex characters (else: usage error)."""
    for value in given:
        if not _PREFIX.fullmatch(value):
            raise UsageError(f"not a letter id: {value!r} (ids are 12 lowercase hex characters, "
                             f"or a unique prefix of at least {MIN_PREFIX})")


def resolve_ids(run: Run, given: list[str], force: bool = False) -> Resolved:
    """Expand every id or prefix to the one letter id it names.

    Not hex or shorter than 4: usage error.  A prefix several letters share: usage
    error listing them.  No letter has it: not found (exit 3), unless `force` and the
    id is a full 12-hex id, which is then written as given.
    """
    check_given(given)
    found = union_matching(run, tuple(given))
    ids: list[str] = []
    for value in given:
        matches = sorted(lid for lid in found if lid.startswith(value))
        if len(matches) > 1:
            raise UsageError(f"ambiguous id prefix {value!r}: {', '.join(matches)}")
        if matches:
            ids.append(matches[0])
        elif force and len(value) == 12:
            ids.append(value)
        else:
            hint = "" if len(value) < 12 else " (--force writes it all the same)"
            raise NotFound(f"no letter has the id {value!r} in the spool or any reachable box{hint}")
    first = found.get(ids[0]) if ids else None
    return Resolved(ids, first)
