"""A generation names one committed state of a file's part of the read model.

A large read commits as it goes (update.CHUNK_LINES). What is kept by generation (the
read model's counts, `m1nd serve`'s answers) may be computed by another process
between two of those commits; if the later commits carried the same generation, that
value would pass for the whole file's forever (the counts of `m1nd box` stayed at the
first chunk's; the server kept a box document of part of its box)."""

from __future__ import annotations

import os
import sqlite3
import tempfile

import orjson

from m1nd.readmodel import BOX, Source, open_model, update
from m1nd.readmodel.store import db_path
from tests.test_readmodel import REPOS, World


def test_each_commit_of_a_large_read_leaves_its_file_at_a_new_generation(tmp_path, monkeypatch):
    world = World(tempfile.mkdtemp(dir=tmp_path))
    open_model(world.run()).close()  # the model exists; the box is read by the next open
    box = world.box(0)
    world.append(box, b"".join(orjson.dumps({"ts": "2026-05-01T09:00:00Z", "repo": REPOS[0], "what": f"letter {i}"})
                               + b"\n" for i in range(40)))
    monkeypatch.setattr(update, "BATCH", 2)
    monkeypatch.setattr(update, "CHUNK_LINES", 4)
    seen = {}  # (gen, lines) of the box's row, as another process reads them between commits
    real_flush = update._flush

    def flush_watched(*args, **kwargs):
        with sqlite3.connect(f"file:{db_path(os.path.join(world.home, 'state'))}?mode=ro", uri=True) as other:
            row = other.execute("SELECT f.gen, f.lines, (SELECT count(*) FROM copies c WHERE c.fid = f.fid)"
                                " FROM files f WHERE f.path = ?", (update.path_key(box),)).fetchone()
        if row is not None:
            seen.setdefault(row[0], set()).add(row[1:])
        return real_flush(*args, **kwargs)

    monkeypatch.setattr(update, "_flush", flush_watched)
    model = open_model(world.run())
    try:
        final = model.con.execute("SELECT gen, lines FROM files WHERE path = ?", (update.path_key(box),)).fetchone()
        gens = sorted({r[0] for r in model.con.execute(
            "SELECT c.gen FROM copies c JOIN files f ON f.fid = c.fid WHERE f.path = ?", (update.path_key(box),))})
    finally:
        model.close()
    assert final[1] == 40
    partial = {gen: states for gen, states in seen.items() if any(lines < 40 for lines, _ in states)}
    assert len(partial) >= 3  # the read did commit as it went, seen from outside
    assert all(len(states) == 1 for states in seen.values())  # one generation, one committed state
    assert final[0] not in partial  # the whole file's generation is none of its parts'
    assert len(gens) >= 3  # later lines carry later generations


def test_counts_kept_between_the_commits_of_another_read_are_brought_current(tmp_path, monkeypatch):
    world = World(tempfile.mkdtemp(dir=tmp_path))
    world.append(world.box(0), orjson.dumps({"ts": "2026-05-01T08:00:00Z", "repo": REPOS[0], "what": "first"}) + b"\n")
    open_model(world.run()).close()
    world.append(world.box(0), b"".join(orjson.dumps({"ts": "2026-05-01T09:00:00Z", "repo": REPOS[0],
                                                      "what": f"letter {i}"}) + b"\n" for i in range(30)))
    monkeypatch.setattr(update, "BATCH", 2)
    monkeypatch.setattr(update, "CHUNK_LINES", 4)
    real_set_row = update._set_row
    state = {"commits": 0, "counted": None}

    def set_row_then_count(con, fid, st, offset, lines, hashes, tail, gen, *rest):
        real_set_row(con, fid, st, offset, lines, hashes, tail, gen, *rest)
        if not rest and tail is None and lines > 1 and state["counted"] is None:
            state["commits"] += 1
            if state["commits"] == 2:  # a reader counts the box as the second commit will leave it
                con.execute("COMMIT")
                run = world.run()
                reader = open_model(run, only=run.boxes()[2])  # another box: this one is being read
                try:
                    box = run.boxes()[1]
                    source = Source(BOX, box.label, box.path, box, fid, None)
                    state["counted"] = reader.counts(source)["total"]
                finally:
                    reader.close()
                con.execute("BEGIN IMMEDIATE")

    monkeypatch.setattr(update, "_set_row", set_row_then_count)
    first = open_model(world.run())
    first.close()
    monkeypatch.setattr(update, "_set_row", real_set_row)
    assert state["counted"] is not None and state["counted"] < 31
    after = open_model(world.run())
    try:
        source = next(s for s in after.boxes if s.path == world.box(0))
        assert after.counts(source)["total"] == 31
    finally:
        after.close()
