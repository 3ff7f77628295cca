"""The cost of `m1nd cases` on a large mailbox, as ratios to a baseline measured in
the same run (the read + sha256 + orjson loop of bench/baseline.py).

    python bench/cases.py [--letters 1000000] [--repos 50] [--repeat 3] [--workdir DIR]

The mailbox is bench/generate.py's seeded spool, distributed into K repositories.
Measured, each as a real `python -m m1nd` process: the first `m1nd cases` (the read
model and the fold built from nothing), `m1nd cases` with nothing new (target
≤ 0.2 × baseline), and `m1nd cases` after 1,000 new letters were distributed
(target ≤ 0.3 × baseline; the distribution itself is timed apart).  The
distributions are timed too, since each now ends with the escalation pass.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable


def measure(argv: list[str], env: dict) -> tuple[float, float]:
    """(seconds, peak RSS MB) of one process, run outside any work tree; fails loudly."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=env["HOME"])
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err.strip()[-400:]}")
    return elapsed, usage.ru_maxrss / 1024


def median(runs):
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description="m1nd cases benchmark")
    ap.add_argument("--letters", type=int, default=1_000_000)
    ap.add_argument("--repos", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args()
    work = os.path.abspath(a.workdir or tempfile.mkdtemp(prefix="m1nd-bench-cases-"))
    os.makedirs(work, exist_ok=True)
    roots_dir, home = os.path.join(work, "roots"), os.path.join(work, "home")
    spool = os.path.join(work, f"cases-spool-{a.letters}.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("M1ND_", "GIT_"))}
    env.update(M1ND_HOME=home, M1ND_SPOOL=spool, NO_COLOR="1", HOME=work)

    def generate(n: int, seed: int, append: bool) -> None:
        subprocess.run([PY, os.path.join(HERE, "generate.py"), spool, "--letters", str(n), "--repos", str(a.repos),
                        "--roots-dir", roots_dir, "--seed", str(seed)] + (["--append"] if append else []), check=True)

    if os.path.exists(spool):
        os.unlink(spool)
    generate(a.letters, 7, False)
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home, mode=0o700)
    roots = []
    for i in range(a.repos):
        root = os.path.join(roots_dir, f"repo-{i:03d}")
        shutil.rmtree(os.path.join(root, ".m1nd"), ignore_errors=True)
        os.makedirs(root, exist_ok=True)
        roots.append(root)
    with open(os.path.join(home, "roster.json"), "wb") as fh:
        fh.write(orjson.dumps({"roots": roots}))
    m1nd = [PY, "-m", "m1nd"]

    base = median([measure([PY, os.path.join(HERE, "baseline.py"), spool], env) for _ in range(a.repeat)])
    dist_first = measure(m1nd + ["distribute"], env)  # with the escalation pass (builds the read model)
    first = measure(m1nd + ["cases"], env)
    again = median([measure(m1nd + ["cases"], env) for _ in range(a.repeat)])
    dist_again = median([measure(m1nd + ["distribute"], env) for _ in range(a.repeat)])
    news, dist_news = [], []
    for i in range(a.repeat):
        generate(1000, 1000 + i, True)
        dist_news.append(measure(m1nd + ["distribute"], env))
        news.append(measure(m1nd + ["cases"], env))
    new, dist_new = median(news), median(dist_news)

    size = os.path.getsize(spool) / 1e6
    print(f"\nN = {a.letters:,} letters over K = {a.repos} repositories, spool {size:.0f} MB, median of {a.repeat}, "
          f"Python {sys.version.split()[0]}\n")
    print("| operation | median s | peak MB | ratio | target |")
    print("|---|---:|---:|---:|---|")
    for name, (t, mb), target, ratio in (
            ("baseline: read + sha256 + orjson", base, "", None),
            ("first `m1nd cases` (read model and fold built)", first, "", first[0] / base[0]),
            ("`m1nd cases`, nothing new", again, "≤ 0.2 × baseline", again[0] / base[0]),
            ("`m1nd cases` after 1,000 new letters", new, "≤ 0.3 × baseline", new[0] / base[0]),
            ("first `m1nd distribute`, escalation pass included", dist_first, "(× baseline)",
             dist_first[0] / base[0]),
            ("`m1nd distribute`, nothing new", dist_again, "(× first distribute)", dist_again[0] / dist_first[0]),
            ("`m1nd distribute` after 1,000 new letters", dist_new, "(× first distribute)",
             dist_new[0] / dist_first[0])):
        print(f"| {name} | {t:.3f} | {mb:.0f} | {'' if ratio is None else f'{ratio:.3f}'} | {target} |")
    if not a.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
