"""Counts and doctor's facts kept current from what is new (m1nd/readmodel/tally.py,
ReadModel._grown) equal the ones
computed from the files alone, after any sequence of spool appends, distributions,
boxes extended, replaced and rewritten by git, replies before and after their
letters, and the state deleted; and a read after new letters does not count the
whole mailbox again."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap

import orjson
from hypothesis import given
from hypothesis import strategies as st

from m1nd.readmodel import ReadModel, open_model, store
from test_readmodel import SETTINGS, World, apply

OPS = st.sampled_from(["spool", "spool", "spool", "spool", "distribute", "foretell", "arrive", "arrive", "spool-junk", "torn-tail",
                       "finish-tail", "distribute", "distribute", "box-extend", "box-extend", "box-replace",
                       "box-rewrite", "box-conflict", "rm-state"])


def every_count(model) -> dict:
    rows, waiting = model.box_counts()
    return {"union": model.counts(), "boxes": {s.path: c for s, c in rows}, "waiting": waiting,
            "each box alone": {s.path: model.counts(s) for s in model.readable_boxes()},
            # doctor's facts of the spool, kept the same way
            "pairs": model.spool_pairs(), "held": model.held(), "misdelivered": model.spool_misdelivered_days(),
            "held in boxes": {s.path: model.held_in(s) for s in model.readable_boxes()},
            "lines": {s.path: (model.line_count(s), model.line_count(s, missions=False))
                      for s in [model.spool, *model.readable_boxes()]},
            "shared ids": model.shared_ids(), "answered": answered_ids(model)}


def answered_ids(model) -> dict:
    """For every id a letter carries or names in its answers: whether a spool letter answers it."""
    answered = model.spool_answered()
    ids = {r[0] for r in model.con.execute("SELECT id FROM letters")}
    for (answers,) in model.con.execute("SELECT answers FROM letters WHERE answers IS NOT NULL"):
        ids.update(a for a in orjson.loads(answers) if isinstance(a, str))
    return {lid: lid in answered for lid in sorted(ids)}


def kept_counts(world: World) -> dict:
    """Every count as the next command reads it (brought current where it can be)."""
    model = open_model(world.run())
    try:
        return every_count(model)
    finally:
        model.close()


def counts_from_the_files(world: World) -> dict:
    model = ReadModel(world.run(), store.open_memory(), False, [])
    try:
        model.refresh()
        return every_count(model)
    finally:
        model.close()


@SETTINGS
@given(data=st.data())
def test_counts_brought_current_equal_the_counts_computed_from_the_files(tmp_path, data):
    base = tempfile.mkdtemp(dir=tmp_path)
    world = World(base)
    try:
        for _ in range(data.draw(st.integers(2, 12))):
            apply(world, data.draw(OPS), data)
            assert kept_counts(world) == counts_from_the_files(world)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _world_with_letters(tmp_path, n: int) -> World:
    import orjson

    world = World(str(tmp_path / "w"))
    lines = []
    for i in range(n):
        letter = {"ts": f"2026-05-01T09:{i % 60:02d}:00Z", "agent": "agent-a", "class": "bug",
                  "repo": ("repo-a", "repo-b", "all")[i % 3], "tool": "seek", "what": f"letter {i}"}
        lines.append(orjson.dumps(letter) + b"\n")
    world.append(world.spool, b"".join(lines))
    return world


def test_a_read_after_new_letters_and_replies_counts_only_what_is_new(tmp_path, monkeypatch):
    import hashlib

    import orjson

    from m1nd.distribute import distribute

    world = _world_with_letters(tmp_path, 300)
    distribute(world.run())
    kept_counts(world)  # counted once, over the whole mailbox
    first = open(world.spool, "rb").readline().rstrip(b"\n")
    target = hashlib.sha256(first).hexdigest()[:12]
    for klass in ("pickup", "triage"):  # in flight, then answered: the fate of an old letter moves on
        reply = {"ts": "2026-05-02T09:00:00Z", "agent": "agent-b", "class": klass, "repo": "repo-a",
                 "tool": "seek", "what": f"{klass} of the first", "answers": [target]}
        world.append(world.spool, orjson.dumps(reply) + b"\n" + orjson.dumps(dict(reply, what="new")) + b"\n")
        distribute(world.run())

        def whole_mailbox(*args, **kwargs):
            raise AssertionError("counted the whole mailbox again")
        with monkeypatch.context() as m:
            m.setattr(ReadModel, "_count", whole_mailbox)
            m.setattr(ReadModel, "_box_counts_now", whole_mailbox)
            kept = kept_counts(world)
        assert kept == counts_from_the_files(world)
    assert kept["union"]["fired_clay"] == 1 and kept["union"]["total"] == 304


def test_more_new_letters_than_max_new_are_still_brought_current_while_under_a_quarter_of_the_mailbox(
        tmp_path, monkeypatch):
    """Past MAX_NEW new copies, a count is brought current while the new copies are at
    most a quarter of the files' lines (a read after a day of letters in a large
    mailbox); past that the whole mailbox is counted again.  Both equal the files."""
    import orjson

    from m1nd.distribute import distribute
    from m1nd.readmodel import tally

    world = _world_with_letters(tmp_path, 300)
    distribute(world.run())
    kept_counts(world)
    monkeypatch.setattr(tally, "MAX_NEW", 10)
    calls = []
    real_count, real_boxes = ReadModel._count, ReadModel._box_counts_now
    monkeypatch.setattr(ReadModel, "_count", lambda *a: calls.append("count") or real_count(*a))
    monkeypatch.setattr(ReadModel, "_box_counts_now", lambda *a: calls.append("boxes") or real_boxes(*a))
    for many, whole in ((40, False), (600, True)):
        letters = [orjson.dumps({"ts": "2026-05-03T09:00:00Z", "agent": "agent-b", "class": "bug",
                                 "repo": ("repo-a", "repo-b")[i % 2], "tool": "seek", "what": f"new {many} {i}"})
                   for i in range(many)]
        world.append(world.spool, b"\n".join(letters) + b"\n")
        distribute(world.run())
        calls.clear()
        kept = kept_counts(world)
        assert bool(calls) == whole, (many, calls)
        assert kept == counts_from_the_files(world)


def test_two_letters_sharing_an_id_are_each_brought_current_as_the_files_count_them(tmp_path):
    """The id collision fixture's two letters (one 12-hex id, two digests), new since
    the last count, then answered by one receipt naming that id: each is counted once,
    both move to answered, as a count from the files says."""
    import orjson

    from m1nd.distribute import distribute
    from test_collisions import ONE, SHARED_ID, TWO

    world = _world_with_letters(tmp_path, 30)
    distribute(world.run())
    kept_counts(world)
    world.append(world.spool, ONE + b"\n" + TWO + b"\n")
    distribute(world.run())
    assert kept_counts(world) == counts_from_the_files(world)
    receipt = {"ts": "2026-05-02T09:00:00Z", "agent": "agent-b", "class": "triage", "repo": "repo-a",
               "tool": "seek", "what": "fixed both", "answers": [SHARED_ID]}
    world.append(world.spool, orjson.dumps(receipt) + b"\n")
    distribute(world.run())
    kept = kept_counts(world)
    assert kept == counts_from_the_files(world)
    assert kept["union"]["fired_clay"] == 2


# Two letters with one 12-hex id, one written by a foreign tool (external) and one not
# (found by a birthday search, as test_collisions.py's pair).
FOREIGN = b'{"ts":"2026-05-01T10:00:00Z","agent":"agent-a","repo":"repo-a","tool":"playwright","what":"probe 26710120"}'
OWN = b'{"ts":"2026-05-01T10:00:00Z","agent":"agent-a","repo":"repo-a","tool":"seek","what":"probe 1758739"}'


def test_two_letters_sharing_an_id_one_external_are_each_counted_with_their_own_fate(tmp_path):
    """The fate of a letter depends on its tool as well as on who answers its id: two
    new letters sharing an id, one external, are brought current each with its own
    (a state kept per id alone counted both open, or both external)."""
    import hashlib

    from m1nd.distribute import distribute

    assert hashlib.sha256(FOREIGN).hexdigest()[:12] == hashlib.sha256(OWN).hexdigest()[:12] == "eab6bfe2795d"
    world = _world_with_letters(tmp_path, 30)
    distribute(world.run())
    kept_counts(world)
    world.append(world.spool, FOREIGN + b"\n" + OWN + b"\n")
    distribute(world.run())
    kept = kept_counts(world)
    assert kept == counts_from_the_files(world)
    box = next(c for path, c in kept["each box alone"].items() if "repo-a" in path)
    assert box["external"] == 1 and box["wet_ink"] == 11


def test_a_letter_answered_before_it_is_filed_keeps_its_fate_when_the_filing_is_counted(tmp_path):
    import hashlib

    import orjson

    from m1nd.distribute import distribute

    world = _world_with_letters(tmp_path, 12)
    first = open(world.spool, "rb").readline().rstrip(b"\n")
    target = hashlib.sha256(first).hexdigest()[:12]
    for klass in ("pickup", "triage"):
        world.append(world.spool, orjson.dumps({"ts": "2026-05-02T09:00:00Z", "agent": "agent-b", "class": klass,
                                                "repo": "repo-a", "tool": "seek", "answers": [target]}) + b"\n")
    kept_counts(world)  # counted once, over the whole mailbox
    distribute(world.run())  # the answered letter and its replies get a second copy each, in a box
    kept = kept_counts(world)
    assert kept == counts_from_the_files(world)
    assert kept["union"]["fired_clay"] == 1


def test_a_box_rewritten_by_git_is_counted_again_from_the_files(tmp_path):
    from m1nd.distribute import distribute

    world = _world_with_letters(tmp_path, 30)
    distribute(world.run())
    kept_counts(world)  # counted once, over the whole mailbox
    box = world.box(0)
    lines = open(box, "rb").read().splitlines(keepends=True)
    tmp = box + ".new"
    with open(tmp, "wb") as fh:  # a checkout of an older commit: fewer letters, a new file
        fh.write(b"".join(lines[:3]))
    os.replace(tmp, box)
    kept = kept_counts(world)
    assert kept == counts_from_the_files(world)


KILLED_READ = textwrap.dedent("""
    import os, sys, time
    from m1nd.readmodel import ReadModel, open_model, tally
    from m1nd.run import open_run
    real = tally.brought_current
    def slow(*args, **kwargs):
        out = real(*args, **kwargs)
        sys.stdout.write("counted\\n"); sys.stdout.flush()
        time.sleep(60)  # killed here, before the counts are stored
        return out
    tally.brought_current = slow
    run = open_run(home=sys.argv[1], spool=sys.argv[2], extra_roots=sys.argv[3:], cwd=sys.argv[1])
    model = open_model(run)
    model.box_counts()
""")


def test_a_read_killed_while_bringing_counts_current_leaves_the_next_one_exact(tmp_path):
    import orjson

    from m1nd.distribute import distribute

    world = _world_with_letters(tmp_path, 40)
    distribute(world.run())
    kept_counts(world)  # counted once, over the whole mailbox
    world.append(world.spool, orjson.dumps({"ts": "2026-05-02T09:00:00Z", "agent": "agent-b", "class": "bug",
                                            "repo": "repo-b", "tool": "seek", "what": "one more"}) + b"\n")
    distribute(world.run())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), *sys.path]))
    proc = subprocess.Popen([sys.executable, "-c", KILLED_READ, world.home, world.spool, *world.roots],
                            stdout=subprocess.PIPE, env=env)
    assert proc.stdout.readline() == b"counted\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = kept_counts(world)
    assert kept == counts_from_the_files(world)
    assert kept["union"]["total"] == 41
