"""bench/serve.py stays runnable: a tiny run prints its rows with a ratio."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "serve.py"


def test_a_tiny_serve_benchmark_prints_the_per_request_ratio(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--letters", "400", "--repos", "3", "--requests", "5",
                           "--repeat", "1", "--workdir", str(tmp_path / "bench")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {row.split("|")[1].strip(): row.split("|")[3].strip()
            for row in done.stdout.splitlines() if row.startswith("| ") and "---" not in row}
    ratio = rows["`GET /api/mailbox?brain=repo-000`, median per request"]
    assert float(ratio) > 0


def test_the_load_mode_prints_every_route_with_no_error_on_a_tiny_mailbox(tmp_path):
    done = subprocess.run([sys.executable, str(BENCH), "--load", "--letters", "500", "--repos", "3", "--clients", "4",
                           "--seconds", "2", "--workdir", str(tmp_path / "bench")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {row.split("|")[1].strip(): row.split("|")[2:-1] for row in done.stdout.splitlines()
            if row.startswith("| ") and "---" not in row and "route" not in row}
    assert set(rows) == {"`/`", "`/api/mailbox`", "`/api/letters/ID`", "`/api/health`", "all"}
    for route, cells in rows.items():
        assert int(cells[0]) > 0, route  # requests answered
        assert int(cells[-1]) == 0, (route, done.stdout)  # errors
