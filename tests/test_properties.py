"""Properties (hypothesis): parsing, distribution, the sweep, state independence, JSON.

Each property runs the real core over real files in a fresh directory per example
(`tempfile.mkdtemp` under the test's own tmp_path), so nothing leaks between examples.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from dataclasses import dataclass

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from m1nd import jsonout
from m1nd.distribute import distribute
from m1nd.letters import BLANK, LETTER, MALFORMED, TAIL, iter_lines, parse, read_file
from m1nd.run import open_run
from m1nd.secrets import likely_secret
from m1nd.spool import compose
from m1nd.sweep import sweep

PROPS = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
HEAVY = settings(PROPS, max_examples=60)

STRING_FIELDS = ("ts", "agent", "class", "repo", "brain", "tool", "what", "expected", "snippet")


def sha12(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


# --- parsing -----------------------------------------------------------------------


def reference_parse(raw: bytes):
    """An independent reading of contract section 2 with the standard library."""

    def bad_constant(_):
        raise ValueError("constant")

    def finite_float(text):
        value = float(text)
        if math.isinf(value):
            raise ValueError("overflow")
        return value

    def finite_int(text):
        value = int(text)
        float(value)  # OverflowError beyond a double
        return value

    def no_surrogates(value):
        if isinstance(value, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
                raise ValueError("surrogate")
        elif isinstance(value, list):
            for v in value:
                no_surrogates(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                no_surrogates(k)
                no_surrogates(v)

    def pairs(items):
        for k, _ in items:
            no_surrogates(k)
        return dict(items)  # the last occurrence wins

    try:
        text = raw.decode("utf-8")
        obj = json.loads(text, parse_constant=bad_constant, parse_float=finite_float, parse_int=finite_int,
                         object_pairs_hook=pairs)
        no_surrogates(obj)
    except (ValueError, OverflowError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    for name in STRING_FIELDS:
        if not isinstance(obj.get(name, ""), str):
            return None
    answers = obj.get("answers", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        return None
    kind = obj.get("kind")
    if kind is not None and not isinstance(kind, str):
        return None
    return obj


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=8)
field_values = st.one_of(st.text(max_size=6), st.none(), st.integers(0, 9), st.lists(st.text(max_size=4), max_size=2),
                         st.lists(st.integers(0, 3), max_size=2), json_values)
letter_objects = st.dictionaries(
    st.sampled_from(STRING_FIELDS + ("answers", "kind", "id", "extra")), field_values, max_size=6)

MUTATIONS = [b",", b"NaN", b"Infinity", b"1e400", b"-1e999", b'"\\ud800"', b"\\ud800", b"\\udc00x", b'"', b"}",
             b"]", b"{", b" ", b"\t", b"\r", b"\xff", b"\xc3", b"\xed\xa0\x80", b"null", b"[1]", b":", b",}",
             b"\x00", b"\x0c", b"\xef\xbb\xbf", b'"a":1,"a":2', b"1" + b"0" * 330, b"-0", b"1e-999"]


@st.composite
def near_json_lines(draw):
    """JSON objects as a writer would produce them, sometimes broken in one or two places."""
    obj = draw(letter_objects)
    separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    raw = json.dumps(obj, ensure_ascii=draw(st.booleans()), separators=separators).encode()
    if draw(st.booleans()):
        raw = draw(st.sampled_from([b"", b" ", b"\t "])) + raw + draw(st.sampled_from([b"", b" ", b"\r"]))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(raw)))
        if draw(st.booleans()):
            raw = raw[:at] + draw(st.sampled_from(MUTATIONS)) + raw[at:]
        else:
            raw = raw[:at] + raw[at + 1:]
    return raw.replace(b"\n", b"")


@PROPS
@given(raw=near_json_lines())
def test_a_line_is_a_letter_exactly_when_a_strict_reference_reader_accepts_it(raw):
    letter = parse(raw)
    expected = reference_parse(raw)
    assert (letter is None) == (expected is None), raw
    if letter is not None:
        assert letter.id == sha12(raw)
        assert (letter.repo, letter.what, list(letter.answers), letter.kind) == (
            expected.get("repo", ""), expected.get("what", ""), expected.get("answers", []), expected.get("kind"))


@PROPS
@given(data=st.lists(st.one_of(st.binary(max_size=40), near_json_lines(), st.sampled_from([b"\n", b"\r\n", b"\r"])),
                     max_size=12).map(b"".join))
def test_reading_arbitrary_bytes_never_raises_and_accounts_for_every_line(data):
    lines = list(iter_lines(io.BytesIO(data)))
    expected_count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert len(lines) == expected_count
    assert [l.number for l in lines] == list(range(1, expected_count + 1))
    assert (lines[-1].end if lines else 0) == len(data)
    for i, line in enumerate(lines):
        assert b"\n" not in line.raw
        if line.outcome == LETTER:
            assert line.letter.id == sha12(line.raw) and line.letter.raw == line.raw
        elif line.outcome == BLANK:
            assert not line.raw.strip()
        elif line.outcome == TAIL:
            assert i == len(lines) - 1 and not line.terminated
        else:
            assert line.outcome == MALFORMED and line.terminated
        assert (line.outcome == LETTER) == (line.raw.strip() != b"" and parse(line.raw) is not None)


@PROPS
@given(data=st.binary(max_size=400))
def test_read_file_never_raises_on_arbitrary_bytes(tmp_path, data):
    path = tempfile.mktemp(dir=tmp_path)
    with open(path, "wb") as fh:
        fh.write(data)
    found = read_file(path)
    assert found.size == len(data)
    numbers = [n for n, _ in found.letters] + found.malformed + ([found.unfinished_tail] if found.unfinished_tail else [])
    assert len(numbers) == len(set(numbers))


# --- the write path ----------------------------------------------------------------

optional_text = st.one_of(st.none(), st.just(""), st.text(max_size=10))


@PROPS
@given(what=st.text(min_size=1, max_size=20).filter(str.strip), tool=optional_text, snippet=optional_text,
       klass=optional_text, answers=st.lists(st.text("0123456789abcdef", min_size=12, max_size=12), max_size=3))
def test_a_composed_letter_parses_back_to_its_fields_and_the_same_fields_give_the_same_bytes(
    what, tool, snippet, klass, answers
):
    fields = {"ts": "2026-05-03T09:00:00Z", "agent": "agent-a", "repo": "all", "what": what, "tool": tool,
              "snippet": snippet, "class": klass, "answers": answers}
    assume(likely_secret(orjson.dumps(fields)) is None)  # such a letter is refused: test_write_path pins that
    raw = compose(fields)
    assert raw == compose(dict(reversed(list(fields.items()))))
    assert b"\n" not in raw and b"\r" not in raw
    letter = parse(raw)
    assert letter is not None
    assert (letter.what, letter.tool, letter.snippet, letter.klass, list(letter.answers)) == (
        what, tool or "", snippet or "", klass or "", answers)
    assert [k for k in orjson.loads(raw)] == [k for k in ("ts", "agent", "class", "repo", "tool", "what", "snippet",
                                                          "answers") if fields.get(k)]


# --- a small world: two roots, a home, a spool, boxes -------------------------------

REPOS = {
    # repo template → expected destination: "a", "b", "medulla" or "pending"
    "repo-a": "a",
    "REPO-A (the api)": "a",
    "{A}/src/new/file.py": "a",
    "{A}": "a",
    "repo-b": "b",
    "/nowhere/else/repo-b/": "b",
    "all": "medulla",
    "": "medulla",
    "Research task 3": "medulla",
    "{H}/notes": "medulla",
    "repo-z": "pending",
    "repo-gone": "pending",
}
BRAINS = {"": None, "medulla": "medulla", "project:repo-b": "b", "MEDULLA": "medulla"}


@dataclass(frozen=True)
class Spec:
    repo: str
    brain: str
    kind: str | None
    klass: str
    tool: str
    what: str
    answers: tuple[int, ...]
    pad: bool
    crlf: bool


specs = st.builds(
    Spec,
    repo=st.sampled_from(sorted(REPOS)),
    brain=st.sampled_from(sorted(BRAINS)),
    kind=st.sampled_from([None, None, None, "mission"]),
    klass=st.sampled_from(["", "bug", "triage", "Triage", "pickup", "memory_misdelivery"]),
    tool=st.sampled_from(["", "", "pytest", "context7"]),
    what=st.text("abcxyz \u00e9\u2028", min_size=1, max_size=6),
    answers=st.lists(st.integers(0, 30), max_size=2).map(tuple),
    pad=st.booleans(),
    crlf=st.booleans(),
)


def destination(spec: Spec) -> str:
    brain = BRAINS[spec.brain]
    return brain if brain is not None else REPOS[spec.repo]


class World:
    """A home, a spool and two reachable roots (plus one gone) in a fresh directory."""

    def __init__(self, tmp_path) -> None:
        self.dir = tempfile.mkdtemp(dir=tmp_path)
        self.home = os.path.join(self.dir, "home")
        self.spool = os.path.join(self.home, "field-reports.jsonl")
        self.a = os.path.join(self.dir, "src", "repo-a")
        self.b = os.path.join(self.dir, "src", "repo-b")
        for d in (self.home, self.a, self.b):
            os.makedirs(d)
        with open(os.path.join(self.home, "roster.json"), "wb") as fh:
            fh.write(orjson.dumps({"roots": [self.a, os.path.join(self.dir, "gone", "repo-gone")]}))
        self.with_b = True
        self.twin_a = os.path.join(self.dir, "other", "repo-a")  # a second "repo-a": ambiguous when present
        self.with_twin = False
        self.ids: list[str] = []
        self.raws: list[bytes] = []
        self.dest: dict[str, str] = {}
        self.pending_name: dict[str, str] = {}

    def box_path(self, which: str) -> str:
        return {"a": os.path.join(self.a, ".m1nd", "inbox.jsonl"),
                "b": os.path.join(self.b, ".m1nd", "inbox.jsonl"),
                "medulla": os.path.join(self.home, "inbox.jsonl")}[which]

    def materialize(self, spec: Spec) -> bytes:
        obj = {"repo": spec.repo.replace("{A}", self.a).replace("{H}", self.home), "what": spec.what}
        if spec.brain:
            obj["brain"] = spec.brain
        if spec.kind:
            obj["kind"] = spec.kind
        if spec.klass:
            obj["class"] = spec.klass
        if spec.tool:
            obj["tool"] = spec.tool
        if spec.answers and self.ids:
            obj["answers"] = [self.ids[i % len(self.ids)] for i in spec.answers]
        raw = orjson.dumps(obj)
        if spec.pad:
            raw = b" " + raw + b"\t"
        self.ids.append(sha12(raw))
        self.raws.append(raw)
        self.dest[sha12(raw)] = destination(spec)
        if destination(spec) == "pending":
            self.pending_name[sha12(raw)] = spec.repo
        return raw

    def append(self, path: str, data: bytes) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab") as fh:
            fh.write(data)

    def append_line(self, path: str, raw: bytes) -> None:
        """Append one line, first ending an unterminated last line (as git would merge it)."""
        lead = b""
        if os.path.exists(path):
            with open(path, "rb") as fh:
                data = fh.read()
            lead = b"\n" if data and not data.endswith(b"\n") else b""
        self.append(path, lead + raw + b"\n")

    def add_to_spool(self, spec: Spec, junk: bytes = b"") -> None:
        raw = self.materialize(spec)
        self.append(self.spool, junk + raw + (b"\r\n" if spec.crlf else b"\n"))

    def arrive_by_git(self, which: str, spec: Spec, newline: bool = True) -> bytes:
        raw = self.materialize(spec)
        self.append_line(self.box_path(which), raw)
        if not newline:
            with open(self.box_path(which), "rb+") as fh:
                fh.truncate(os.fstat(fh.fileno()).st_size - 1)
        return raw

    def run(self):
        extra = ([self.b] if self.with_b else []) + ([self.twin_a] if self.with_twin else [])
        return open_run(home=self.home, spool=self.spool, extra_roots=extra, cwd=self.dir)

    def state(self) -> str:
        return os.path.join(self.home, "state")

    def files(self) -> dict:
        """Every entry in the world except private state: path → bytes or None for a directory."""
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.dir):
            if dirpath == self.home:
                dirnames[:] = [d for d in dirnames if d != "state"]
            for name in dirnames:
                out[os.path.join(dirpath, name)] = None
            for name in filenames:
                with open(os.path.join(dirpath, name), "rb") as fh:
                    out[os.path.join(dirpath, name)] = fh.read()
        return out

    def restore(self, files: dict) -> None:
        now = self.files()
        for path in sorted(set(now) - set(files), reverse=True):
            if now[path] is None:
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.exists(path):
                os.unlink(path)
        for path, content in sorted(files.items()):
            if content is None:
                os.makedirs(path, exist_ok=True)
            elif now.get(path) != content:
                with open(path, "wb") as fh:
                    fh.write(content)


junk_lines = st.sampled_from([b"", b"", b"\n", b"  \n", b"not json\n", b'{"what":NaN}\n', b'{"repo":null}\n'])


@st.composite
def worlds_input(draw):
    return {
        "spool": draw(st.lists(st.tuples(specs, junk_lines), max_size=10)),
        "tail": draw(st.sampled_from([b"", b"", b'{"repo":"all","wh', b"  "])),
        "git_a": draw(st.lists(specs, max_size=3)),
        "git_medulla": draw(st.lists(specs, max_size=2)),
        "box_unterminated": draw(st.booleans()),
        "copy_into_box": draw(st.lists(st.integers(0, 20), max_size=3)),
    }


def build(tmp_path, inp) -> World:
    w = World(tmp_path)
    for spec in inp["git_a"]:
        w.arrive_by_git("a", spec, newline=not inp["box_unterminated"])
    for spec in inp["git_medulla"]:
        w.arrive_by_git("medulla", spec)
    for spec, junk in inp["spool"]:
        w.add_to_spool(spec, junk)
    spool_raws = w.raws[len(inp["git_a"]) + len(inp["git_medulla"]):]
    for i in inp["copy_into_box"]:  # letters that are in the spool and already arrived by git
        if spool_raws:
            raw = spool_raws[i % len(spool_raws)]
            where = w.dest[sha12(raw)]
            if where in ("a", "b", "medulla"):
                w.append_line(w.box_path(where), raw)
    if inp["tail"]:
        w.append(w.spool, inp["tail"])
    return w


def read_box_ids(path: str) -> list[str]:
    return [l.id for _, l in read_file(path).letters]


# --- distribution ------------------------------------------------------------------


@HEAVY
@given(inp=worlds_input())
def test_distribution_is_idempotent_and_files_every_letter_into_its_one_box(tmp_path, inp):
    w = build(tmp_path, inp)
    boxes_before = {k: open(w.box_path(k), "rb").read() if os.path.exists(w.box_path(k)) else b""
                    for k in ("a", "b", "medulla")}
    first = distribute(w.run())
    assert not first.problems
    after_first = {k: open(w.box_path(k), "rb").read() if os.path.exists(w.box_path(k)) else b""
                   for k in ("a", "b", "medulla")}
    for k in after_first:
        assert after_first[k].startswith(boxes_before[k])  # a box only grows
    second = distribute(w.run())
    assert second.appended == 0
    assert second.as_json() | {"appended": 0} == first.as_json() | {"appended": 0}
    after_second = {k: open(w.box_path(k), "rb").read() if os.path.exists(w.box_path(k)) else b""
                    for k in ("a", "b", "medulla")}
    assert after_second == after_first

    spool_letters = [l for _, l in read_file(w.spool).letters]
    box_ids = {k: read_box_ids(w.box_path(k)) for k in ("a", "b", "medulla")}
    for letter in spool_letters:
        where = w.dest[letter.id]
        for k, ids in box_ids.items():
            if k == where:
                assert letter.id in ids
            elif letter.id in ids:
                # only if it arrived there by git before the run
                assert letter.id in read_box_ids_from_bytes(boxes_before[k])
    appended_ids = []
    for k, ids in box_ids.items():
        before = read_box_ids_from_bytes(boxes_before[k])
        assert ids[:len(before)] == before
        assert not set(ids[len(before):]) & set(before)  # dedup by id against what was there
        appended_ids += ids[len(before):]
    assert len(appended_ids) == len(set(appended_ids)) == first.appended
    assert list(first.pending) == sorted({w.pending_name[l.id] for l in spool_letters if l.id in w.pending_name})
    assert first.spool_total == len(spool_letters)
    assert first.to_project == sum(1 for l in spool_letters if w.dest[l.id] in ("a", "b"))
    assert first.to_medulla == sum(1 for l in spool_letters if w.dest[l.id] == "medulla")


def read_box_ids_from_bytes(data: bytes) -> list[str]:
    return [l.letter.id for l in iter_lines(io.BytesIO(data)) if l.outcome == LETTER]


# --- the sweep ---------------------------------------------------------------------


@HEAVY
@given(inp=worlds_input(), distribute_first=st.booleans())
def test_a_sweep_lists_each_letter_of_the_union_once_in_ascending_id_order(tmp_path, inp, distribute_first):
    w = build(tmp_path, inp)
    union: dict[str, object] = {}
    for path in (w.spool, w.box_path("a"), w.box_path("b"), w.box_path("medulla")):
        for _, letter in read_file(path).letters:
            union.setdefault(letter.id, letter)
    expected = sorted(i for i, l in union.items() if not l.is_mission)
    doc = sweep(w.run(), distribute_first=distribute_first).doc
    ids = [l["id"] for l in doc["letters"]]
    assert ids == expected
    assert doc["total"] == len(ids)
    assert doc["open"] == sum(1 for l in doc["letters"] if l["state"] in ("wet_ink", "in_flight"))
    assert doc["unreachable"] == ["repo-gone"]
    for view in doc["letters"]:
        assert list(view) == ["id", "ts", "agent", "class", "repo", "brain", "tool", "what", "expected", "snippet",
                              "answers", "answered_by", "state"]
        assert view["answered_by"] == sorted(view["answered_by"])


@HEAVY
@given(inp=worlds_input())
def test_distributing_never_changes_what_the_sweep_shows(tmp_path, inp):
    w = build(tmp_path, inp)
    before = sweep(w.run(), distribute_first=False).doc
    during = sweep(w.run(), distribute_first=True).doc
    after = sweep(w.run(), distribute_first=False).doc
    assert before == after
    assert {k: v for k, v in during.items() if k != "distribution"} == \
        {k: v for k, v in before.items() if k != "distribution"}


OPS = st.lists(st.sampled_from(["distribute", "sweep", "peek", "forget", "more", "git", "torn", "lose",
                                 "rollback", "toggle_b", "twin_a"]), min_size=1, max_size=8)


def without_appended(doc: dict) -> dict:
    doc = dict(doc)
    if doc.get("distribution") is not None:
        doc["distribution"] = {k: v for k, v in doc["distribution"].items() if k != "appended"}
    return doc


@HEAVY
@given(inp=worlds_input(), ops=OPS, extra=st.lists(specs, min_size=8, max_size=8))
def test_the_document_never_depends_on_what_earlier_runs_left_in_state(tmp_path, inp, ops, extra):
    w = build(tmp_path, inp)
    backup = os.path.join(w.dir, "..", os.path.basename(w.dir) + "-state-backup")

    def perform(op):
        if op == "distribute":
            return {"receipt": distribute(w.run()).as_json()}
        doc = sweep(w.run(), distribute_first=(op == "sweep")).doc
        return {"doc": doc, "bytes": jsonout.dumps(doc)}

    lost = False
    for n, op in enumerate(ops):
        if op == "lose":  # a checkout takes repo-a's box away
            if os.path.exists(w.box_path("a")):
                os.unlink(w.box_path("a"))
            continue
        if op == "rollback":  # a checkout takes repo-a's box back to its first line
            path = w.box_path("a")
            if os.path.exists(path):
                first = open(path, "rb").read().split(b"\n", 1)[0]
                with open(path + ".older", "wb") as fh:
                    fh.write(first + b"\n" if first else b"")
                os.replace(path + ".older", path)
                lost = True
            continue
        if op == "forget":
            shutil.rmtree(w.state(), ignore_errors=True)
            continue
        if op == "toggle_b":  # repo-b stops (or starts again) being a root of the run
            w.with_b = not w.with_b
            continue
        if op == "twin_a":  # a second reachable "repo-a" makes the name ambiguous, or stops doing so
            os.makedirs(w.twin_a, exist_ok=True)
            w.with_twin = not w.with_twin
            continue
        if op == "more":
            w.add_to_spool(extra[n])
            continue
        if op == "git":
            w.arrive_by_git("b", extra[n])
            continue
        if op == "torn":  # a writer mid-append: an unfinished tail, completed by the next "more"
            data = open(w.spool, "rb").read() if os.path.exists(w.spool) else b""
            if not data or data.endswith(b"\n"):
                w.append(w.spool, b'{"repo":"all","what":"torn')
            continue
        files_before = w.files()
        actual = perform(op)
        files_after = w.files()
        shutil.rmtree(backup, ignore_errors=True)
        if os.path.isdir(w.state()):
            shutil.copytree(w.state(), backup, symlinks=True)
        # A first run over the same spool, roster and boxes: same files, no state.
        w.restore(files_before)
        shutil.rmtree(w.state(), ignore_errors=True)
        fresh = perform(op)
        if not lost:  # refilling a rolled-back box is pinned by test_boxes.py (checked out without a letter)
            assert w.files() == files_after, op
        else:
            w.restore(files_after)
        if "doc" in actual:
            assert without_appended(actual["doc"]) == without_appended(fresh["doc"]), op
            if actual["doc"]["distribution"] is None or \
                    actual["doc"]["distribution"]["appended"] == fresh["doc"]["distribution"]["appended"]:
                assert actual["bytes"] == fresh["bytes"]
        else:
            assert {k: v for k, v in actual["receipt"].items() if k != "appended"} == \
                {k: v for k, v in fresh["receipt"].items() if k != "appended"}, op
        # Go on with the state the earlier runs left.
        shutil.rmtree(w.state(), ignore_errors=True)
        if os.path.isdir(backup):
            shutil.copytree(backup, w.state(), symlinks=True)


# --- JSON rendering ----------------------------------------------------------------

SPECIAL_CHARS = ["\x00", "\x01", "\x08", "\t", "\n", "\x0b", "\x0c", "\r", "\x1f", "\x7f", "\x80", "\x85", "\u00e9",
                 "\u2028", "\u2029", "\ufeff", "\uffff", "\U0001f600", "\U0010ffff", '"', "\\", "/", "<", "&"]
doc_text = st.text(alphabet=st.one_of(st.characters(exclude_categories=["Cs"]), st.sampled_from(SPECIAL_CHARS)),
                   max_size=12)
doc_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), doc_text)
docs = st.recursive(doc_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(doc_text, inner, max_size=4)), max_leaves=20)


@settings(PROPS, max_examples=200)
@given(doc=docs)
def test_json_rendering_is_byte_identical_to_python_json_dumps(doc):
    expected = (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    assert jsonout.dumps(doc) == expected


@settings(PROPS, max_examples=100)
@given(inp=worlds_input())
def test_real_sweep_documents_render_byte_identical_to_python_json_dumps(tmp_path, inp):
    doc = sweep(build(tmp_path, inp).run(), distribute_first=True).doc
    assert jsonout.dumps(doc) == (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
