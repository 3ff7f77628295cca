"""The report benchmark stays runnable: a tiny run prints its rows with ratios."""

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "reports.py"


@pytest.mark.slow
def test_a_tiny_report_benchmark_prints_prepare_and_nothing_due_with_ratios():
    done = subprocess.run([sys.executable, str(BENCH), "--letters", "300", "--new", "40", "--repos", "3",
                           "--repeat", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {line.split("|")[1].strip(): line.split("|")[3].strip() for line in done.stdout.splitlines()
            if line.startswith("| ") and "---" not in line and "operation" not in line}
    assert list(rows) == ["baseline: read + sha256 + orjson",
                          "`m1nd report prepare` (40 new), first read after they arrived",
                          "`m1nd report prepare` (40 new), read model aggregates current",
                          "`m1nd report`, nothing due"]
    assert all(float(ratio) > 0 for name, ratio in rows.items() if not name.startswith("baseline"))
