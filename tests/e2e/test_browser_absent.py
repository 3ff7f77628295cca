"""The README's test command passes on a machine without Chromium: outside CI the browser
tests say in one line that they were not run and why; under CI=true they run (and fail
without the browser) rather than skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def run_browser_tests(ci: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["M1ND_TEST_CHROMIUM"] = str(PROJECT / "no-such-chromium")
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/e2e/test_report_browser.py"],
                          cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300)


def test_without_chromium_outside_ci_the_browser_tests_say_in_one_line_they_were_not_run():
    done = run_browser_tests(None)
    assert done.returncode == 0, done.stdout
    lines = [l for l in done.stdout.splitlines() if l.startswith("SKIPPED")]
    assert len(lines) == 1 and "not run: Chromium is not installed" in lines[0], done.stdout


def test_under_ci_the_browser_tests_never_skip():
    done = run_browser_tests("true")
    assert done.returncode == 1 and "SKIPPED" not in done.stdout, done.stdout
