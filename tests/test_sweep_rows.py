"""The sweep's table says which box is which and never cuts a class: two roots that
share a label show their paths, and `memory_misdelivery` is printed whole at 80 and
120 columns."""

from __future__ import annotations

import pytest

from conftest import run_cli


def box_rows(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Box"))
    rows = []
    for line in lines[start + 2:]:
        if not line.strip() or line.startswith(("Open:", "(pickups")):
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize("columns", ["80", "120"])
def test_two_roots_sharing_a_label_show_their_paths_in_the_sweep_table(make_repo, tmp_path, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setenv("HOME", str(tmp_path))
    a, b = make_repo("dup", tmp_path / "a"), make_repo("dup", tmp_path / "b")
    for root in (a, b):
        assert run_cli("roster", "add", str(root)).code == 0
    done = run_cli("sweep", "--no-distribute")
    assert done.code == 0, done.stderr
    rows = box_rows(done.stdout)
    labels = [r.split("  ")[0].strip() for r in rows]
    assert "dup (~/a/dup)" in labels and "dup (~/b/dup)" in labels, rows


@pytest.mark.parametrize("columns", ["80", "120"])
def test_a_long_class_is_never_cut_in_the_sweep(make_repo, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    repo = make_repo("repo-a")
    assert run_cli("roster", "add", str(repo)).code == 0
    assert run_cli("write", "--repo", "repo-a", "--class", "memory_misdelivery", "--kind", "leak",
                   "--what", "a letter crossed into another store").code == 0
    done = run_cli("sweep")
    assert done.code == 0, done.stderr
    assert "memory_misdelivery" in done.stdout and "memory_misd…" not in done.stdout
