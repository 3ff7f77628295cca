"""The read model's database: one SQLite file under `<home>/state/`.

A derived index of every letter the spool and the boxes hold, never a source of
truth: deleting it changes no output, the next command rebuilds it.  Keyed by the
full sha256 digest of a letter's raw bytes (the 12-hex id is a prefix and may be
shared by two different letters).

Tables:
- `files`: each letter file indexed (the spool, boxes) with the identity and
  content checksums it had when last indexed (as boxindex.py verifies boxes), the
  byte offset and line count indexed so far, its unfinished tail, and a generation
  number bumped whenever its indexed content changes;
- `letters`: one row per distinct letter (digest) with the indexed fields;
- `copies`: where each letter sits (file, line number, byte offset, length) and the
  generation that put it there; `files.cut_gen` is the last generation that took a
  copy away (a rewrite, a replaced or deleted file): counts kept since a generation
  are brought current from the copies added after it, unless a cut came later;
- `replies`: for every reply (not a mission), each id it answers, and whether it is
  a receipt: the fate of one letter is one indexed lookup;
- `malformed`: malformed lines by file and line number;
- `cache`: aggregates derived from the rest, keyed by the generations they were
  computed from (a shortcut only).
- `case_files`, `case_letters`: the witnesses and escalations of each file, kept
  by the escalation step after every filing without building the rest of the
  model (m1nd/cases/witnesses.py).
"""

from __future__ import annotations

import os
import sqlite3

SCHEMA_VERSION = 11  # 7: box lines are judged for secrets too (mailbox.md 4); 8: the witness index leaves held
# letters out; 9: copies carry the generation that added them, files the last that cut one, and `replies`
# indexes who answers what (incremental counts and fates, readmodel/tally.py); 10: copies_gen leads with
# the file (every query of what is new asks about given files: one box's new copies no longer scan another's);
# 11: one index of letters by digest, which also covers what the counts read and serves ids (idspan.py)
DB_NAME = "readmodel.sqlite3"
BUSY_MS = 60_000
CACHE_KB = 32_000  # SQLite's page cache
# A first build inserts letters keyed by digest, in random key order: once the digest
# index outgrows the cache, every insert reads and spills pages.  A larger cache
# while building keeps it in memory up to about a million letters (bounded: flat in N).
BUILD_CACHE_KB = 64_000
WAL_PAGES = 16_384  # pages of write-ahead log past which a commit checkpoints (64 MB)

# Letters by digest.  A first build writes them in the order the files hold them, then
# once in digest order (`cluster_letters`): ids are digest prefixes, so a document in id
# order then reads the table from front to back instead of a page per letter.
#
# Each new letter costs a write at a random place of every index keyed by its digest
# (most of what a read right after new letters pays), so there is one: `letters_digest`
# (SCHEMA), unique, which makes a digest a letter once (a digest gives the other five
# columns), is looked up by digest, by id (a range of digests, idspan.py), and holds the
# columns the counts and doctor's facts read, so they never visit the table.
LETTERS = """CREATE TABLE IF NOT EXISTS {name} (
    digest BLOB NOT NULL,
    id TEXT NOT NULL, ts TEXT NOT NULL, sortkey TEXT NOT NULL,
    agent TEXT NOT NULL, class TEXT NOT NULL, repo TEXT NOT NULL, brain TEXT NOT NULL,
    tool TEXT NOT NULL, what TEXT NOT NULL, expected TEXT NOT NULL, snippet TEXT NOT NULL,
    answers TEXT, kind TEXT,
    disposition TEXT, fingerprint TEXT, case_id TEXT, sentinel TEXT,
    mission INTEGER NOT NULL, reply INTEGER NOT NULL, secret TEXT,
    first_gen INTEGER NOT NULL
);
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    fid INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    dev INTEGER NOT NULL DEFAULT -1, ino INTEGER NOT NULL DEFAULT -1,
    size INTEGER NOT NULL DEFAULT -1, mtime_ns INTEGER NOT NULL DEFAULT -1,
    offset INTEGER NOT NULL DEFAULT 0, lines INTEGER NOT NULL DEFAULT 0,
    hashes TEXT NOT NULL DEFAULT '[]',
    tail_line INTEGER, gen INTEGER NOT NULL DEFAULT 0,
    cut_gen INTEGER NOT NULL DEFAULT 0
);
""" + LETTERS.format(name="letters") + """
CREATE UNIQUE INDEX IF NOT EXISTS letters_digest ON letters (digest, mission, reply, tool, class, id);
CREATE INDEX IF NOT EXISTS letters_recent ON letters (sortkey, id, digest, mission, reply);
CREATE INDEX IF NOT EXISTS letters_replies ON letters (reply) WHERE reply = 1;
CREATE INDEX IF NOT EXISTS letters_first ON letters (first_gen);
CREATE INDEX IF NOT EXISTS letters_secret ON letters (digest) WHERE secret IS NOT NULL AND secret != '';
CREATE TABLE IF NOT EXISTS copies (
    fid INTEGER NOT NULL, line INTEGER NOT NULL, digest BLOB NOT NULL,
    offset INTEGER NOT NULL, length INTEGER NOT NULL, gen INTEGER NOT NULL,
    PRIMARY KEY (fid, line)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS copies_digest ON copies (digest, fid);
CREATE INDEX IF NOT EXISTS copies_gen ON copies (fid, gen);
CREATE TABLE IF NOT EXISTS replies (
    target TEXT NOT NULL, digest BLOB NOT NULL, pos INTEGER NOT NULL, receipt INTEGER NOT NULL,
    PRIMARY KEY (target, digest, pos)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS replies_digest ON replies (digest);
CREATE TABLE IF NOT EXISTS malformed (
    fid INTEGER NOT NULL, line INTEGER NOT NULL, conflict INTEGER NOT NULL,
    PRIMARY KEY (fid, line)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS removed (digest BLOB PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cache (n INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS case_files (
    path BLOB PRIMARY KEY, dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, offset INTEGER NOT NULL, hashes TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS case_letters (
    path BLOB NOT NULL, offset INTEGER NOT NULL, digest BLOB NOT NULL, role TEXT NOT NULL,
    fingerprint TEXT NOT NULL, ts TEXT NOT NULL, tool TEXT NOT NULL, repo TEXT NOT NULL, brain TEXT NOT NULL,
    PRIMARY KEY (path, offset)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS case_letters_fingerprint ON case_letters (fingerprint, role);
CREATE INDEX IF NOT EXISTS case_letters_digest ON case_letters (digest);
"""


# Secondary indexes: dropped while a new model is first built and made again at the
# end (sorting once is much faster than keeping them up to date row by row).  A
# build killed in between gets them back at the next open (SCHEMA makes them).
SECONDARY = ("letters_digest", "letters_recent", "letters_replies", "letters_first", "copies_digest",
             "copies_gen", "replies_digest", "letters_secret")
# While they are away a narrow unique index keeps each digest a letter once (INSERT OR
# IGNORE) and answers which lines are known; a build killed before the end leaves it
# behind, and the next open drops it.
BUILDING = "letters_building"


def drop_secondary(con: sqlite3.Connection) -> None:
    con.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {BUILDING} ON letters (digest)")  # first: never none
    for name in SECONDARY:
        con.execute(f"DROP INDEX IF EXISTS {name}")


def make_secondary(con: sqlite3.Connection) -> None:
    con.executescript(SCHEMA)
    con.execute(f"DROP INDEX IF EXISTS {BUILDING}")


SORT_CACHE_KB = 16_000  # the sorted copy's page cache, which also bounds SQLite's sorter


def cluster_letters(con: sqlite3.Connection) -> None:
    """Rewrite `letters` in digest order, in one transaction, before a first build makes
    its secondary indexes.  `+digest` sorts the rows read front to back (SQLite's
    sorter, in bounded memory) instead of fetching them through the digest index one
    page at a time.  It needs room for a second copy of the table: where there is none
    (a full disk), or the table is busy, the table stays as it was, as it does when the
    command is killed midway: correct, unclustered."""
    size = con.execute("PRAGMA cache_size").fetchone()[0]
    con.execute(f"PRAGMA cache_size = -{SORT_CACHE_KB}")
    try:
        _cluster(con)
    finally:
        con.execute(f"PRAGMA cache_size = {size}")


def _cluster(con: sqlite3.Connection) -> None:
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute("DROP TABLE IF EXISTS letters_sorted")
        con.execute(LETTERS.format(name="letters_sorted"))
        con.execute("INSERT INTO letters_sorted SELECT * FROM letters ORDER BY +digest")
        con.execute("DROP TABLE letters")
        con.execute("ALTER TABLE letters_sorted RENAME TO letters")
        con.execute("COMMIT")
    except sqlite3.OperationalError:
        _rollback(con)
    except BaseException:
        _rollback(con)
        raise


def _rollback(con: sqlite3.Connection) -> None:
    if con.in_transaction:  # a failed COMMIT may have ended it already
        con.execute("ROLLBACK")


class OtherRelease(sqlite3.DatabaseError):
    """The database keeps another schema: rebuilt, as one that does not verify is."""


class Unusable(Exception):
    """The database cannot be opened for writing (read-only home, no space)."""


def db_path(state_dir: str) -> str:
    return os.path.join(state_dir, DB_NAME)


def connect(path: str) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
    con.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    return con


def _prepare(con: sqlite3.Connection, in_memory: bool) -> None:
    if not in_memory:
        mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise sqlite3.DatabaseError(f"journal mode {mode}")
    con.execute("PRAGMA synchronous = NORMAL")
    # One checkpoint (and its fsync) per command, at its close, rather than one each time
    # the log passes 4 MB: a read after a thousand new letters writes a transaction per
    # file it brings current, and a first build a gigabyte.  A commit that leaves more
    # than 64 MB of log checkpoints it (one transaction may write more before its commit).
    con.execute(f"PRAGMA wal_autocheckpoint = {WAL_PAGES}")
    con.execute(f"PRAGMA cache_size = -{CACHE_KB}")  # memory stays flat in N
    con.execute("PRAGMA temp_store = FILE")
    # Every query is written for the model's own indexes.  SQLite would otherwise build
    # a temporary index of every letter for one statement when it guesses that cheaper
    # (past about 150 ids asked at once it did: 17 s at a million letters for 200 ids).
    con.execute("PRAGMA automatic_index = OFF")
    row = None
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
    if row is not None and row[0] != str(SCHEMA_VERSION):
        raise OtherRelease(f"was made by another release of m1nd (schema {row[0]}; this one keeps "
                           f"{SCHEMA_VERSION})")
    # Newest-first views filter on mission and reply: from the index, so that only the
    # letters they keep are read from the table (in digest order after a first build,
    # a random page each).  It replaced letters_newest, which lacked them.
    con.execute("DROP INDEX IF EXISTS letters_newest")
    con.executescript(SCHEMA)  # idempotent: every statement is IF NOT EXISTS
    con.execute(f"DROP INDEX IF EXISTS {BUILDING}")
    con.execute("INSERT OR IGNORE INTO meta VALUES ('version', ?)", (str(SCHEMA_VERSION),))
    con.execute("INSERT OR IGNORE INTO meta VALUES ('gen', '0')")
    con.execute("INSERT OR IGNORE INTO meta VALUES ('epoch', ?)", (os.urandom(8).hex(),))
    # A quick check of the file's structure: a database that is not one (or a
    # half-written page) fails here rather than in the middle of a view.
    con.execute("SELECT count(*) FROM files").fetchone()


def open_db(state_dir: str) -> tuple[sqlite3.Connection, bool, list[str]]:
    """(connection, persistent, notes).  A database that does not verify is removed
    and rebuilt (one note); a home where nothing can be written gets an in-memory
    database built from the files (persistent False)."""
    notes: list[str] = []
    path = db_path(state_dir)
    for attempt in (1, 2):
        try:
            os.makedirs(state_dir, mode=0o700, exist_ok=True)
            if os.path.lexists(path) and not os.path.isfile(path):
                raise Unusable(f"{path} is not a regular file")
            con = connect(path)
            try:
                _prepare(con, in_memory=False)
            except BaseException:
                con.close()
                raise
            return con, True, notes
        except (sqlite3.DatabaseError, UnicodeDecodeError, ValueError) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and _readonly(exc):
                break
            if busy(exc):
                notes.append(f"read model {path} is busy (another m1nd is updating it): reading the files directly")
                return open_memory(), False, notes
            if attempt == 2:
                break
            why = str(exc) if isinstance(exc, OtherRelease) else f"does not verify ({exc})"
            notes.append(f"read model {path} {why}: rebuilt from the files")
            _remove(path)
        except (OSError, Unusable) as exc:
            del exc
            break
    return open_memory(), False, notes


def open_memory() -> sqlite3.Connection:
    con = sqlite3.connect(":memory:", isolation_level=None)
    _prepare(con, in_memory=True)
    return con


def busy(exc: BaseException) -> bool:
    """A lock another process held past the busy timeout: not damage."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _readonly(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text or "disk i/o" in text


def _remove(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(path + suffix)
        except FileNotFoundError:
            pass
        except OSError:
            pass
