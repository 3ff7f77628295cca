"""Two releases side by side, in the same hour on the same home: each read right after
K new letters, as bench/run.py measures it, alternating the code trees.

    python bench/compare.py --old DIR --new DIR --workdir W [--letters 1000000] [--rounds 2]

DIR is a checkout of m1nd (its `m1nd/` package is put first on PYTHONPATH).  The
machine's speed drifts between runs of bench/run.py (the baseline's read, a disk's
fsync), so a change is judged here: one home, one spool, and for every read and round
each tree in turn files K new letters (`m1nd distribute`, its own code) and runs the
read twice, each after its own K new letters; the second is measured (the first
brings the read's kept counts to that tree's last read).  Prints the median seconds
per read and tree, and their ratio.  The home is bench/run.py's layout (50 roots).

`--blocks` runs every read of the old tree first, then every read of the new one: for
a change to what the state stores, which the old tree would take for damage (and
rebuild) each time the new one had written it.  The new tree's first command then
pays the upgrade, measured apart.  The baseline is measured before and after, so that
a drift of the machine's speed between the blocks shows.  `--new-letters 0` measures
the reads with nothing new (the second of two consecutive reads).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import PY, Bench, measure  # noqa: E402

READS = (("sweep",), ("box", "repo-001"), ("show", "ID"), ("doctor",), ("cases",))


def main() -> None:
    ap = argparse.ArgumentParser(description="two m1nd trees, the same reads, alternated")
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--workdir", required=True, help="kept: the spool and the home are made once")
    ap.add_argument("--letters", type=int, default=1_000_000)
    ap.add_argument("--repos", type=int, default=50)
    ap.add_argument("--new-letters", type=int, default=1000, help="K")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--blocks", action="store_true", help="all of old, then all of new (a state format change)")
    a = ap.parse_args()
    b = Bench(os.path.abspath(a.workdir), a.letters, a.repos, realistic=True)
    os.makedirs(b.workdir, exist_ok=True)
    if not os.path.exists(b.spool):
        b.generate(a.letters, b.spool, realistic=True)
        b.fresh()
        measure(b.m1nd("distribute"), b.env)
        measure(b.m1nd("sweep"), b.env)  # the read model's first build, with the new tree
    with open(b.spool, "rb") as fh:
        import hashlib

        some_id = hashlib.sha256(fh.readline().rstrip(b"\n")).hexdigest()[:12]
    trees = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    baseline = [PY, os.path.join(os.path.dirname(os.path.abspath(__file__)), "baseline.py"), b.spool]

    def baseline_s() -> float:
        return statistics.median(measure(baseline, b.env)[0] for _ in range(3))

    bases = [baseline_s()]
    times: dict[tuple[str, str], list[float]] = {}
    first: dict[str, float] = {}
    seed = 70_000

    def steps():
        if a.blocks:
            return [(name, read) for name in trees for read in READS for _ in range(a.rounds)]
        return [(name, read) for read in READS for _ in range(a.rounds) for name in trees]

    for name, read in steps():
        env = dict(b.env, PYTHONPATH=trees[name])
        argv = [some_id if x == "ID" else x for x in read]
        for step in (1, 2):
            seed += 1
            if a.new_letters:
                b.generate(a.new_letters, b.spool, seed=seed, append=True, realistic=True)
            t, _ = measure([PY, "-m", "m1nd", "distribute"], env)
            first.setdefault(name, t)
            t, _ = measure([PY, "-m", "m1nd", *argv], env, ok=(0, 1))
            if step == 2:
                times.setdefault((" ".join(read), name), []).append(t)
    bases.append(baseline_s())
    base = statistics.mean(bases)
    if a.blocks:
        print(f"\nfirst command of each block (`m1nd distribute`): old {first['old']:.3f} s, new {first['new']:.3f} s")
    print(f"baseline (bench/baseline.py, median of 3) before {bases[0]:.3f} s, after {bases[1]:.3f} s")
    print(f"\nN = {a.letters:,} letters, K = {a.new_letters:,} new letters before each read, "
          f"{a.rounds} rounds, median seconds\n")
    print("| read right after K new letters | old | new | new / old | old / baseline | new / baseline |")
    print("|---|---:|---:|---:|---:|---:|")
    for read in READS:
        key = " ".join(read)
        old, new = (statistics.median(times[(key, n)]) for n in ("old", "new"))
        print(f"| `m1nd {key}` | {old:.3f} | {new:.3f} | {new / old:.2f} | {old / base:.3f} × | {new / base:.3f} × |")


if __name__ == "__main__":
    main()
