"""The hook managers people use, installed for the tests when missing.

- the pre-commit framework from PyPI (the `test` extra lists it; installed into this
  interpreter's environment with pip when missing);
- husky and lefthook from npm, into `$M1ND_TEST_NPM_DIR` (which `.ci/run` prepares)
  or else a directory of the test session (`npm install`; lefthook's package ships
  its binary).

A tool that cannot be installed fails the test under CI (`CI=true`) and skips it
elsewhere, saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NPM_TOOLS = ("husky@9", "lefthook@2")


def _missing(what: str, why: str):
    message = f"{what} is not available: {why}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message + " (CI must have it: see .ci/run)", pytrace=False)
    pytest.skip(message)


def pre_commit_bin() -> str:
    candidate = Path(sys.executable).parent / "pre-commit"
    if not candidate.exists():
        done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "pre-commit"], capture_output=True,
                              text=True, timeout=600)
        if done.returncode != 0 or not candidate.exists():
            _missing("the pre-commit framework", done.stderr.strip().splitlines()[-1:] or "pip install failed")
    return str(candidate)


def npm_dir(fallback: Path) -> Path:
    """A directory whose node_modules holds husky and lefthook (installed when missing)."""
    root = Path(os.environ.get("M1ND_TEST_NPM_DIR") or fallback)
    bins = root / "node_modules" / ".bin"
    if (bins / "husky").exists() and (bins / "lefthook").exists():
        return root
    npm = shutil.which("npm")
    if npm is None:
        _missing("npm", "not on PATH")
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "package.json").exists():
        (root / "package.json").write_text('{"name": "m1nd-test-tools", "private": true}\n')
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *NPM_TOOLS], cwd=root,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not (bins / "lefthook").exists():
        _missing("husky and lefthook", (done.stderr.strip().splitlines() or ["npm install failed"])[-1])
    check = subprocess.run([str(bins / "lefthook"), "version"], capture_output=True, text=True)
    if check.returncode != 0:
        _missing("lefthook", f"its binary does not run: {check.stderr.strip()}")
    return root
