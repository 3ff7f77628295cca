"""`m1nd merge-driver BASE OURS THEIRS`: the union of a box's three versions by letter id."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from m1nd.gitops.merge import merge_files, union
from m1nd.letters import letter_id


def letter(what: str, **extra) -> bytes:
    return orjson.dumps({"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "repo": "repo-a", "what": what, **extra})


A, B, C, D, E = (letter(x) for x in "abcde")


def box(*lines: bytes, end: bytes = b"\n") -> bytes:
    return b"\n".join(lines) + (end if lines else b"")


def lines_of(data: bytes) -> list[bytes]:
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


def test_union_order_is_ours_then_theirs_then_base():
    result = union(ours=box(B, A), theirs=box(A, C, D), base=box(E, A))
    assert lines_of(result) == [B, A, C, D, E]


def test_a_line_deleted_on_one_side_comes_back():
    base = box(A, B, C)
    ours = box(A, C)  # we deleted B
    theirs = box(A, B, C, D)
    assert lines_of(union(ours, theirs, base)) == [A, C, B, D]
    # deleted on both sides: the base brings it back
    assert lines_of(union(box(A), box(A), base)) == [A, B, C]


def test_malformed_lines_are_compared_by_bytes_and_kept_once():
    bad1, bad2 = b"{not json", b'{"repo": null}'
    result = union(box(A, bad1), box(bad1, bad2, B), box(bad2, b"{not json "))
    assert lines_of(result) == [A, bad1, bad2, B, b"{not json "]


def test_conflict_markers_are_lines_like_any_other():
    ours = box(b"<<<<<<< HEAD", A, b"=======", B, b">>>>>>> theirs")
    result = union(ours, box(A, C), b"")
    assert lines_of(result) == [b"<<<<<<< HEAD", A, b"=======", B, b">>>>>>> theirs", C]


def test_letters_are_compared_by_id_so_a_crlf_copy_is_the_same_letter():
    assert letter_id(A) == letter_id((A + b"\r")[:-1])
    result = union(box(A + b"\r", B), box(A, C), b"")
    assert lines_of(result) == [A + b"\r", B, C]


def test_result_ends_with_newline_and_blank_lines_are_dropped():
    result = union(box(A, end=b""), box(b"", b"   ", B, end=b""), b"\n\n")
    assert result == A + b"\n" + B + b"\n"
    assert union(b"", b"", b"") == b""


def test_idempotent_and_a_box_only_grows():
    base, ours, theirs = box(A, B), box(A, C), box(B, D)
    once = union(ours, theirs, base)
    assert union(once, once, once) == once
    assert union(once, theirs, base) == once
    assert union(once, ours, ours) == once


lines = st.one_of(
    st.sampled_from([A, B, C, D, E, b"{bad", b"<<<<<<< HEAD", b"=======", b'{"answers": "x"}']),
    st.text(alphabet="abc{}\"", max_size=6).map(lambda s: s.encode()),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(lines, max_size=8), st.lists(lines, max_size=8), st.lists(lines, max_size=8))
def test_union_properties(base, ours, theirs):
    result = union(box(*ours), box(*theirs), box(*base))
    out = result.split(b"\n")[:-1] if result else []
    assert len(out) == len(set(out)), "each distinct line once"
    kept = set(out)
    for line in base + ours + theirs:
        if line.strip():
            assert line in kept, "nothing is lost"
    assert out[: len(dict.fromkeys(l for l in ours if l.strip()))] == list(dict.fromkeys(l for l in ours if l.strip()))
    assert union(result, result, result) == result
    assert union(result, box(*theirs), box(*base)) == result


def test_merge_files_writes_ours_atomically_and_keeps_its_mode(tmp_path):
    where = tmp_path / "merge"
    where.mkdir()
    base, ours, theirs = where / "base", where / "ours", where / "theirs"
    base.write_bytes(box(A))
    ours.write_bytes(box(A, B))
    theirs.write_bytes(box(C))
    ours.chmod(0o640)
    inode = ours.stat().st_ino
    assert merge_files(str(base), str(ours), str(theirs)) == 3
    assert ours.read_bytes() == box(A, B, C)
    assert stat.S_IMODE(ours.stat().st_mode) == 0o640
    assert ours.stat().st_ino != inode, "replaced by rename, never rewritten in place"
    assert sorted(os.listdir(where)) == ["base", "ours", "theirs"], "no temp file left behind"
    assert base.read_bytes() == box(A) and theirs.read_bytes() == box(C)


def test_the_command_exits_0_and_writes_into_ours(cli, tmp_path):
    base, ours, theirs = tmp_path / "b", tmp_path / "o", tmp_path / "t"
    base.write_bytes(b"")
    ours.write_bytes(box(B, A, end=b""))
    theirs.write_bytes(box(A, C))
    result = cli("merge-driver", str(base), str(ours), str(theirs))
    assert result.code == 0, result.stderr
    assert ours.read_bytes() == box(B, A, C)
    assert result.stdout == ""


def test_the_command_fails_cleanly_when_ours_cannot_be_written(cli, tmp_path):
    result = cli("merge-driver", str(tmp_path / "b"), str(tmp_path / "no" / "o"), str(tmp_path / "t"))
    assert result.code == 1
    assert "merge driver" in result.stderr


def test_git_merges_a_box_with_the_driver_and_never_conflicts(make_repo, cli):
    repo = make_repo("repo-a")
    assert cli("init", str(repo)).code == 0
    git = lambda *a: subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)  # noqa: E731
    box_path = repo / ".m1nd" / "inbox.jsonl"
    box_path.write_bytes(box(A))
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-qb", "side")
    box_path.write_bytes(box(B))  # the side deletes A, adds B
    git("commit", "-qam", "side")
    git("checkout", "-q", "main")
    box_path.write_bytes(box(A, C))
    git("commit", "-qam", "main")
    git("merge", "-q", "--no-edit", "side")
    assert box_path.read_bytes() == box(A, C, B)
    driver = subprocess.run(["git", "config", "merge.m1nd-inbox.driver"], cwd=repo, capture_output=True, text=True)
    assert driver.stdout.split()[0] in (sys.executable, f"'{sys.executable}'")
