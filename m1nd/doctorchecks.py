"""`m1nd doctor`'s own checks (contract section 8): what a diagnosis gathers of the
spool and the boxes (`SpoolFacts`, `BoxFacts`, from the read model or the files), and
the spool, boxes, roster, pending and held checks that judge it.  doctor.py gathers
the facts and runs these with the checks of git, ids and cases."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from m1nd.checks import ERROR, OK, WARN, Check
from m1nd.run import Run
from m1nd.words import plural


def _lines_named(numbers: list[int] | tuple[int, ...]) -> str:
    shown = ", ".join(str(n) for n in numbers[:5])
    more = f" and {len(numbers) - 5} more" if len(numbers) > 5 else ""
    return f"line{'s' if len(numbers) > 1 else ''} {shown}{more}"


@dataclass(frozen=True)
class SpoolFacts:
    """What doctor needs of the spool, from the read model or from the file."""

    letters: int  # letter lines, missions included
    malformed: list[int]
    unfinished_tail: int | None
    misdelivered_days: dict[str, int]  # first 10 characters of ts -> distinct misdelivery letters (no missions)
    held: list[tuple[int, str, str, str, str]]  # (line, id, kind, repo, class)
    answered: object  # ids some spool letter answers (a set, or a callable giving one)


@dataclass(frozen=True)
class BoxFacts:
    label: str
    path: str
    problem: str | None  # refused / unreadable: the message
    malformed: list[int]
    conflicts: list[int]
    unfinished_tail: int | None
    held: tuple = ()  # (line, id, kind) of each line carrying a likely secret (a project box's only)


def _spool_check(run: Run, spool: SpoolFacts | None, error: str | None) -> Check:
    if error:
        if os.path.isdir(run.paths.spool):
            fix = (f"rmdir {shlex.quote(run.paths.spool)} (if it is empty), or point m1nd at the spool file "
                   f"with --spool PATH or M1ND_SPOOL")
        else:
            fix = f"chmod u+r {shlex.quote(run.paths.spool)}"
        return Check("spool", ERROR, error, fix)
    assert spool is not None
    problems = []
    if spool.malformed:
        problems.append(
            f"{plural(len(spool.malformed), 'malformed line')} "
            f"({_lines_named(spool.malformed)}) are skipped, never filed"
        )
    if spool.unfinished_tail:
        problems.append(f"line {spool.unfinished_tail} is an unfinished tail (a writer may be mid-append)")
    if problems:
        return Check("spool", WARN, f"{run.paths.spool}: " + "; ".join(problems))
    if not os.path.exists(run.paths.spool):
        return Check("spool", OK, f"no spool yet at {run.paths.spool}")
    return Check("spool", OK, f"{plural(spool.letters, 'letter')} in {run.paths.spool}")


def _boxes_check(boxes: list[BoxFacts]) -> Check:
    errors, warnings, read = [], [], 0
    for box in boxes:
        if box.problem:
            errors.append(box.problem)
            continue
        read += 1
        if box.malformed:
            warnings.append(f"{box.label}: {len(box.malformed)} malformed ({_lines_named(box.malformed)})")
        if box.conflicts:
            warnings.append(f"{box.label}: conflict markers at {_lines_named(box.conflicts)}")
        if box.unfinished_tail:
            warnings.append(f"{box.label}: torn last line {box.unfinished_tail}")
    if errors:
        return Check("boxes", ERROR, "; ".join(errors + warnings),
                     "replace the symlink or odd file with a real one, then: m1nd distribute")
    if warnings:
        return Check("boxes", WARN, "; ".join(warnings))
    return Check("boxes", OK, f"{plural(read, 'box', 'boxes')} {'parses' if read == 1 else 'parse'}")


def _roster_check(run: Run) -> Check:
    if run.setup_problems:  # the real roster is unknown: nothing else here can be trusted
        return Check("roster", ERROR, "; ".join(run.setup_problems),
                     f"repair or remove {shlex.quote(run.paths.roster)} (m1nd roster add PATH rebuilds it)")
    notes, fix = [], ""
    for root in run.roots.unreachable:
        if root.refused:  # never filed into (mailbox.md section 1)
            notes.append(f"{root.path} is refused: {root.refused}")
        else:
            notes.append(f"{root.path} is unreachable")
        fix = fix or f"m1nd roster remove {shlex.quote(root.path)}"
    for key, roots in sorted(run.roots.ambiguous.items()):
        notes.append(f"label {key!r} is ambiguous ({', '.join(r.path for r in roots)}): its letters wait")
        fix = fix or f"m1nd roster remove {shlex.quote(roots[-1].path)}, or rename one of the two directories"
    if notes:
        return Check("roster", WARN, "; ".join(notes), fix)
    return Check("roster", OK, f"{plural(len(run.roots.roots), 'root')}, all reachable, labels unique")


def _pending_check(pending: tuple[str, ...], count: int, ambiguous: dict | None = None) -> Check:
    if not pending:
        return Check("pending", OK, "no letter waits for an unknown repository")
    names = ", ".join(pending)
    message = f"{plural(count, 'letter')} {'waits' if count == 1 else 'wait'} in the spool for: {names}"
    shared = [name for name in pending if (ambiguous or {}).get(name.lower())]
    if shared:  # more roots would not help: one of the two must go (or be renamed)
        roots = ambiguous[shared[0].lower()]
        message += f" ({shared[0]!r} is the label of {' and '.join(r.path for r in roots)})"
        return Check("pending", WARN, message,
                     f"m1nd roster remove {shlex.quote(roots[-1].path)}, or rename one of the two directories")
    return Check("pending", WARN, message, "m1nd roster add PATH-OF-REPO")


def _held_check(spool: SpoolFacts | None, boxes: list[BoxFacts] = ()) -> Check:
    if spool is None:
        return Check("held", OK, "the spool cannot be read")
    held = spool.held
    in_boxes = [(b.label, h) for b in boxes for h in b.held]
    answered = spool.answered() if callable(spool.answered) else spool.answered
    if in_boxes:  # arrived by git (or filed before the rules knew it): already published with the box
        named = "; ".join(f"{label} line {h[0]} (id {h[1]}, {h[2]})" for label, h in in_boxes[:5])
        more = f" and {len(in_boxes) - 5} more" if len(in_boxes) > 5 else ""
        spooled = _held_check(spool)
        also = "; " + spooled.message if held else ""
        if all(h[1] in answered for _, h in in_boxes) and spooled.status == OK:  # answered: no longer news
            return Check("held", OK, f"{plural(len(in_boxes), 'box line')} with a likely secret, all answered, "
                         f"shown as held: {named}{more}{also}")
        return Check("held", WARN, f"{plural(len(in_boxes), 'box line')} with a likely secret, shown as held: "
                     f"{named}{more}{also}",
                     "a box is committed: treat the secret as published, rotate it, then m1nd answer ID "
                     "--what 'rotated'")
    if not held:
        return Check("held", OK, "no letter carries a likely secret")
    # A held letter answered by a later letter has been replaced: still held, no longer news.
    waiting = [h for h in held if h[1] not in answered]
    named = "; ".join(f"line {h[0]} (id {h[1]}, {h[2]})" for h in held[:5])
    more = f" and {len(held) - 5} more" if len(held) > 5 else ""
    if not waiting:
        return Check("held", OK, f"{plural(len(held), 'held letter')}, all replaced: {named}{more}")
    _, lid, _, repo, klass = waiting[0]
    same = "".join(f" {flag} {shlex.quote(value)}" for flag, value in (("--repo", repo), ("--class", klass)) if value)
    what_else = " or oversized" if any(h[2] == "oversized" for h in held) else ""
    return Check(
        "held", WARN,
        f"{plural(len(held), 'letter')} with a likely secret{what_else}, never filed into a project box: "
        f"{named}{more}",
        f"m1nd write --what 'REDACTED VERSION'{same} && m1nd answer {lid} --what 'replaced by a redacted letter'",
    )
