"""Letters by id through the digest index (m1nd/readmodel/idspan.py).

The read model keeps no index of ids: an id is the first six bytes of a digest in
lowercase hex, so the letters of an id or of an id prefix are one range of digests.
The oracle is the definition itself, applied in Python to every digest stored.
"""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings, strategies as st

from m1nd.readmodel import store
from m1nd.readmodel.idspan import SPANS_PER_QUERY, id_span, prefix_span, rows_with_ids
from m1nd.readmodel.rows import INSERT_LETTER, letter_row

# Digests crowd around a few six-byte ids (shared ids), and the edges of the byte range.
_heads = st.sampled_from([b"\x00" * 6, b"\xff" * 6, b"\x0f\xbb\x75\xa2\x9a\x8f", b"\x12\x34\x56\x78\x9a\xbc"])
_tails = st.sampled_from([b"\x00" * 26, b"\xff" * 26]) | st.binary(min_size=26, max_size=26)
_digests = st.one_of(st.binary(min_size=32, max_size=32), st.builds(lambda h, t: h + t, _heads, _tails))


def _model(digests) -> sqlite3.Connection:
    con = store.open_memory()  # the read model's own settings (no automatic indexes)
    con.executemany(INSERT_LETTER, [letter_row(d, {"ts": "2026-05-01T10:00:00Z", "what": d.hex()}, 1, "")
                                    for d in digests])
    return con


def _ids_of(digests) -> list[str]:
    return [d[:6].hex() for d in digests]


_asked = st.one_of(
    st.text(alphabet="0123456789abcdef", min_size=12, max_size=12),
    st.text(alphabet="0123456789abcdefABCDEF", min_size=10, max_size=14),
    st.text(max_size=16),
    st.sampled_from(["", "0" * 12, "f" * 12, "F" * 12, "0fbb75a29a8f", "0FBB75A29A8F", "0fbb75a29a8f0", None, 12]),
)


@settings(max_examples=150, deadline=None)
@given(digests=st.lists(_digests, max_size=40, unique=True), asked=st.lists(_asked, max_size=12), data=st.data())
def test_the_letters_of_any_ids_are_exactly_those_whose_digest_starts_with_them(digests, asked, data):
    con = _model(digests)
    # ids the mailbox holds are asked too, with whatever else a letter's answers can name
    asked = asked + data.draw(st.lists(st.sampled_from(_ids_of(digests) or ["0" * 12]), max_size=8))
    got = sorted(r[0] for r in rows_with_ids(con, "l.digest", asked))
    want = sorted(d for d in digests if d[:6].hex() in {a for a in asked if isinstance(a, str)})
    assert got == want


@settings(max_examples=150, deadline=None)
@given(digests=st.lists(_digests, max_size=40, unique=True),
       prefix=st.text(alphabet="0123456789abcdef", min_size=1, max_size=12) | st.sampled_from(["0", "f", "fff", "0fb"]))
def test_a_prefix_finds_exactly_the_letters_whose_id_starts_with_it(digests, prefix):
    con = _model(digests)
    got = sorted(r[0] for r in con.execute("SELECT digest FROM letters WHERE digest BETWEEN ? AND ?",
                                           prefix_span(prefix)))
    assert got == sorted(d for d in digests if d.hex().startswith(prefix))


def test_what_is_not_twelve_lowercase_hex_digits_is_the_id_of_no_letter():
    for lid in ("0FBB75A29A8F", "0fbb75a29a8", "0fbb75a29a8f0", "0fbb75a29a8g", "", " 0fbb75a29a8f", None, 7, b"0" * 12):
        assert id_span(lid) is None, lid
    for prefix in ("", "0fbb75a29a8f0", "G", "0fB"):
        assert prefix_span(prefix) is None, prefix


def test_ids_past_one_query_are_all_found():
    digests = [bytes([i >> 8, i & 255]) + b"\x00" * 30 for i in range(SPANS_PER_QUERY * 2 + 7)]
    con = _model(digests)
    got = [r[0] for r in rows_with_ids(con, "l.digest", _ids_of(digests))]
    assert sorted(got) == sorted(digests)


def test_ids_asked_by_the_hundred_stay_ranges_of_the_digest_index():
    """Past about 150 spans in one query SQLite preferred a temporary index of every
    letter (17 s at a million letters); the model's connections forbid it."""
    con = store.open_memory()
    digests = [bytes([i >> 8, i & 255]) + b"\x07" * 30 for i in range(SPANS_PER_QUERY)]
    con.executemany(INSERT_LETTER, [letter_row(d, {"what": d.hex()}, 1, "") for d in digests])
    traced: list[str] = []
    con.set_trace_callback(traced.append)
    assert len(list(rows_with_ids(con, "l.digest", _ids_of(digests), "l.mission = 0"))) == SPANS_PER_QUERY
    con.set_trace_callback(None)
    (sql,) = [s for s in traced if s.startswith("WITH")]
    plan = _plan(con, sql)
    assert "SEARCH l USING COVERING INDEX letters_digest (digest>? AND digest<?)" in plan, plan
    assert not any("AUTOMATIC" in step for step in plan), plan


def _plan(con, sql, args=()) -> list[str]:
    return [r[3] for r in con.execute("EXPLAIN QUERY PLAN " + sql, args)]


def test_letters_by_id_are_ranges_of_the_digest_index_never_a_scan_or_a_temporary_index():
    """Without an index of ids, SQLite may answer an id join by scanning every letter
    or by building an automatic index of them, on every read: the plans say it does not."""
    from m1nd.readmodel import aggregates

    con = _model([])
    con.execute("CREATE TEMP TABLE targets (low BLOB PRIMARY KEY, high BLOB NOT NULL) WITHOUT ROWID")
    plans = {
        "spans": _plan(con, "WITH s(low, high) AS (VALUES (?,?)) SELECT l.id FROM s CROSS JOIN letters l"
                            " ON l.digest BETWEEN s.low AND s.high WHERE l.mission = 0", (b"a", b"b")),
        "targets": _plan(con, "SELECT l.id FROM temp.targets t CROSS JOIN letters l ON " + aggregates._IN_SPAN
                              + " WHERE l.mission = 0"),
        "box targets": _plan(con, "SELECT DISTINCT c.fid FROM temp.targets t CROSS JOIN letters l ON "
                                  + aggregates._IN_SPAN + " CROSS JOIN copies c ON c.digest = l.digest"
                                  " WHERE +c.fid IN (1, 2) AND l.mission = 0"),
    }
    for name, plan in plans.items():
        letters = [step for step in plan if " l " in f" {step} " or "letters" in step]
        assert any("(digest>? AND digest<?)" in step for step in letters), (name, plan)
        assert not any("AUTOMATIC" in step or step.startswith("SCAN l") for step in plan), (name, plan)
        assert not any(step.startswith("SCAN c") for step in plan), (name, plan)


def test_no_read_answers_ids_with_a_scan_or_a_temporary_index(tmp_path):
    """Every statement the reads run (counts of the union and of each box, first and
    brought current, fates, `show`, prefixes) is planned against the real schema: the
    ones that find letters by id use a digest range, and none builds an automatic index."""
    import hashlib

    import orjson

    from m1nd.distribute import distribute
    from m1nd.readmodel import open_model
    from m1nd.run import open_run
    from m1nd.views import make_filters, model_listing

    home, root = tmp_path / "home", tmp_path / "repo-a"
    home.mkdir()
    (root / ".git").mkdir(parents=True)
    spool = home / "field-reports.jsonl"
    ids: list[str] = []

    def write(n: int) -> None:
        with open(spool, "ab") as fh:
            for i in range(n):
                fields = {"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "repo": "repo-a", "what": f"w {len(ids)}"}
                if ids and i % 2:
                    fields.update({"class": "fixed" if i % 4 == 1 else "pickup", "answers": [ids[-1], ids[0].upper()]})
                raw = orjson.dumps(fields)
                ids.append(hashlib.sha256(raw).hexdigest()[:12])
                fh.write(raw + b"\n")

    statements: list[str] = []
    last = None
    for round_ in range(2):
        write(12)
        run = open_run(home=str(home), spool=str(spool), extra_roots=[str(root)], cwd=str(tmp_path))
        distribute(run)
        model = open_model(run)
        model.con.set_trace_callback(statements.append)
        for scope in (None, *model.readable_boxes()):
            model_listing(model, make_filters(state="all"), 20, scope=scope)
        model.by_id(ids[3])
        model.lookup(ids[3][:5])
        model.thread_key(ids[3])
        model.con.set_trace_callback(None)
        last = model
        if round_ == 0:
            model.close()
    try:
        last._load_targets(last.graph())  # the temporary table of answered ids, in this connection too
        asked = {s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))}
        assert any("BETWEEN" in s for s in asked)
        for sql in asked:
            plan = [r[3] for r in last.con.execute("EXPLAIN QUERY PLAN " + sql)]
            assert not any("AUTOMATIC" in step for step in plan), (sql, plan)
            if "BETWEEN" in sql and "letters" in sql:
                assert any("(digest>? AND digest<?)" in step for step in plan), (sql, plan)
                if "copies c" in sql:  # each answered letter's copies, by digest: never the file's copies per id
                    assert any(step.startswith("SEARCH c USING COVERING INDEX copies_digest") for step in plan), plan
    finally:
        last.close()
