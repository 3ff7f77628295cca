"""The union sweep and the `m1nd-inbox-sweep-v0` document (contract section 6).

The union is the spool plus every reachable box, each id once.  Fates come from the
reply graph over that union.  With `distribute=False` nothing is written anywhere.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from m1nd.boxes import Box, Refused, read_box
from m1nd.distribute import BoxProblem, Receipt, distribute
from m1nd.errors import M1ndError
from m1nd.fsutil import gc_paused
from m1nd.fates import OPEN_STATES, ReplyGraph, reply_graph
from m1nd.letters import Letter, read_file
from m1nd.run import Run

SCHEMA = "m1nd-inbox-sweep-v0"
MISDELIVERY = "memory_misdelivery"


def letter_view(letter: Letter, graph: ReplyGraph) -> dict:
    """A letter as the v0 document (and `m1nd box --json`) shows it."""
    return {
        "id": letter.id,
        "ts": letter.ts,
        "agent": letter.agent,
        "class": letter.klass,
        "repo": letter.repo,
        "brain": letter.brain,
        "tool": letter.tool,
        "what": letter.what,
        "expected": letter.expected,
        "snippet": letter.snippet,
        "answers": list(letter.answers),
        "answered_by": graph.answers_to(letter.id),
        "state": graph.state(letter),
    }


@dataclass(frozen=True)
class BoxRead:
    box: Box
    ids: frozenset[str]  # digests of the letters of this box, missions left out
    malformed: tuple[int, ...]


@dataclass(frozen=True)
class Sweep:
    doc: dict
    receipt: Receipt | None
    letters: dict[str, Letter]  # the union by full digest (hex), missions left out, in no particular order
    graph: ReplyGraph
    boxes: tuple[BoxRead, ...]
    problems: tuple[BoxProblem, ...]  # refused or unreadable boxes
    spool_malformed: tuple[int, ...]
    run: Run | None = None  # the run it was read in (the held rule asks where a letter goes)

    @property
    def failed(self) -> bool:
        return bool(self.problems)


def sweep(run: Run, distribute_first: bool = True, progress=None) -> Sweep:
    with gc_paused():
        return _sweep(run, distribute_first, progress)


def _sweep(run: Run, distribute_first: bool, progress) -> Sweep:
    receipt = None
    if distribute_first:  # cases.md 2: escalation at the second witness, by filing commands only
        from m1nd.cases.escalation import after_distribution

        receipt = after_distribution(run, distribute(run, progress=progress))
    union: dict[bytes, Letter] = {}
    try:
        spool = read_file(run.paths.spool)
    except (IsADirectoryError, PermissionError, OSError) as exc:
        raise M1ndError(f"cannot read spool {run.paths.spool}: {exc.strerror}") from None
    sha256 = hashlib.sha256
    known: dict[str, Letter] = {}  # by id, to skip parsing a box line the spool has (bytes compared)
    for _, letter in spool.letters:
        union.setdefault(sha256(letter.raw).hexdigest(), letter)
        known.setdefault(letter.id, letter)

    problems: list[BoxProblem] = list(receipt.problems) if receipt else []
    reported = {p.path for p in problems}
    reads: list[BoxRead] = []
    for box in run.boxes():
        # A box that could not be written (disk full, read-only) can still be read:
        # its letters from other machines belong in the union.
        try:
            found = read_box(box, known)
        except Refused as exc:
            if box.path not in reported:
                problems.append(BoxProblem(box.label, box.path, str(exc)))
            continue
        except OSError as exc:
            if box.path not in reported:
                problems.append(BoxProblem(box.label, box.path, f"cannot read {box.path}: {exc.strerror}"))
            continue
        ids = set()
        for _, letter in found.letters:
            digest = sha256(letter.raw).hexdigest()
            if not letter.is_mission:
                ids.add(digest)
            union.setdefault(digest, letter)
        reads.append(BoxRead(box, frozenset(ids), tuple(found.malformed)))

    for key in [key for key, l in union.items() if l.kind == "mission"]:
        del union[key]
    letters = union  # missions left out; the document lists them by id
    graph = reply_graph(letters.values(), run.markers)
    # Ascending id; two letters sharing an id (a 48-bit prefix) both appear, by digest.
    views = [letter_view(letters[d], graph) for d in sorted(letters, key=lambda d: (letters[d].id, d))]
    doc = {
        "schema": SCHEMA,
        "spool_path": run.paths.spool,
        "distribution": receipt.as_json() if receipt else None,
        "total": len(views),
        "open": sum(1 for v in views if v["state"] in OPEN_STATES),
        "misdelivery": sum(1 for l in letters.values() if l.klass == MISDELIVERY),
        "unreachable": sorted({r.label for r in run.roots.unreachable}),
        "letters": views,
    }
    return Sweep(doc, receipt, letters, graph, tuple(reads), tuple(problems), tuple(spool.malformed), run)


# -- the document from the read model ------------------------------------------------


def _nested(value, level: int) -> bytes:
    """`value` as the document shows it `level` indents deep (no leading indent)."""
    from m1nd import jsonout

    return jsonout.dumps(value)[:-1].replace(b"\n", b"\n" + b"  " * level)


# A block's views are alive together: its size adapts so that a block of big letters
# (64 KB each, thousands of answers) stays a few megabytes, not 4,096 of them.
BLOCK_VIEWS = 4096
BLOCK_BYTES = 4 << 20


def write_views(out, views) -> bool:
    """Stream letter views as the elements of the document's indented `letters`
    array, up to BLOCK_VIEWS at a time (the caller writes the brackets); True when any
    was written.

    Each block is one orjson call over `{"letters": [...]}`, whose indented output
    holds the views exactly as deep as the document does: its brackets are cut off.
    The first block holds 64 views; each next one grows fourfold while blocks stay
    under BLOCK_BYTES and shrinks to fit when one goes over."""
    import orjson

    opts = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    dumps = orjson.dumps
    head, tail = len(b'{\n  "letters": ['), len(b"\n  ]\n}")
    block = []
    size = 64
    first = True

    def flush():
        nonlocal first, size
        written = dumps({"letters": block}, option=opts)[head:-tail]
        out.write(written if first else b"," + written)
        first = False
        if len(written) > BLOCK_BYTES:
            size = max(1, size * BLOCK_BYTES // len(written))
        elif len(written) * 4 <= BLOCK_BYTES:
            size = min(size * 4, BLOCK_VIEWS)

    # A block keeps its views alive: with the collector on, its passes over them took
    # a third of a million-letter document and found nothing (views hold no cycles).
    with gc_paused():
        for view in views:
            block.append(view)
            if len(block) >= size:
                flush()
                block = []
        if block:
            flush()
    return not first


# The columns of `letters` the document shows, in its (sorted) key order but `answered_by` and `state`.
_DOC_COLS = "l.agent, l.answers, l.brain, l.class, l.expected, l.id, l.repo, l.snippet, l.tool, l.ts, l.what"


def write_document(run: Run, model, receipt: Receipt | None, out) -> dict:
    """Stream the v0 document to the binary stream `out`, letters in id order as they
    come from the read model: memory stays flat in the number of letters.  The bytes
    are those of `jsonout.dumps(doc)`.  Returns the counts it wrote."""
    import orjson

    # Every letter's fate is asked: the whole graph at once, not a lookup per letter.
    graph = model.graph().whole()
    fate = graph.fate
    answered_by = graph.answered_by
    loads = orjson.loads
    out.write(b'{\n  "distribution": ' + _nested(receipt.as_json() if receipt else None, 1) + b',\n  "letters": [')
    total = open_count = misdelivery = 0

    def views():
        nonlocal total, open_count, misdelivery
        for agent, answers, brain, klass, expected, lid, repo, snippet, tool, ts, what in \
                model.letter_columns(_DOC_COLS):
            state = fate(lid, tool)
            total += 1
            if state in OPEN_STATES:
                open_count += 1
            if klass == MISDELIVERY:
                misdelivery += 1
            # the keys in sorted order, as jsonout writes them
            yield {"agent": agent, "answered_by": answered_by.get(lid, ()),  # () is written as []
                   "answers": loads(answers) if answers else [], "brain": brain, "class": klass,
                   "expected": expected, "id": lid, "repo": repo, "snippet": snippet, "state": state,
                   "tool": tool, "ts": ts, "what": what}

    write_views(out, views())
    out.write(b"\n  ]," if total else b"],")
    rest = {
        "misdelivery": misdelivery,
        "open": open_count,
        "schema": SCHEMA,
        "spool_path": run.paths.spool,
        "total": total,
        "unreachable": sorted({r.label for r in run.roots.unreachable}),
    }
    body = _nested(rest, 0)  # "{\n  ...\n}": keep the lines inside the braces
    out.write(b"\n" + body[2:-2] + b"\n}\n")
    return rest
