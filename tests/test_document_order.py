"""The v0 document read front to back: a first build stores the letters in digest
order (ids are digest prefixes, so the document's id order reads the table in
order), letters indexed later follow them, and the document is written in blocks of
views whose bytes are those of the document written whole."""

from __future__ import annotations

import hashlib
import io
import os
import sqlite3

import orjson
import pytest

from m1nd import jsonout
from m1nd.readmodel import open_model, store
from m1nd.run import open_run
from m1nd.sweep import sweep, write_document, write_views


def letters(n: int, start: int = 0) -> bytes:
    out = []
    for i in range(start, start + n):
        letter = {"ts": f"2026-03-{1 + i % 28:02d}T10:{i % 60:02d}:00Z", "agent": f"agent-{'ab'[i % 2]}",
                  "class": "BUG", "repo": "", "tool": "north", "what": f"seek returned a deleted node, case {i}"}
        out.append(orjson.dumps(letter) + b"\n")
    return b"".join(out)


def rows_in_table_order(db: str) -> list[bytes]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [r[0] for r in con.execute("SELECT digest FROM letters ORDER BY rowid")]
    finally:
        con.close()


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return home


def open_home(home):
    return open_run(home=str(home), spool=str(home / "field-reports.jsonl"), cwd=str(home))


def test_a_first_build_stores_its_letters_in_digest_order_and_letters_indexed_later_after_them(home):
    spool = home / "field-reports.jsonl"
    spool.write_bytes(letters(300))
    model = open_model(open_home(home))
    model.close()
    db = store.db_path(str(home / "state"))
    built = rows_in_table_order(db)
    assert len(built) == 300 and built == sorted(built)
    expected = sorted(hashlib.sha256(line).digest() for line in letters(300).splitlines())
    assert built == expected

    with open(spool, "ab") as fh:
        fh.write(letters(40, start=300))
    model = open_model(open_home(home))
    model.close()
    grown = rows_in_table_order(db)
    assert grown[:300] == built  # an update adds rows; it does not sort the table again
    assert sorted(grown[300:]) == sorted(hashlib.sha256(l).digest() for l in letters(40, start=300).splitlines())


def test_the_document_from_a_clustered_table_grown_later_equals_the_document_from_the_files(home):
    spool = home / "field-reports.jsonl"
    spool.write_bytes(letters(200))
    open_model(open_home(home)).close()  # the first build, clustered
    reply = {"ts": "2026-03-30T09:00:00Z", "agent": "agent-c", "class": "triage", "what": "fixed in abc123",
             "answers": [hashlib.sha256(letters(1).rstrip(b"\n")).hexdigest()[:12]]}
    with open(spool, "ab") as fh:
        fh.write(letters(50, start=200) + orjson.dumps(reply) + b"\n")
    run = open_home(home)
    model = open_model(run)
    try:
        out = io.BytesIO()
        write_document(run, model, None, out)
    finally:
        model.close()
    want = jsonout.dumps(sweep(run, distribute_first=False).doc)
    assert out.getvalue() == want
    assert b'"state": "fired_clay"' in want


def test_a_table_with_no_room_for_its_sorted_copy_stays_as_it_was(home):
    """SQLite refuses the copy (the database may not grow): the table is left as it
    was, whole, and the same call with room sorts it."""
    (home / "field-reports.jsonl").write_bytes(letters(400))
    open_model(open_home(home)).close()
    con = store.connect(store.db_path(str(home / "state")))
    try:
        con.execute("UPDATE letters SET rowid = -rowid")  # stored in reverse digest order
        con.execute("VACUUM")  # no free page left for the copy to take
        shuffled = [r[0] for r in con.execute("SELECT digest FROM letters ORDER BY rowid")]
        assert shuffled == sorted(shuffled, reverse=True) and len(shuffled) == 400
        assert con.execute("PRAGMA freelist_count").fetchone()[0] == 0
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {pages + 2}")
        store.cluster_letters(con)
        assert not con.in_transaction
        assert [r[0] for r in con.execute("SELECT digest FROM letters ORDER BY rowid")] == shuffled
        assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'letters_sorted'").fetchone()[0] == 0
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.execute(f"PRAGMA max_page_count = {1 << 30}")
        store.cluster_letters(con)
        assert [r[0] for r in con.execute("SELECT digest FROM letters ORDER BY rowid")] == sorted(shuffled)
    finally:
        con.close()


def view(i: int) -> dict:
    """Views of every shape the document holds: nested lists, text that needs escaping,
    and a held letter's few keys."""
    if i % 7 == 3:
        return {"id": f"{i:012x}", "ts": "2026-03-01T10:00:00Z", "state": "wet_ink", "held": "token"}
    return {"agent": "agent-\u00e9", "answered_by": [f"{j:012x}" for j in range(i % 3)], "answers": [],
            "brain": "", "class": "BUG", "expected": 'a "quoted"\nline\tand \\', "id": f"{i:012x}",
            "repo": "repo-a", "snippet": "x" * (i % 5), "state": "in_flight", "tool": "north",
            "ts": "2026-03-01T10:00:00Z", "what": f"letter {i}"}


@pytest.mark.parametrize("n", [0, 1, 2, 4095, 4096, 4097, 8193])
def test_views_written_in_blocks_are_the_bytes_of_the_document_written_whole(n):
    views = [view(i) for i in range(n)]
    out = io.BytesIO()
    out.write(b'{\n  "letters": [')
    written = write_views(out, iter(views))
    out.write(b"\n  ]\n}\n" if written else b"]\n}\n")
    assert written == (n > 0)
    assert out.getvalue() == jsonout.dumps({"letters": views})


def test_a_document_of_more_letters_than_one_block_equals_the_document_from_the_files(home):
    (home / "field-reports.jsonl").write_bytes(letters(4096 + 37))
    run = open_home(home)
    model = open_model(run)
    try:
        out = io.BytesIO()
        counts = write_document(run, model, None, out)
    finally:
        model.close()
    assert counts["total"] == 4096 + 37
    assert out.getvalue() == jsonout.dumps(sweep(run, distribute_first=False).doc)
    assert os.path.isfile(store.db_path(str(home / "state")))


def test_newest_first_views_filter_from_the_index_and_an_older_model_gets_it_at_open(home):
    """The newest-first index carries mission and reply (a box's newest letters are found
    without reading every skipped letter from the table); a model made before it had
    `letters_newest` without them: opened, it has the new index and lists the same."""
    from m1nd.views import model_listing
    from m1nd.viewdata import make_filters

    (home / "field-reports.jsonl").write_bytes(letters(120))
    run = open_home(home)

    def listing():
        model = open_model(run)
        try:
            got = model_listing(model, make_filters(state="all"), 10)
            plan = " ".join(r[3] for r in model.con.execute(
                "EXPLAIN QUERY PLAN SELECT l.id FROM letters l WHERE l.mission = 0 AND l.reply = 0"
                " ORDER BY l.sortkey DESC, l.id DESC, l.digest DESC"))
            names = {r[0] for r in model.con.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
            return [(s.letter.id, s.state) for s in got.shown], got.matched, plan, names
        finally:
            model.close()

    fresh = listing()
    assert "letters_recent" in fresh[2] and "letters_recent" in fresh[3] and "letters_newest" not in fresh[3]
    con = store.connect(store.db_path(str(home / "state")))
    con.execute("DROP INDEX letters_recent")
    con.execute("CREATE INDEX letters_newest ON letters (sortkey, id, digest)")
    con.close()
    upgraded = listing()
    assert "letters_newest" not in upgraded[3] and "letters_recent" in upgraded[3]
    assert upgraded == fresh and len(fresh[0]) == 10 and fresh[1] == 120


def test_a_spool_that_is_the_medulla_boxs_file_counts_its_answered_letters_as_the_files_do(home):
    """The spool and the medulla box may be one file (`M1ND_SPOOL=<home>/inbox.jsonl`):
    the sweep's table from the read model equals the table from the files, answered
    letters included (they were dropped with the spool's when the two shared a file)."""
    from m1nd.cli import render
    from m1nd.viewdata import make_filters
    from m1nd.views import files_sweep_listing, model_listing

    spool = home / "inbox.jsonl"
    body = letters(30)
    ids = [hashlib.sha256(line).hexdigest()[:12] for line in body.splitlines()]
    replies = [{"ts": "2026-03-30T09:00:00Z", "agent": "agent-c", "class": "triage", "what": "fixed",
                "answers": ids[:4]},
               {"ts": "2026-03-30T09:05:00Z", "agent": "agent-c", "class": "pickup", "what": "on it",
                "answers": ids[4:7]}]
    spool.write_bytes(body + b"".join(orjson.dumps(r) + b"\n" for r in replies))
    run = open_run(home=str(home), spool=str(spool), cwd=str(home))
    filters = make_filters()
    want = files_sweep_listing(sweep(run, distribute_first=False), filters, 5)
    model = open_model(run)
    try:
        got = model_listing(model, filters, 5)
    finally:
        model.close()
    assert [(label, counts) for label, counts in got.rows] == [(label, counts) for label, counts in want.rows]
    medulla = dict(got.rows)[next(label for label, _ in got.rows)]
    assert medulla["fired_clay"] == 4 and medulla["in_flight"] == 3, got.rows

    def shown(listing):
        out = io.StringIO()
        render.sweep_view(listing, listing.totals, out)
        return out.getvalue()
    assert shown(got) == shown(want)


def test_views_are_written_with_the_collector_paused_and_it_is_on_again_after_even_when_a_view_fails():
    """A block keeps thousands of views alive; the collector's passes over them found
    nothing and cost a third of a large document.  The server writes documents too, so
    the collector must be on again afterwards, however the writing ended."""
    import gc

    seen = []

    def views(fail: bool):
        for i in range(5000):
            seen.append(gc.isenabled())
            yield view(i)
        if fail:
            raise OSError("the reader went away")

    assert gc.isenabled()
    assert write_views(io.BytesIO(), views(False))
    assert gc.isenabled() and seen and not any(seen)
    seen.clear()
    with pytest.raises(OSError):
        write_views(io.BytesIO(), views(True))
    assert gc.isenabled() and len(seen) == 5000 and not any(seen)


def test_indexing_runs_with_the_collector_paused_and_leaves_it_on(home, monkeypatch):
    import gc

    from m1nd.readmodel import opening

    states = []
    real = opening.refresh_file

    def watched(*args, **kwargs):
        states.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(opening, "refresh_file", watched)
    (home / "field-reports.jsonl").write_bytes(letters(50))
    run = open_home(home)
    open_model(run).close()
    assert states and not any(states) and gc.isenabled()


def test_threads_writing_documents_at_once_never_pause_the_collector_or_leave_it_off():
    """The server writes documents from many threads.  Pausing there raced: one thread
    read "off" during another's pause and turned it off for good (found after about
    150,000 requests under load).  Only the main thread pauses it."""
    import gc
    import threading

    seen_off = []

    def views():
        for i in range(300):
            if not gc.isenabled():
                seen_off.append(i)
            yield view(i)

    def writer():
        for _ in range(40):
            write_views(io.BytesIO(), views())

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled() and seen_off == []
    # the main thread still pauses it, and turns it on again
    states = []
    write_views(io.BytesIO(), (states.append(gc.isenabled()) or view(i) for i in range(10)))
    assert states == [False] * 10 and gc.isenabled()
