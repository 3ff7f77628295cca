"""Hostile input: the parser, the ownership law and the merge driver under hypothesis.

Arbitrary bytes, huge lines, deep nesting, control characters, invalid UTF-8, lone
surrogates, and path tricks (`..`, `~user`, trailing slashes, NUL bytes, very long
paths, symlinks that lead outside a root).  Never a traceback; never a write outside
a registered root's `.m1nd/` or the home.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_cli, write_spool
from m1nd.gitops.merge import merge_files, union
from m1nd.letters import BLANK, LETTER, MALFORMED, TAIL, classify, iter_lines, letter_id, load, parse, read_file
from m1nd.secrets import likely_secret
from m1nd.routing import ASCII_WS, MEDULLA, PENDING, PROJECT, build_roots, normalize, path_form

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# --- hostile lines ---------------------------------------------------------------------

FIELDS = ("ts", "agent", "class", "repo", "brain", "tool", "what", "expected", "snippet")
INVALID_UTF8 = [b"\xff", b"\xfe", b"\xc0\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xed\xbf\xbf",
                b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"\xa0\xa1"]
LONE_SURROGATE_ESCAPES = [b"\\ud800", b"\\udfff", b"\\udbff\\u0041", b"\\ud800\\ud800", b"\\udc00\\ud800"]
CONTROL = [bytes([c]) for c in list(range(0, 32)) + [127]]


def letter(**fields) -> bytes:
    """A letter line; a field with a lone surrogate gets Python's `\\udXXX` escape
    (orjson refuses to encode it), which makes the line malformed."""
    doc = {"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "what": "x", **fields}
    try:
        return orjson.dumps(doc)
    except TypeError:
        return json.dumps(doc).encode()


def nested(depth: int, kind: str) -> bytes:
    if kind == "array":
        return b"[" * depth + b"]" * depth
    if kind == "object":
        return b'{"a":' * depth + b"1" + b"}" * depth
    if kind == "in a field":
        return b'{"what":"x","extra":' + b"[" * depth + b"]" * depth + b"}"
    return b'{"what":' + b"[" * depth  # unbalanced, never closed


def hostile_json_strings():
    """Letter-shaped lines with raw bytes spliced into a string value."""
    splice = st.one_of(st.sampled_from(INVALID_UTF8), st.sampled_from(LONE_SURROGATE_ESCAPES),
                       st.sampled_from(CONTROL), st.binary(max_size=8),
                       st.text(max_size=8).map(lambda t: t.encode("utf-8", "surrogatepass")),
                       st.sampled_from(["\ud800", "a\udfffb", "\udc80"]).map(lambda t: t.encode("utf-8", "surrogatepass")))
    return st.builds(lambda field, a, b: b'{"' + field.encode() + b'":"' + a + b + b'"}',
                     st.sampled_from(FIELDS), st.text(max_size=6).map(str.encode), splice)


def typed_fields():
    """Every listed field with a value of any JSON type (the wrong ones make it malformed)."""
    values = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False) | st.text(max_size=5),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                          max_leaves=6)
    keys = st.sampled_from(FIELDS + ("answers", "kind", "id", "other"))
    return st.dictionaries(keys, values, max_size=5).map(orjson.dumps)


hostile_line = st.one_of(
    st.binary(max_size=60),
    hostile_json_strings(),
    typed_fields(),
    st.builds(nested, st.integers(1, 6000), st.sampled_from(["array", "object", "in a field", "unbalanced"])),
    st.sampled_from([b"", b" ", b"\t", b"\r", b"\x0b\x0c", b"\xc2\xa0", b"{}", b"[]", b"null", b"1e400", b'{"a":1e400}',
                     b'{"a":NaN}', b'{"a":Infinity}', b'{"a":99999999999999999999999}', b'{"a":-1e309}', b'{"a":1,}', b'{"what":"x"} trailing', b'\xef\xbb\xbf{"what":"x"}',
                     b'{"answers":[1]}', b'{"answers":"x"}', b'{"kind":null}', b'{"kind":5}', b'{"repo":null}',
                     b"<<<<<<< HEAD", b"=======", b">>>>>>> theirs", letter(), letter(repo="../..", brain="~root")]),
)


def check_classified(raw: bytes, terminated: bool) -> str:
    obj = load(raw)
    parsed = parse(raw)
    outcome, found = classify(raw, terminated)
    assert (obj is None) == (parsed is None)
    if not raw.strip():
        assert outcome == BLANK
    elif parsed is not None:
        assert outcome == LETTER and found == parsed
        assert parsed.id == letter_id(raw) == hashlib.sha256(raw).hexdigest()[:12]
        assert parsed.raw == raw
        for name in ("ts", "agent", "repo", "brain", "tool", "what", "expected", "snippet"):
            assert isinstance(getattr(parsed, name), str)
        assert isinstance(parsed.klass, str)
        assert all(isinstance(a, str) for a in parsed.answers)
        assert parsed.kind is None or isinstance(parsed.kind, str)
    else:
        assert outcome == (MALFORMED if terminated else TAIL)
    return outcome


@settings(FUZZ, max_examples=600)
@given(raw=hostile_line, terminated=st.booleans())
def test_parse_load_and_classify_never_raise_on_hostile_lines(raw, terminated):
    check_classified(raw, terminated)


@settings(FUZZ, max_examples=300)
@given(raw=st.binary(max_size=400))
def test_parse_never_raises_on_arbitrary_bytes(raw):
    check_classified(raw, True)


def test_deep_nesting_is_malformed_not_a_recursion_error():
    """RFC 8259 lets a parser limit nesting depth; the contract's limit is 64 levels, so a
    deeper letter is malformed (a shallower one with a valid object is a letter)."""
    assert parse(nested(60, "object")) is not None
    assert parse(nested(60, "in a field")) is not None
    for depth in (70, 300, 1_100, 5_000, 100_000):
        for kind in ("array", "object", "in a field", "unbalanced"):
            assert parse(nested(depth, kind)) is None, (depth, kind)


@pytest.mark.parametrize("escape", LONE_SURROGATE_ESCAPES)
def test_a_lone_surrogate_escape_makes_the_line_malformed(escape):
    assert parse(b'{"what":"' + escape + b'"}') is None
    assert parse(b'{"what":"\\ud83d\\ude00"}') is not None  # a proper pair is fine


@pytest.mark.parametrize("bad", INVALID_UTF8 + [b"\x00", b"\x1f"])
def test_invalid_utf8_or_raw_control_characters_inside_a_string_are_malformed(bad):
    assert parse(b'{"what":"a' + bad + b'b"}') is None


def expected_lines(data: bytes) -> list[tuple[int, bytes, bool]]:
    """(number, raw, terminated) by the contract's own words, independent of m1nd."""
    if not data:
        return []
    chunks = data.split(b"\n")
    terminated = [True] * (len(chunks) - 1) + [False]
    if data.endswith(b"\n"):
        chunks, terminated = chunks[:-1], terminated[:-1]
    out = []
    for number, (chunk, term) in enumerate(zip(chunks, terminated), 1):
        out.append((number, chunk[:-1] if chunk.endswith(b"\r") else chunk, term))
    return out


def assert_every_line_accounted_for(path: Path, data: bytes) -> None:
    read = read_file(str(path))
    lines = expected_lines(data)
    letters = {n: l for n, l in read.letters}
    malformed = set(read.malformed)
    assert len(letters) == len(read.letters) and len(malformed) == len(read.malformed)
    assert read.size == len(data)
    for number, raw, terminated in lines:
        blank = not raw.strip()
        kinds = [number in letters, number in malformed, blank, read.unfinished_tail == number]
        assert sum(kinds) == 1, (number, raw[:40], kinds)
        if number in letters:
            assert letters[number].raw == raw and letters[number].id == letter_id(raw)
            assert load(raw) is not None
        elif not blank:
            assert load(raw) is None
            assert (number in malformed) == terminated
    assert set(letters) | malformed <= {n for n, _, _ in lines}
    assert read.unfinished_tail in (None, len(lines))
    # the streaming reader agrees line by line
    with open(path, "rb") as fh:
        streamed = list(iter_lines(fh))
    assert [(l.number, l.raw, l.terminated) for l in streamed] == lines
    for line in streamed:
        if line.outcome == LETTER:
            assert line.number in letters
        elif line.outcome == MALFORMED:
            assert line.number in malformed
        elif line.outcome == TAIL:
            assert read.unfinished_tail == line.number


@settings(FUZZ, max_examples=250)
@given(lines=st.lists(hostile_line, max_size=10), seps=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\n"]),
                                                                   min_size=10, max_size=10),
       end=st.sampled_from([b"", b"\n", b"\r\n", b"\r"]))
def test_read_file_accounts_for_every_line_of_a_hostile_file(tmp_path, lines, seps, end):
    data = b"".join(sep + line for sep, line in zip([b""] + seps, lines)) + end
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(data)
    assert_every_line_accounted_for(path, data)


@settings(FUZZ, max_examples=4)
@given(size=st.integers(1 << 20, 5 << 20), kind=st.sampled_from(["letter", "malformed", "binary", "nested"]),
       terminated=st.booleans())
def test_huge_lines_of_one_to_five_megabytes(tmp_path, size, kind, terminated):
    if kind == "letter":
        huge = letter(what="a" * size, snippet="é" * 100)
    elif kind == "malformed":
        huge = b'{"what":"' + b"a" * size
    elif kind == "binary":
        huge = (bytes(range(256)).replace(b"\n", b"") * (size // 255 + 1))[:size]
    else:
        huge = nested(size // 2, "array")
    data = letter(what="before") + b"\n" + huge + (b"\n" if terminated else b"")
    path = tmp_path / "huge.jsonl"
    path.write_bytes(data)
    assert_every_line_accounted_for(path, data)
    assert (parse(huge) is not None) == (kind == "letter")
    # the held check reads every letter bound for a project: one over 64 KiB is held, unscanned
    assert likely_secret(huge) == "oversized"


# --- the ownership law ---------------------------------------------------------------------


def make_tree(top: Path) -> dict:
    """Roots, an outside directory, and symlinks that lead out of a root.

    src/repo-a (root)  with sub/, nested/ (root too), escape -> ../../outside, up -> ..,
                       loop -> loop, dangling -> ../../nowhere
    src/repo-b (root)  and src/alias -> repo-b (registered too: deduplicated)
    src/repo-c (root)  whose .m1nd is a symlink to outside/box (refused)
    src/ghost (registered, missing), src/afile (registered, a regular file)
    outside/           never a root, with a file and a box-shaped directory
    """
    src = top / "src"
    a, b, c = src / "repo-a", src / "repo-b", src / "repo-c"
    for d in (a / "sub", a / "nested", b, c, top / "outside" / "box", top / "outside" / "repo-a"):
        d.mkdir(parents=True, exist_ok=True)
    (top / "outside" / "notes.txt").write_bytes(b"outside\n")
    (top / "outside" / "box" / "inbox.jsonl").write_bytes(b"")
    os.symlink("../../outside", a / "escape")
    os.symlink("..", a / "up")
    os.symlink("loop", a / "loop")
    os.symlink("../../nowhere", a / "dangling")
    os.symlink("repo-b", src / "alias")
    os.symlink("../../outside/box", c / ".m1nd")
    (src / "afile").write_bytes(b"a file, not a directory\n")
    roots = [a, b, a / "nested", c, src / "ghost", src / "afile", src / "alias", str(b) + "/"]
    return {"top": top, "a": a, "b": b, "c": c, "outside": top / "outside", "roots": [str(r) for r in roots]}


COMPONENTS = ["..", ".", "", "escape", "up", "loop", "dangling", "sub", "nested", "x", "repo-a", "repo-b", "outside",
              ".m1nd", "inbox.jsonl", "~", "~root", "\x00", "a" * 300, " ", "repo-a (annotation)", "/"]
BASES = ["{a}", "{b}", "{c}", "{top}/outside", "{top}", "{top}/src", "{top}/src/alias", "{top}/src/ghost",
         "{top}/src/afile", "/", "//", "", "~", "~/", "~root", "~nobody-here", "..", "../..", ".", "/etc", "/tmp",
         "project:{a}", "PROJECT:{b}", "  {a}  ", "{a} (a note)", "{top}/src/repo-a/../repo-b"]
TRICKY = ["", " ", "all", "ALL", "medulla", "Medulla", "research task 7", "..", "../..", "../../..", "~", "~user/x",
          "~root", "/", "//", "///", "/.", "/..", ".", "\x00", "repo-a\x00", "/\x00/", "a" * 5000, "/" + "a/" * 3000,
          "project:", "project:..", "project:~", "project:/", "(", "repo-a (main)", "repo-a-wt", "REPO-A", "repo-b/",
          "repo-a//", "\ud800", "\udc80/repo-a", "~\x00", "~a\x00b", "\t\n\r\x0b\x0c", "ñ/", "repo-a\n"]


@st.composite
def field_templates(draw):
    """A brain or repo field, with `{a}`, `{b}`, `{c}`, `{top}` standing for tree paths."""
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(st.sampled_from(TRICKY))
    if choice == 1:
        return draw(st.text(max_size=30))
    comps = draw(st.lists(st.sampled_from(COMPONENTS), max_size=6))
    trail = draw(st.sampled_from(["", "/", "//", "/.", "/..", "/./", " (note)", "\x00"]))
    return draw(st.sampled_from(BASES)) + ("/" if comps else "") + "/".join(comps) + trail


def fill(template: str, tree: dict) -> str:
    for key in ("top", "a", "b", "c"):
        template = template.replace("{" + key + "}", str(tree[key]))
    return template


def realpath_or_none(path: str) -> str | None:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@pytest.fixture
def law_tree(tmp_path):
    tree = make_tree(tmp_path / "tree")
    roots = build_roots(None, tree["roots"][:3], tree["roots"][3:], str(tmp_path / "m1nd-home"))
    return tree, roots


def test_the_tree_registers_the_roots_it_means_to(law_tree):
    tree, roots = law_tree
    reachable = {r.path for r in roots.reachable}
    assert reachable == {str(tree["a"]), str(tree["b"]), str(tree["a"] / "nested"), str(tree["c"])}
    assert all(not r.reachable for r in roots.unreachable)
    assert len(roots.roots) == 6  # alias and "repo-b/" are repo-b again


@settings(FUZZ, max_examples=1500)
@given(brain=field_templates(), repo=field_templates())
def test_resolve_never_raises_and_never_names_a_root_that_is_not_registered_and_reachable(law_tree, brain, repo):
    tree, roots = law_tree
    brain, repo = fill(brain, tree), fill(repo, tree)
    route = roots.resolve(brain, repo)
    assert route.kind in (PROJECT, MEDULLA, PENDING)
    if route.kind != PROJECT:
        assert route.root is None
        return
    assert route.root in roots.reachable
    assert os.path.isdir(route.root.path)
    assert route.root.box == os.path.join(route.root.path, ".m1nd", "inbox.jsonl")
    # Either the field is a path that really lies inside that root, or its name is the root's label.
    field = repo
    if brain.strip(ASCII_WS):
        field = brain
        if brain.strip(ASCII_WS).lower().startswith("project:"):
            field = brain.strip(ASCII_WS)[len("project:"):]
    form = path_form(field)
    real = realpath_or_none(form) if form.startswith("/") else None
    by_path = real is not None and inside(real, route.root.real)
    by_name = normalize(field, roots.base).lower() == route.root.key
    assert by_path or by_name, (field, route.root.path)
    if real is not None and not by_name:
        assert inside(real, route.root.real)
    # A path that leads outside through a symlink or `..` never lands in repo-a by path.
    if real is not None and inside(real, str(tree["outside"])):
        assert by_name


@settings(FUZZ, max_examples=300)
@given(given_roots=st.lists(st.one_of(field_templates(), st.text(max_size=20)), max_size=6),
       bound=st.one_of(st.none(), st.sampled_from(["{a}", "{b}", "{top}/src/ghost", "/"])))
def test_build_roots_never_raises_on_any_root_strings(law_tree, given_roots, bound):
    tree, _ = law_tree
    given_roots = [fill(r, tree) for r in given_roots]
    roots = build_roots(fill(bound, tree) if bound else None, given_roots, [], str(tree["top"] / "home"))
    reals = [r.real for r in roots.roots]
    assert len(reals) == len(set(reals))
    for root in roots.roots:
        assert root.path.startswith("/")
        assert root.path == "/" or not root.path.endswith("/")
        assert root.reachable == (os.path.isdir(root.path) and not root.refused)
    for key, root in roots.known.items():
        assert root.reachable and root.key == key
    for field in given_roots[:3]:
        roots.resolve(field, field)
        roots.resolve("", field)


def test_a_roster_entry_naming_a_user_with_a_nul_byte_is_an_unreachable_root_not_a_crash(tmp_path, cli, m1nd_home):
    """Regression: `~user` expansion looks the user up, and a NUL in the name raised
    ValueError out of build_roots, so every command died with a traceback."""
    roots = build_roots(None, ["~x\x00y", "~\udc80", "/a\x00b"], [], str(m1nd_home))
    assert [r.reachable for r in roots.roots] == [False, False, False]
    m1nd_home.mkdir()
    (m1nd_home / "roster.json").write_bytes(orjson.dumps({"roots": ["~x\x00y"]}))
    write_spool(m1nd_home / "field-reports.jsonl", [letter(repo="repo-a")])
    for args in (["sweep", "--json"], ["distribute", "--json"], ["doctor", "--json"]):
        result = cli(*args)
        assert result.code == 0, (args, result.stderr)
        assert "Traceback" not in result.stderr
        orjson.loads(result.stdout)


# --- end to end: nothing outside the registered roots' .m1nd and the home ------------------


def snapshot(top: Path, exclude: list[str]) -> dict:
    """Every entry under `top` (symlinks not followed): its type, and for files their
    size, mtime and content hash, for symlinks their target."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in exclude]
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if path in exclude:
                continue
            st_ = os.lstat(path)
            if stat.S_ISLNK(st_.st_mode):
                state[path] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st_.st_mode):
                state[path] = ("dir",)
            else:
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
                state[path] = ("file", st_.st_size, st_.st_mtime_ns, digest)
    return state


spool_line = st.one_of(
    st.builds(lambda b, r, what: letter(brain=b, repo=r, what=what), field_templates(), field_templates(),
              st.sampled_from(["x", "a report", "token=abc123def leaked"])),
    st.builds(lambda r: letter(repo=r), field_templates()),
    hostile_line,
)


@settings(FUZZ, max_examples=80)
@given(lines=st.lists(spool_line, min_size=1, max_size=14), end=st.sampled_from([b"", b"\n"]))
def test_distribution_never_writes_outside_the_registered_roots_and_the_home(tmp_path, lines, end):
    top = Path(tempfile.mkdtemp(dir=tmp_path, prefix="e2e-"))
    tree = make_tree(top / "tree")
    home = top / "home"
    spool = top / "spool.jsonl"
    filled = []
    for raw in lines:
        for key in ("top", "a", "b", "c"):
            raw = raw.replace(b"{" + key.encode() + b"}", str(tree[key]).encode())
        filled.append(raw.replace(b"\n", b" "))
    spool.write_bytes(b"\n".join(filled) + end)
    spool_bytes = spool.read_bytes()
    root_args = [arg for root in tree["roots"] for arg in ("--root", root)]
    boxes = [str(tree["a"] / ".m1nd"), str(tree["b"] / ".m1nd"), str(tree["a"] / "nested" / ".m1nd")]
    exclude = [str(home)] + boxes
    before = snapshot(tmp_path, exclude)

    runs = [run_cli("distribute", "--json", "--home", str(home), "--spool", str(spool), *root_args),
            run_cli("sweep", "--json", "--home", str(home), "--spool", str(spool), *root_args),
            run_cli("doctor", "--json", "--home", str(home), "--spool", str(spool), *root_args)]
    for result in runs:
        assert result.code in (0, 1), result.stderr  # 1: repo-c's box is refused (a symlinked .m1nd)
        assert "Traceback" not in result.stderr
        orjson.loads(result.stdout)

    assert snapshot(tmp_path, exclude) == before
    assert spool.read_bytes() == spool_bytes
    assert os.readlink(tree["c"] / ".m1nd") == "../../outside/box"
    assert (tree["outside"] / "box" / "inbox.jsonl").read_bytes() == b""
    spool_lines = {line[:-1] if line.endswith(b"\r") else line for line in spool_bytes.split(b"\n")}
    for box_dir in boxes + [str(home)]:
        if not os.path.isdir(box_dir):
            continue
        if box_dir != str(home):
            assert set(os.listdir(box_dir)) <= {".gitignore", "inbox.jsonl"}
        box = os.path.join(box_dir, "inbox.jsonl")
        if os.path.exists(box):
            data = Path(box).read_bytes()
            assert data.endswith(b"\n")
            assert set(data[:-1].split(b"\n")) <= spool_lines, "a box holds only spool letters"


# --- the merge driver ----------------------------------------------------------------------

LETTERS = [letter(what=w) for w in ("a", "b", "c", "d")]
merge_line = st.one_of(
    st.sampled_from(LETTERS),
    st.sampled_from(LETTERS).map(lambda l: l + b"\r"),  # the same letter, CRLF
    st.sampled_from(LETTERS).map(lambda l: b"  " + l),  # padded: another letter
    hostile_line.filter(lambda b: b"\n" not in b),
    st.sampled_from([b"<<<<<<< ours", b"=======", b">>>>>>> theirs", b"", b" ", b"\r", b"\t\r"]),
)
merge_file = st.one_of(
    st.builds(lambda lines, end: b"\n".join(lines) + end, st.lists(merge_line, max_size=10),
              st.sampled_from([b"", b"\n", b"\r\n", b"\n\n"])),
    st.binary(max_size=200),
)


def stored_lines(data: bytes) -> list[bytes]:
    """The non-blank lines of a box as stored (a trailing `\\r` kept)."""
    out = []
    for chunk in data.split(b"\n"):
        raw = chunk[:-1] if chunk.endswith(b"\r") else chunk
        if raw.strip():
            out.append(chunk)
    return out


def identity(line: bytes):
    raw = line[:-1] if line.endswith(b"\r") else line
    return ("letter", letter_id(raw)) if parse(raw) is not None else ("bytes", line)


def check_union(ours: bytes, theirs: bytes, base: bytes) -> bytes:
    result = union(ours, theirs, base)
    inputs = stored_lines(ours) + stored_lines(theirs) + stored_lines(base)
    out = stored_lines(result)
    assert result == b"".join(line + b"\n" for line in out), "no blank line, and every line ends with \\n"
    assert (result == b"") == (not inputs)
    assert result == b"" or result.endswith(b"\n")
    ids = [identity(line) for line in out]
    assert len(ids) == len(set(ids)), "each letter id and each malformed line once"
    assert set(ids) == {identity(line) for line in inputs}, "the union of the three"
    assert set(out) <= set(inputs), "every line comes from an input: no conflict marker introduced"
    # OURS first, in order
    seen, head = set(), []
    for line in stored_lines(ours):
        if identity(line) not in seen:
            seen.add(identity(line))
            head.append(line)
    assert out[:len(head)] == head
    # idempotent: merging the result with itself, or with any input again, changes nothing
    assert union(result, result, result) == result
    assert union(result, b"", b"") == result
    assert union(result, theirs, base) == result
    assert union(result, ours, theirs) == result
    return result


@settings(FUZZ, max_examples=500)
@given(base=merge_file, ours=merge_file, theirs=merge_file)
def test_the_merge_is_the_union_of_arbitrary_inputs_and_idempotent(base, ours, theirs):
    check_union(ours, theirs, base)


@settings(FUZZ, max_examples=3)
@given(size=st.integers(1 << 20, 3 << 20), which=st.sampled_from(["ours", "theirs", "base"]))
def test_the_merge_handles_huge_lines(size, which):
    huge = {"letter": letter(what="h" * size), "malformed": b"{" + b"x" * size}
    files = {"ours": LETTERS[0] + b"\n", "theirs": LETTERS[1] + b"\n", "base": b""}
    files[which] += huge["letter"] + b"\n" + huge["malformed"]
    check_union(files["ours"], files["theirs"], files["base"])


@settings(FUZZ, max_examples=60)
@given(base=merge_file, ours=merge_file, theirs=merge_file, via_cli=st.booleans())
def test_the_merge_driver_writes_the_union_into_ours_and_nothing_else(tmp_path, base, ours, theirs, via_cli):
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = {name: where / f"{name}.tmp" for name in ("base", "ours", "theirs")}
    for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
        paths[name].write_bytes(data)
    if via_cli:
        result = run_cli("merge-driver", str(paths["base"]), str(paths["ours"]), str(paths["theirs"]))
        assert result.code == 0 and result.stdout == "" and result.stderr == ""
    else:
        merge_files(str(paths["base"]), str(paths["ours"]), str(paths["theirs"]))
    assert paths["ours"].read_bytes() == union(ours, theirs, base)
    assert paths["base"].read_bytes() == base and paths["theirs"].read_bytes() == theirs
    assert sorted(os.listdir(where)) == ["base.tmp", "ours.tmp", "theirs.tmp"], "no temporary file left behind"
    # merging again is a no-op
    merge_files(str(paths["base"]), str(paths["ours"]), str(paths["theirs"]))
    assert paths["ours"].read_bytes() == union(ours, theirs, base)


def test_the_merge_driver_given_paths_with_tricks_fails_cleanly_or_merges(tmp_path, cli):
    where = tmp_path / "merge"
    where.mkdir()
    (where / "ours").write_bytes(LETTERS[0] + b"\n")
    (where / "theirs").write_bytes(LETTERS[1] + b"\n")
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"outside\n")
    os.symlink(outside, where / "link")
    # OURS through a symlink: the result replaces the link, the file it pointed at is untouched
    result = cli("merge-driver", str(where / "missing"), str(where / "link"), str(where / "theirs"))
    assert result.code == 0
    assert outside.read_bytes() == b"outside\n"
    assert (where / "link").read_bytes() == b"outside\n" + LETTERS[1] + b"\n"
    # OURS a directory, or in a missing directory: one error line, exit 1, no traceback
    for ours in (where, where / "nope" / "ours", where / "ours" / ".."):
        result = cli("merge-driver", str(where / "missing"), str(ours), str(where / "theirs"))
        assert result.code == 1, ours
        assert result.stderr.startswith("m1nd: error: merge driver") and result.stderr.count("\n") == 1


# --- argv bytes that are not UTF-8 (known bugs: outside this file's modules) ---------------


def _argv_bytes_not_utf8(*args: bytes, codes=(1, 2)) -> None:
    from conftest import run_script

    proc = run_script(*args)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-300:]
    assert proc.returncode in codes
    assert proc.stderr.count(b"\n") <= 1


@pytest.mark.parametrize("args", [[b"write", b"--what", b"bad \xff byte"], [b"write", b"--what", b"ok", b"--repo", b"\xfe"],
                                  [b"pickup", b"0123456789ab", b"--what", b"\xff"]], ids=["what", "repo", "pickup"])
def test_write_with_argument_bytes_that_are_not_utf8_is_a_clean_error(args, spool_path):
    _argv_bytes_not_utf8(*args)
    assert not spool_path.exists()


def test_roster_add_of_a_path_that_is_not_utf8_is_a_clean_error_or_works(tmp_path):
    _argv_bytes_not_utf8(b"roster", b"add", os.fsencode(str(tmp_path)) + b"/\xff", codes=(0, 1, 2))


@pytest.mark.parametrize("args", [[b"sweep", b"--json", b"--home", b"/nonexistent/h\xff"],
                                  [b"doctor", b"--json", b"--root", b"/nonexistent/\xff"]], ids=["sweep", "doctor"])
def test_json_output_naming_a_path_that_is_not_utf8_is_not_a_traceback(args):
    from conftest import run_script

    proc = run_script(*args)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")[-300:]
