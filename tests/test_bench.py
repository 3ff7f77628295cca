"""The benchmark stays runnable: a tiny run prints every row of its table."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "run.py"


def test_a_tiny_benchmark_run_prints_every_operation_with_its_ratio(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--letters", "400", "--repos", "3", "--repeat", "1",
                           "--workdir", str(tmp_path / "bench"), "--new", "1,20"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    names = [row.split("|")[1].strip() for row in rows[1:]]
    per_spool = [
        "baseline: read + sha256 + orjson", "first `m1nd distribute`", "first `m1nd sweep` after the first distribution",
        "first read after deleting the read model (rebuilt)", "`m1nd --inbox-sweep --no-distribute`",
        "`m1nd sweep` (human, nothing new)", "`m1nd box repo-001`", "`m1nd show ID`", "`m1nd doctor`",
        "re-run, nothing new", "re-run after 1,000 new letters",
        "`m1nd hook run post-checkout`, nothing new, 400-letter box",
        "`m1nd hook run post-checkout` after 1 new letter, 400-letter box",
    ] + [f"{read} {when}" for read in ("`m1nd sweep`", "`m1nd box repo-001`", "`m1nd show ID`", "`m1nd doctor`",
                                  "`m1nd cases`", "`m1nd report` (scheduled)")
         for when in ("right after 1 new letter", "right after 20 new letters", "with nothing new")]
    # the first scheduled report (every letter) comes before its rows; the manual one after them
    at = per_spool.index("`m1nd report` (scheduled) right after 1 new letter")
    per_spool[at:at] = ["first `m1nd report` (scheduled), every letter"]
    per_spool.append("`m1nd report --since` over every letter")
    assert names == [f"{spool}: {row}" for spool in ("plain", "realistic") for row in per_spool] + [
        "`python -c 'import typer'`", "`m1nd --version`",
        "first distribute at N/4 (memory)", "read-model build + v0 document at N/4 (memory)",
        "first distribute at N/2 (memory)", "read-model build + v0 document at N/2 (memory)",
    ]
    ratios = {row.split("|")[1].strip(): row.split("|")[4].strip() for row in rows[1:]}
    assert float(ratios["plain: first `m1nd distribute`"]) > 0
    assert float(ratios["realistic: `m1nd sweep` (human, nothing new)"]) > 0
    assert float(ratios["realistic: `m1nd doctor` right after 20 new letters"]) > 0
    assert float(ratios["realistic: `m1nd report` (scheduled) right after 20 new letters"]) > 0


@pytest.mark.parametrize("mode", [["--new-letters", "5"], ["--new-letters", "0", "--blocks"]],
                         ids=["alternating-after-new-letters", "in-blocks-with-nothing-new"])
def test_a_tiny_comparison_of_two_trees_prints_every_read_with_its_ratio(tmp_path, mode):
    root = str(BENCH.parent.parent)
    done = subprocess.run([sys.executable, str(BENCH.parent / "compare.py"), "--old", root, "--new", root,
                           "--workdir", str(tmp_path / "cmp"), "--letters", "300", "--repos", "3",
                           "--rounds", "1", *mode], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith("| `m1nd ")]
    assert [r[1].strip() for r in rows] == ["`m1nd sweep`", "`m1nd box repo-001`", "`m1nd show ID`",
                                           "`m1nd doctor`", "`m1nd cases`"]
    assert all(float(r[2]) > 0 and float(r[3]) > 0 and float(r[4]) > 0 and float(r[6].strip(" ×")) > 0
               for r in rows)
    assert "baseline (bench/baseline.py, median of 3) before " in done.stdout
    assert ("first command of each block" in done.stdout) == ("--blocks" in mode)
