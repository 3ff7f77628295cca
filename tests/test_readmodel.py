"""The read model never changes an answer: every view computed from it equals the
same view computed from the files alone, after any sequence of spool appends, git
arrivals (a box extended, replaced by a checkout, rewritten in place), torn tails,
distribution runs, replies arriving before and after their letters, and the state
deleted or corrupted (hypothesis).

The files-only reference paths are `m1nd.sweep.sweep`, `m1nd.boxview.view_box`,
`m1nd.views.files_*_listing` and `m1nd.doctor.diagnose_files`.
"""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
import tempfile
from datetime import datetime, timezone

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from m1nd import jsonout
from m1nd.boxview import model_box_json, view_box
from m1nd.cli import render
from m1nd.distribute import distribute
from m1nd.doctor import diagnose, diagnose_files
from m1nd.readmodel import open_model, store
from m1nd.run import open_run
from m1nd.sweep import sweep, write_document
from m1nd.views import files_box_listing, files_sweep_listing, make_filters, model_listing

NOW = datetime(2026, 5, 3, 9, 0, tzinfo=timezone.utc)
SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

REPOS = ("repo-a", "repo-b")
TEXTS = ("seek [bold]lost[/bold] a node", "path [/etc/hosts] gone", "esc \x1b[31mred\x1b[0m", "two\nlines",
         "漢字 wide text that goes on for a while to be cut", "plain", "",
         # a likely secret, made up from parts: held wherever the letter lives (a box that git brought too)
         "deploy failed: AWS_SECRET_" + "ACCESS_KEY=" + "Zq4" * 13 + "x")
TS = ("2026-05-01T09:00:00Z", "2026-05-01T10:00:00+02:00", "2026-04-30", "not a time", "2026-05-02T08:00:00.5Z")


def letter_bytes(draw_ids, data) -> bytes:
    fields = {"ts": data.draw(st.sampled_from(TS)), "agent": data.draw(st.sampled_from(["agent-a", "agent-b"])),
              "class": data.draw(st.sampled_from(["bug", "note", "triage", "pickup", "memory_misdelivery"])),
              "repo": data.draw(st.sampled_from(REPOS + ("all", "elsewhere"))),
              "tool": data.draw(st.sampled_from(["seek", "north (memory beat)", "playwright"])),
              "what": data.draw(st.sampled_from(TEXTS))}
    if draw_ids and data.draw(st.booleans()):
        fields["answers"] = [data.draw(st.sampled_from(draw_ids))]
    if data.draw(st.integers(0, 9)) == 0:
        fields["kind"] = "mission"
    if data.draw(st.integers(0, 5)) == 0:
        fields["disposition"] = "fixed"
        fields["fingerprint"] = "fp:seek/crash"
    return orjson.dumps(fields)


class World:
    def __init__(self, base: str) -> None:
        self.base = base
        self.home = os.path.join(base, "home")
        os.makedirs(self.home)
        self.spool = os.path.join(self.home, "field-reports.jsonl")
        self.roots = []
        for name in REPOS:
            root = os.path.join(base, name)
            os.makedirs(os.path.join(root, ".git"))
            self.roots.append(root)
        self.ids: list[str] = []
        self.future: list[bytes] = []  # letters already answered, not yet written

    def foretell(self, data) -> None:
        """A letter that replies may name before it arrives (its id is known)."""
        import hashlib

        raw = letter_bytes(self.ids, data)
        self.future.append(raw)
        self.ids.append(hashlib.sha256(raw).hexdigest()[:12])

    def run(self):
        return open_run(home=self.home, spool=self.spool, extra_roots=self.roots, cwd=self.base)

    def box(self, i: int) -> str:
        return os.path.join(self.roots[i], ".m1nd", "inbox.jsonl")

    def append(self, path: str, data: bytes) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab") as fh:
            fh.write(data)

    def new_letters(self, data, n: int) -> bytes:
        out = []
        for _ in range(n):
            raw = letter_bytes(self.ids, data)
            import hashlib

            self.ids.append(hashlib.sha256(raw).hexdigest()[:12])
            out.append(raw)
        return b"".join(r + b"\n" for r in out)


def apply(world: World, op: str, data) -> None:
    if op == "spool":
        world.append(world.spool, world.new_letters(data, data.draw(st.integers(1, 4))))
    elif op == "foretell":  # replies can name this letter from now on; it arrives later
        world.foretell(data)
    elif op == "arrive":  # a letter arrives after the replies that name it
        if world.future:
            raw = world.future.pop(0)
            where = data.draw(st.sampled_from(["spool", "box"]))
            world.append(world.spool if where == "spool" else world.box(data.draw(st.integers(0, 1))), raw + b"\n")
    elif op == "spool-junk":
        world.append(world.spool, data.draw(st.sampled_from([b"not json\n", b"\n", b"   \n", b"[1]\n", b'{"ts": 5}\n'])))
    elif op == "torn-tail":
        world.append(world.spool, data.draw(st.sampled_from([b'{"what": "half', b'{"what":"whole","repo":"repo-a"}'])))
    elif op == "finish-tail":
        world.append(world.spool, b"\n")
    elif op == "distribute":
        distribute(world.run())
    elif op == "box-extend":  # a git pull brought letters from another machine
        world.append(world.box(data.draw(st.integers(0, 1))), world.new_letters(data, data.draw(st.integers(1, 3))))
    elif op == "box-replace":  # a checkout writes a new file: fewer letters, another inode
        path = world.box(data.draw(st.integers(0, 1)))
        if os.path.exists(path):
            lines = open(path, "rb").read().splitlines(keepends=True)
            keep = lines[: data.draw(st.integers(0, len(lines)))]
            tmp = path + ".new"
            with open(tmp, "wb") as fh:
                fh.write(b"".join(keep) + world.new_letters(data, data.draw(st.integers(0, 2))))
            os.replace(tmp, path)
    elif op == "box-rewrite":  # rewritten in place, same inode and size (a letter changed)
        path = world.box(data.draw(st.integers(0, 1)))
        if os.path.exists(path) and os.path.getsize(path) > 4:
            with open(path, "r+b") as fh:
                fh.seek(2)
                byte = fh.read(1)
                fh.seek(2)
                fh.write(b"X" if byte != b"X" else b"Y")
    elif op == "box-conflict":
        world.append(world.box(data.draw(st.integers(0, 1))), b"<<<<<<< ours\n=======\n>>>>>>> theirs\n")
    elif op == "rm-state":
        shutil.rmtree(os.path.join(world.home, "state"), ignore_errors=True)
    elif op == "corrupt-state":
        db = os.path.join(world.home, "state", "readmodel.sqlite3")
        if os.path.exists(db):
            with open(db, "r+b") as fh:
                fh.seek(data.draw(st.integers(0, max(0, os.path.getsize(db) - 64))))
                fh.write(b"\xde\xad\xbe\xef" * 16)


def rendered(fn, *args) -> str:
    out = io.StringIO()
    fn(*args, out)
    return out.getvalue()


FILTERS = [dict(), dict(state="all"), dict(state="answered"), dict(state="external"), dict(state="in_flight"),
           dict(agent="agent-b"), dict(klass="BUG"), dict(tool="north"), dict(since="2026-05-01"),
           dict(until="2026-05-01T08:30:00Z", state="all"), dict(box="repo-a", state="all")]


def check_views(world: World) -> None:
    run = world.run()
    ref = sweep(run, distribute_first=False)
    model = open_model(run)
    try:
        # the v0 document, byte for byte
        doc = io.BytesIO()
        write_document(run, model, None, doc)
        assert doc.getvalue() == jsonout.dumps(ref.doc)
        # the human sweep, under every filter, limited and not
        for kw in FILTERS:
            for limit in (2, None):
                filters = make_filters(**kw)
                got = model_listing(model, filters, limit)
                want = files_sweep_listing(ref, filters, limit)
                assert rendered(render.sweep_view, got, got.totals) == rendered(render.sweep_view, want, want.totals)
                assert got.matched == want.matched
        # each box: the JSON document and the human view
        for source in model.readable_boxes():
            view = view_box(run, source.root or "medulla")
            out = io.BytesIO()
            model_box_json(model, source, None, out)
            assert out.getvalue() == jsonout.dumps(view.as_json())
            out = io.BytesIO()
            narrowed = make_filters(state="open", agent="agent-a", default_state="all")
            model_box_json(model, source, narrowed, out)
            expected = view.as_json()
            graph_states = {(v["id"], v.get("what")): v["state"] for v in expected["letters"]}
            assert all(("held" in l or l["agent"] == "agent-a")  # a held letter shows no agent
                       and graph_states[(l["id"], l.get("what"))] in ("wet_ink", "in_flight")
                       for l in orjson.loads(out.getvalue())["letters"])
            for kw in (dict(), dict(state="all")):
                filters = make_filters(**kw)
                got = model_listing(model, filters, 3, scope=source)
                want = files_box_listing(view, run.markers, filters, 3)
                assert rendered(render.box_view, got, source.box) == rendered(render.box_view, want, source.box)
        # doctor
        assert diagnose(run, NOW, model).as_json() == diagnose_files(run, NOW).as_json()
    finally:
        model.close()


def check_views_after_damage(world: World) -> None:
    """`check_views`, where damage to the database that SQLite only notices in the
    middle of a view is what the commands make of it (`damage_reported`: the database
    is removed, one error line): the next command rebuilds, and then every view agrees."""
    from m1nd.errors import M1ndError
    from m1nd.readmodel import damage_reported

    try:
        with damage_reported(world.run()):
            check_views(world)
    except M1ndError as exc:
        assert "removed; the next command rebuilds it" in exc.message
        assert not os.path.exists(os.path.join(world.home, "state", "readmodel.sqlite3"))
        check_views(world)


OPS = st.sampled_from(["spool", "spool", "spool", "foretell", "arrive", "spool-junk", "torn-tail", "finish-tail", "distribute", "distribute",
                       "box-extend", "box-replace", "box-rewrite", "box-conflict", "rm-state", "corrupt-state"])


@SETTINGS
@given(data=st.data())
def test_every_view_from_the_model_equals_the_view_from_the_files(tmp_path, monkeypatch, data):
    from m1nd.readmodel import graph, update

    monkeypatch.setenv("COLUMNS", str(data.draw(st.sampled_from([60, 80, 120]))))
    # the reply graph asked one letter at a time, switching to the whole graph after
    # one question, after as many as there are replies, or (default) after 500
    monkeypatch.setattr(graph, "LOOKUPS", data.draw(st.sampled_from([1, 32, 500])))
    monkeypatch.setattr(graph, "REPLIES_PER_LOOKUP", data.draw(st.sampled_from([1, 1000])))
    # tiny batches and transactions, so that reads commit part of a file as they go
    monkeypatch.setattr(update, "BATCH", data.draw(st.sampled_from([2, 900])))
    monkeypatch.setattr(update, "CHUNK_LINES", 3)
    base = tempfile.mkdtemp(dir=tmp_path)
    world = World(base)
    try:
        for _ in range(data.draw(st.integers(1, 8))):
            apply(world, data.draw(OPS), data)
            check_views_after_damage(world)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_deleting_the_state_changes_no_output(tmp_path, cli, monkeypatch):
    """Every read command prints the same bytes with the model warm, deleted, or rebuilt."""
    from conftest import FIXTURES

    monkeypatch.setenv("COLUMNS", "80")
    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    repo = tmp_path / "src" / "repo-a"
    (repo / ".git").mkdir(parents=True)
    assert cli("roster", "add", str(repo)).code == 0
    assert cli("distribute").code == 0
    commands = [("sweep",), ("sweep", "--state", "all", "--limit", "3"), ("--inbox-sweep", "--no-distribute"),
                ("box", "repo-a"), ("box", "repo-a", "--json"), ("doctor", "--json"), ("show", "4a89"),
                ("show", "4a89", "--json")]
    warm = [cli(*c) for c in commands]
    assert all(r.code == 0 for r in warm), [(r.stdout, r.stderr) for r in warm]
    again = [cli(*c) for c in commands]
    assert [(r.stdout, r.stderr) for r in again] == [(r.stdout, r.stderr) for r in warm]
    for c, before in zip(commands, warm):
        shutil.rmtree(home / "state")
        after = cli(*c)
        assert (after.code, after.stdout, after.stderr) == (before.code, before.stdout, before.stderr), c


def test_a_corrupt_database_is_rebuilt_and_said_once(tmp_path, cli):
    from conftest import FIXTURES

    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    fresh = cli("--inbox-sweep", "--no-distribute")
    db = home / "state" / "readmodel.sqlite3"
    assert db.is_file()
    for what in (b"this is not a database at all" * 100, b""):
        db.write_bytes(what)
        for suffix in ("-wal", "-shm"):
            (home / "state" / ("readmodel.sqlite3" + suffix)).unlink(missing_ok=True)
        after = cli("--inbox-sweep", "--no-distribute")
        assert after.code == 0 and after.stdout == fresh.stdout
        if what:
            assert after.stderr.count("read model") == 1 and "rebuilt" in after.stderr
        again = cli("--inbox-sweep", "--no-distribute")
        assert again.stdout == fresh.stdout and again.stderr == ""


def test_a_home_where_the_state_cannot_be_written_still_answers_with_one_warning(tmp_path, cli):
    from conftest import FIXTURES

    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    fresh = cli("--inbox-sweep", "--no-distribute")
    shutil.rmtree(home / "state")
    (home / "state").write_bytes(b"")  # state cannot be a directory here: nothing under it can be written
    for args in (("--inbox-sweep", "--no-distribute"), ("sweep", "--no-distribute"), ("show", "4a89")):
        result = cli(*args)
        assert result.code == 0, result.stderr
        assert result.stderr.count("read model") == 1 and "reading the files directly" in result.stderr
    assert cli("--inbox-sweep", "--no-distribute").stdout == fresh.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any mode bits")
def test_a_read_only_home_still_answers(tmp_path, cli):
    from conftest import FIXTURES

    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    fresh = cli("--inbox-sweep", "--no-distribute")
    shutil.rmtree(home / "state")
    home.chmod(0o500)
    try:
        result = cli("--inbox-sweep", "--no-distribute")
        assert result.stdout == fresh.stdout and result.stderr.count("read model") == 1
    finally:
        home.chmod(0o700)


def test_an_update_killed_between_its_transactions_is_finished_by_the_next(tmp_path, monkeypatch):
    """A large read commits as it goes; dying after any of those commits leaves a
    model that the next update completes to the same answers as a fresh one."""
    from m1nd.readmodel import update

    world = World(tempfile.mkdtemp(dir=tmp_path))
    import random

    rng = random.Random(5)
    lines = []
    for i in range(60):
        fields = {"ts": f"2026-05-01T{i % 24:02d}:00:00Z", "repo": REPOS[i % 2], "what": f"letter {i}"}
        if i % 7 == 3 and lines:
            fields["answers"] = [rng.choice(lines)]
        raw = orjson.dumps(fields)
        import hashlib

        lines.append(hashlib.sha256(raw).hexdigest()[:12])
        world.append(world.spool, raw + b"\n")
    distribute(world.run())
    monkeypatch.setattr(update, "BATCH", 2)
    monkeypatch.setattr(update, "CHUNK_LINES", 4)

    class Killed(BaseException):
        pass

    for dies_at in range(1, 40, 3):
        shutil.rmtree(os.path.join(world.home, "state"), ignore_errors=True)
        real_set_row = update._set_row
        calls = {"n": 0}

        def dying(*args, **kwargs):
            calls["n"] += 1
            if calls["n"] == dies_at:
                raise Killed()
            return real_set_row(*args, **kwargs)

        monkeypatch.setattr(update, "_set_row", dying)
        try:
            open_model(world.run()).close()
        except Killed:
            pass
        monkeypatch.setattr(update, "_set_row", real_set_row)
        check_views(world)
        # the build's own narrow index is gone, the unique index of letters by digest is back
        con = sqlite3.connect(os.path.join(world.home, "state", store.DB_NAME))
        indexes = dict(con.execute("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'letters' AND type = 'index'"))
        con.close()
        assert store.BUILDING not in indexes and "UNIQUE" in indexes["letters_digest"], (dies_at, indexes)


def test_a_database_damaged_anywhere_never_gives_a_traceback(tmp_path, cli):
    from conftest import FIXTURES

    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    commands = [("--inbox-sweep", "--no-distribute"), ("sweep", "--no-distribute", "--state", "all"),
                ("show", "4a89"), ("doctor", "--json"), ("cases",)]
    fresh = [cli(*c).stdout for c in commands]
    db = home / "state" / "readmodel.sqlite3"
    size = db.stat().st_size
    for at in range(0, size, max(512, size // 24)):
        for c, want in zip(commands, fresh):
            cli(*commands[0])  # a healthy model to damage
            with open(db, "r+b") as fh:
                fh.seek(at)
                fh.write(os.urandom(256))
            got = cli(*c)
            assert "Traceback" not in got.stderr and got.code in (0, 1), (at, c, got.stderr)
            if got.code == 1:  # it said so in one line, removed the database: the next run rebuilds
                said = got.stderr if "--json" not in c else orjson.loads(got.stdout)["error"]["message"]
                assert said.count("read model") == 1, (at, c, got.stderr)
                assert cli(*c).stdout == want, (at, c)
            # (damage that leaves SQLite's pages valid, a changed byte inside a row, is not
            # detectable without page checksums: deleting <home>/state repairs it)
            shutil.rmtree(home / "state")
            assert cli(*c).stdout == want


def test_a_model_another_release_kept_is_rebuilt_once_and_says_so_in_one_line(tmp_path, cli):
    from conftest import FIXTURES

    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    # reads, and commands that file first (their escalation step opens the database first)
    commands = [("--inbox-sweep", "--no-distribute"), ("sweep", "--no-distribute", "--state", "all"), ("show", "4a89"),
                ("sweep", "--state", "all"), ("distribute",), ("--inbox-sweep",)]
    cli("distribute")
    fresh = [cli(*c).stdout for c in commands]
    for c, want in zip(commands, fresh):
        con = sqlite3.connect(home / "state" / store.DB_NAME)
        con.execute("UPDATE meta SET value = ? WHERE key = 'version'", (str(store.SCHEMA_VERSION - 1),))
        con.commit()
        con.close()
        got = cli(*c)
        assert got.code == 0 and got.stdout == want, (c, got.stderr)
        said = [line for line in got.stderr.splitlines() if "read model" in line]
        assert len(said) == 1 and "another release of m1nd" in said[0] and "rebuilt" in said[0], got.stderr
        again = cli(*c)
        assert again.stdout == want and "read model" not in again.stderr


def test_box_json_failing_after_its_document_began_says_so_on_stderr_not_in_a_second_document(tmp_path, cli,
                                                                                                monkeypatch):
    from conftest import FIXTURES
    from m1nd.readmodel import ReadModel

    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    with open(home / "field-reports.jsonl", "ab") as fh:  # letters that name no project: the medulla box
        fh.writelines(orjson.dumps({"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "what": f"no project {i}"})
                      + b"\n" for i in range(3))
    cli("distribute")
    fresh = cli("box", "medulla", "--json")
    assert fresh.code == 0 and orjson.loads(fresh.stdout)["letters"]
    real = ReadModel.box_letters

    def failing(self, source):  # a page found damaged after the first letter was written
        rows = real(self, source)
        yield next(rows)
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(ReadModel, "box_letters", failing)
    got = cli("box", "medulla", "--json")
    assert got.code == 1 and got.stdout.startswith('{\n  "counts"') and '"error"' not in got.stdout
    said = got.stderr.strip().splitlines()
    assert len(said) == 1 and "read model" in said[0] and "rebuilds it" in said[0], got.stderr
    monkeypatch.setattr(ReadModel, "box_letters", real)  # (undo() would also drop the test's home)
    assert cli("box", "medulla", "--json").stdout == fresh.stdout
    # before the document begins, the failure is the error document (stdout) as ever
    def failing_counts(self, source=None):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(ReadModel, "counts", failing_counts)
    early = cli("box", "medulla", "--json")
    assert early.code == 1 and "read model" in orjson.loads(early.stdout)["error"]["message"]


@pytest.mark.parametrize("where", ["m1nd.cases.source.fold_model", "m1nd.cases.escalation.overlay_of"])
def test_cases_on_a_read_model_that_fails_mid_way_is_one_line_and_the_next_run_rebuilds(tmp_path, cli, monkeypatch,
                                                                                         where):
    from conftest import FIXTURES

    home = tmp_path / "m1nd-home"
    home.mkdir()
    shutil.copyfile(FIXTURES / "fates.jsonl", home / "field-reports.jsonl")
    fresh = cli("cases")
    assert fresh.code == 0
    module, name = where.rsplit(".", 1)
    real = getattr(__import__(module, fromlist=[name]), name)

    def failing(*args, **kwargs):  # the fold, or the view once the fold is open, meets a damaged page
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(where, failing)
    got = cli("cases")
    said = got.stderr.strip().splitlines()
    assert got.code == 1 and len(said) == 1 and "read model" in said[0] and "rebuilds it" in said[0], got.stderr
    assert not (home / "state" / "readmodel.sqlite3").exists()
    monkeypatch.setattr(where, real)
    assert cli("cases").stdout == fresh.stdout
