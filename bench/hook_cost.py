"""What m1nd's hooks add to a `git switch`, measured against git alone in the same run.

Two identical repositories (same commits, same box), one with m1nd's shims
(`m1nd hooks install --stage`), one without; each switches back and forth between two
branches, and the medians are compared.  Cases:

- `same`:    both branches hold the same box (git does not touch it): nothing new;
- `rewrite`: the branches' boxes differ by one letter (git rewrites the box each switch).

    PYTHONPATH=. python -m bench.hook_cost --letters 1 --letters 10000 --runs 15

Numbers on a loaded machine swing widely: read the ratio, taken in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _git(repo: Path, *args: str, env=None) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


def _letter(n: int) -> bytes:
    return json.dumps({"ts": "2026-05-01T10:00:00Z", "agent": "agent-a", "class": "bug", "repo": "repo-a",
                       "what": f"letter {n}"}).encode()


def _repo(root: Path, letters: int, case: str, hooked: bool, env: dict) -> Path:
    repo = root / ("hooked" if hooked else "plain") / "repo-a"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "code.txt").write_text("v1\n")
    box = repo / ".m1nd" / "inbox.jsonl"
    box.parent.mkdir()
    box.write_bytes(b"\n".join(_letter(i) for i in range(letters)) + b"\n")
    (repo / ".gitattributes").write_text(".m1nd/inbox.jsonl merge=m1nd-inbox\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "start")
    _git(repo, "switch", "-q", "-c", "other")
    (repo / "code.txt").write_text("v2\n")
    if case == "rewrite":
        with box.open("ab") as fh:
            fh.write(_letter(letters) + b"\n")
    _git(repo, "commit", "-qam", "other")
    _git(repo, "switch", "-q", "main")
    if hooked:
        subprocess.run([sys.executable, "-m", "m1nd", "hooks", "install", "--stage", str(repo)], cwd=repo,
                       check=True, capture_output=True, env=env)
        subprocess.run([sys.executable, "-m", "m1nd", "distribute"], cwd=repo, capture_output=True, env=env)
    return repo


def _switches(repo: Path, runs: int, env: dict) -> list[float]:
    times = []
    for i in range(runs):
        branch = "other" if i % 2 == 0 else "main"
        start = time.perf_counter()
        _git(repo, "switch", "-q", branch, env=env)
        times.append(time.perf_counter() - start)
    return times


def measure(letters: int, case: str, runs: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="m1nd-hook-cost-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "M1ND_HOME": str(root / "home")}
        plain = _repo(root, letters, case, False, env)
        hooked = _repo(root, letters, case, True, env)
        _switches(plain, 2, env), _switches(hooked, 2, env)  # warm caches (bytecode, first index)
        a, b = [], []
        for _ in range(runs):  # interleaved: both see the same load
            a += _switches(plain, 2, env)
            b += _switches(hooked, 2, env)
        py = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            py.append(time.perf_counter() - start)
        git_ms, hooked_ms = statistics.median(a) * 1000, statistics.median(b) * 1000
        return {"letters": letters, "case": case, "git_ms": round(git_ms, 1), "hooked_ms": round(hooked_ms, 1),
                "added_ms": round(hooked_ms - git_ms, 1),
                "python_pass_ms": round(statistics.median(py) * 1000, 1), "ratio": round(hooked_ms / git_ms, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--letters", type=int, action="append")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--case", choices=["same", "rewrite"], action="append")
    args = ap.parse_args()
    for letters in args.letters or [1]:
        if letters > 100_000:
            sys.exit("at most 100,000 letters")
        for case in args.case or ["same", "rewrite"]:
            print(json.dumps(measure(letters, case, args.runs)), flush=True)


if __name__ == "__main__":
    main()
