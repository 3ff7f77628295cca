"""A git work tree nested inside a root (a submodule, a clone inside a clone) is a root
of its own: where a letter written inside it is filed never depends on the directory a
distribution runs in."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitworld import box_ids, commit_file, consent, git, m1nd, other_home_env

ALLOW_FILE = ("-c", "protocol.file.allow=always")


def consented_origin(tmp_path: Path, name: str) -> Path:
    """A repository consented on another machine: its box arrives with the code, and
    this home's roster never heard of it."""
    origin = tmp_path / "origin" / name
    origin.mkdir(parents=True)
    git(origin, "init", "-q", "-b", "main")
    commit_file(origin, "lib.txt", "v1\n", "start")
    consent(origin, env=other_home_env(tmp_path, "elsewhere"))
    return origin


@pytest.fixture
def superproject(tmp_path) -> tuple[Path, Path]:
    """`super-a`, consented here, with `lib-a` (consented elsewhere) as a submodule at
    `super-a/lib-a`."""
    lib = consented_origin(tmp_path, "lib-a")
    top = tmp_path / "src" / "super-a"
    top.mkdir(parents=True)
    git(top, "init", "-q", "-b", "main")
    commit_file(top, "app.txt", "v1\n", "app start")
    git(top, *ALLOW_FILE, "submodule", "add", "-q", str(lib), "lib-a")
    git(top, "commit", "-qm", "the lib as a submodule")
    sub = top / "lib-a"
    assert (sub / ".m1nd" / "inbox.jsonl").exists()
    consent(top)
    return top, sub


def write_in(directory: Path, what: str) -> str:
    done = m1nd("write", "--what", what, cwd=directory)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def distribute(directory: Path) -> None:
    done = m1nd("distribute", cwd=directory)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("order", ["superproject first", "submodule first"])
def test_a_letter_written_in_a_submodule_lands_in_its_box_once_whichever_directory_distributes_first(
        superproject, order):
    top, sub = superproject
    written = write_in(sub, "the lib's parser drops a field")
    runs = [top, sub] if order == "superproject first" else [sub, top]
    for directory in runs:
        distribute(directory)
        assert box_ids(sub)[written] == 1, f"not once in the submodule's box after a run in {directory}"
        assert box_ids(top)[written] == 0, f"filed into the superproject's box by a run in {directory}"
    assert sum(box_ids(sub).values()) == 1 and sum(box_ids(top).values()) == 0


def test_a_letter_for_a_clone_inside_a_clone_goes_to_the_inner_box_from_the_outer_directory(tmp_path):
    outer = tmp_path / "src" / "repo-a"
    outer.mkdir(parents=True)
    git(outer, "init", "-q", "-b", "main")
    commit_file(outer, "a.txt", "a\n", "start")
    inner = outer / "vendor" / "repo-b"
    git(outer, "clone", "-q", str(consented_origin(tmp_path, "repo-b")), str(inner))
    consent(outer)
    write_in(inner, "inner bug")
    distribute(outer)
    assert sum(box_ids(inner).values()) == 1 and sum(box_ids(outer).values()) == 0
    swept = m1nd("sweep", cwd=outer)
    assert swept.returncode == 0 and "repo-b" in swept.stdout and "inner bug" in swept.stdout, swept.stdout
