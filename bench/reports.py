"""Report benchmark: preparing a period of NEW new letters in an N-letter mailbox,
and `m1nd report` with nothing due, as ratios to the baseline of bench/run.py
(read + sha256 + orjson over the same spool), measured in the same run.

    python bench/reports.py --letters 1000000 --new 10000 --repos 50

Targets: prepare ≤ 0.5 × baseline; nothing due ≤ 0.05 × baseline.  Prepare is timed
twice over: the first run after the new letters arrived (it pays for the read model's
per-box counts and reply graph, which any read computes once per change), then with
those aggregates current.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from generate import generate, repo_name  # noqa: E402


def timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--letters", type=int, default=1_000_000)
    ap.add_argument("--new", type=int, default=10_000)
    ap.add_argument("--repos", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the workspace (printed)")
    ap.add_argument("--setup-only", action="store_true", help="build the workspace, print it, measure nothing")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="m1nd-bench-reports-")
    home, roots = os.path.join(work, "home"), os.path.join(work, "roots")
    os.makedirs(home)
    for i in range(args.repos):
        subprocess.run(["git", "init", "-q", os.path.join(roots, repo_name(i))], check=True)
    with open(os.path.join(home, "roster.json"), "w") as fh:
        json.dump({"roots": [os.path.join(roots, repo_name(i)) for i in range(args.repos)]}, fh)
    spool = os.path.join(home, "field-reports.jsonl")
    generate(spool, args.letters - args.new, args.repos, roots, 7, False)
    env = dict(os.environ, M1ND_HOME=home, NO_COLOR="1")
    env.pop("M1ND_NOW", None)
    m1nd = [sys.executable, "-m", "m1nd"]
    run = lambda *a, now: subprocess.run(m1nd + list(a), env=dict(env, M1ND_NOW=now), check=False,
                                         stdout=subprocess.DEVNULL)
    run("distribute", now="2026-04-01T11:00:00Z")
    run("report", "alert", now="2026-04-01T11:00:00Z")  # the mailbox as first seen a month ago
    # The first report starts the cursor; letters seen more than 7 days before are counted, not itemized.
    run("report", "--to", os.path.join(work, "out"), now="2026-05-01T14:00:00Z")
    generate(spool, args.new, args.repos, roots, 8, True)
    run("distribute", now="2026-05-01T15:00:00Z")
    run("report", "alert", now="2026-05-01T15:00:00Z")  # a read records the new letters
    if args.setup_only:
        print(f"workspace: {work} (M1ND_HOME={home}; prepare with M1ND_NOW=2026-05-01T21:30:00Z)")
        return
    baseline = [timed([sys.executable, os.path.join(HERE, "baseline.py"), spool], env) for _ in range(args.repeat)]
    prepare = []
    for i in range(args.repeat + 1):  # the first pays for the read model's aggregates after new letters
        # each repeat freezes afresh: remove the frozen run the previous repeat wrote
        runs = os.path.join(home, "records", "reports", "runs")
        for name in os.listdir(runs):
            if name.startswith("20260501T2100Z"):
                import shutil

                shutil.rmtree(os.path.join(runs, name))
        prepare.append(timed(m1nd + ["report", "prepare", "--json"], dict(env, M1ND_NOW="2026-05-01T21:30:00Z")))
    frozen = subprocess.run(m1nd + ["report", "prepare", "--json"], env=dict(env, M1ND_NOW="2026-05-01T21:30:00Z"),
                            capture_output=True)
    entries = json.loads(frozen.stdout)["entries"]
    if entries != args.new:
        raise SystemExit(f"prepare froze {entries} entries, not the {args.new} new letters")
    run("report", "--to", os.path.join(work, "out"), now="2026-05-01T21:30:00Z")
    idle = [timed(m1nd + ["report"], dict(env, M1ND_NOW="2026-05-01T21:40:00Z")) for _ in range(args.repeat)]
    b = statistics.median(baseline)
    if args.keep:
        print(f"workspace: {work}")
    else:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    print(f"N = {args.letters:,} letters, {args.new:,} new, K = {args.repos}, median of {args.repeat}")
    print("| operation | median s | ratio | target |\n|---|---:|---:|---|")
    print(f"| baseline: read + sha256 + orjson | {b:.3f} |  |  |")
    cold, warm = prepare[0], prepare[1:]
    print(f"| `m1nd report prepare` ({args.new:,} new), first read after they arrived | {cold:.3f} | "
          f"{cold / b:.3f} | ≤ 0.5 × baseline |")
    if warm:
        w = statistics.median(warm)
        print(f"| `m1nd report prepare` ({args.new:,} new), read model aggregates current | {w:.3f} | "
              f"{w / b:.3f} | ≤ 0.5 × baseline |")
    print(f"| `m1nd report`, nothing due | {statistics.median(idle):.3f} | {statistics.median(idle) / b:.3f} | "
          "≤ 0.05 × baseline |")


if __name__ == "__main__":
    main()
