"""The m1nd benchmark: one table of median time, peak memory and ratio to a baseline
measured in the same run.

    python bench/run.py [--letters 1000000] [--repos 50] [--repeat 3] [--workdir DIR]
                        [--spools plain,realistic] [--new 1,1000,10000]

Every operation runs as a real `python -m m1nd` process against a generated spool
(bench/generate.py).  Peak memory is the process's max RSS (from wait4).  The
baseline is bench/baseline.py (read + sha256 + orjson per line).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
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


def measure(argv: list[str], env: dict, stdout=subprocess.DEVNULL, cwd: str | None = None,
            ok=(0,)) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one process run to completion; fails loudly.

    Runs in the bench's work directory (env HOME), outside any git work tree, so
    that no bound root joins the roots (unless `cwd` names one).
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=stdout, stderr=subprocess.PIPE, cwd=cwd or env["HOME"])
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {code}: {err.strip()[-400:]}")
    return elapsed, usage.ru_maxrss / 1024


class Bench:
    def __init__(self, workdir: str, letters: int, repos: int, realistic: bool = False) -> None:
        self.workdir = workdir
        self.letters = letters
        self.repos = repos
        self.realistic = realistic
        self.roots = os.path.join(workdir, "roots")
        self.home = os.path.join(workdir, "home")
        kind = "realistic" if realistic else "plain"
        self.spool = os.path.join(workdir, f"spool-{kind}-{letters}.jsonl")
        # PYTHONDONTWRITEBYTECODE off: an installed m1nd runs from compiled bytecode, so
        # must every measured process (a sandbox that sets it pays a compile per run)
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("M1ND_", "GIT_")) and k != "PYTHONDONTWRITEBYTECODE"}
        self.env.update(M1ND_HOME=self.home, M1ND_SPOOL=self.spool, NO_COLOR="1", HOME=workdir)

    def generate(self, letters: int, out: str, seed: int = 7, append: bool = False, realistic: bool = False) -> None:
        argv = [PY, os.path.join(HERE, "generate.py"), out, "--letters", str(letters),
                "--repos", str(self.repos), "--roots-dir", self.roots, "--seed", str(seed)]
        subprocess.run(argv + (["--append"] if append else []) + (["--realistic"] if realistic else []), check=True)

    def big_box_repo(self) -> str:
        """A git repository whose box already holds every spool letter (as if it had
        arrived by git), registered as a root."""
        repo = os.path.join(self.workdir, "big-repo")
        shutil.rmtree(repo, ignore_errors=True)
        os.makedirs(os.path.join(repo, ".m1nd"))
        subprocess.run(["git", "init", "-q", repo], check=True, env=self.env)
        shutil.copyfile(self.spool, os.path.join(repo, ".m1nd", "inbox.jsonl"))
        with open(os.path.join(repo, ".m1nd", ".gitignore"), "wb") as fh:
            fh.write(b"inbox.jsonl\n.gitignore\n")
        return repo

    def fresh(self) -> None:
        """An empty home with the roster of K roots, and no boxes anywhere."""
        shutil.rmtree(self.home, ignore_errors=True)
        os.makedirs(self.home, mode=0o700)
        roots = []
        for i in range(self.repos):
            root = os.path.join(self.roots, f"repo-{i:03d}")
            shutil.rmtree(os.path.join(root, ".m1nd"), ignore_errors=True)
            os.makedirs(root, exist_ok=True)
            roots.append(root)
        with open(os.path.join(self.home, "roster.json"), "wb") as fh:
            fh.write(orjson.dumps({"roots": roots}))

    def m1nd(self, *args: str) -> list[str]:
        return [PY, "-m", "m1nd", *args]


def row_line(row) -> str:
    name, (t, rss), ratio, target = row
    r = f"{ratio:.3f}" if ratio is not None else ""
    return f"| {name} | {t:.3f} | {rss:.0f} | {r} | {target} |"


class Rows(list):
    """The table's rows, each also written to stderr as soon as it is measured (a long
    run cut short still leaves what it measured)."""

    def append(self, row) -> None:
        super().append(row)
        print(row_line(row), file=sys.stderr, flush=True)


def median_of(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs)


# (row name, arguments (ID: a letter's id, REPORTS: a directory for the reports), target
# right after new letters, target with nothing new (None: no target), runs on the clock)
READS = (("`m1nd sweep`", ("sweep",), 0.1, 0.05, False), ("`m1nd box repo-001`", ("box", "repo-001"), 0.1, 0.05, False),
         ("`m1nd show ID`", ("show", "ID"), 0.1, 0.05, False), ("`m1nd doctor`", ("doctor",), 0.3, 0.2, False),
         ("`m1nd cases`", ("cases",), 0.1, None, False),
         ("`m1nd report` (scheduled)", ("report", "--to", "REPORTS"), 0.1, None, True))


class Clock:
    """A scheduled report covers the letters observed since the last one, by the
    clock: each step files its new letters on a new day at 15:00 UTC and reports at
    22:30 UTC, past the 17:00 New York boundary of the default profile, so the report
    holds exactly that step's letters.  The days start tomorrow (the first
    distribution observed every letter today, on the real clock)."""

    def __init__(self, env: dict) -> None:
        self.env = env
        self.day = datetime.datetime.now(datetime.timezone.utc).date()

    def next_day(self) -> None:
        self.day += datetime.timedelta(days=1)

    def at(self, hhmm: str) -> dict:
        return dict(self.env, M1ND_NOW=f"{self.day.isoformat()}T{hhmm}:00Z")


def read_rows(b: Bench, repeat: int, label: str, base: float, ks: list[int], some_id: str) -> list:
    """Every read twice: right after a distribution that filed K new letters (each
    read gets its own K new letters, as happens all day), then with nothing new.  Each
    read is run once before its rows, so that what is new to it is exactly its K
    letters, not also those the reads measured before it filed."""
    rows = Rows()
    seed = 5000
    where = {"ID": some_id, "REPORTS": os.path.join(b.workdir, "reports")}
    for name, args, after_target, quiet_target, on_clock in READS:
        argv = b.m1nd(*(where.get(a, a) for a in args))
        clock = Clock(b.env)
        if on_clock:  # the first scheduled report itemizes every letter observed so far
            clock.next_day()
            t = measure(argv, clock.at("22:30"), ok=(0, 1))
            rows.append((f"{label}: first {name}, every letter", t, t[0] / base, ""))
        else:  # brought current first: the K new letters are all that is new to this read
            measure(argv, b.env, ok=(0, 1))
        for k in ks:
            runs = []
            for _ in range(repeat):
                seed += 1
                clock.next_day()
                b.generate(k, b.spool, seed=seed, append=True, realistic=b.realistic)
                measure(b.m1nd("distribute"), clock.at("15:00") if on_clock else b.env)
                runs.append(measure(argv, clock.at("22:30") if on_clock else b.env, ok=(0, 1)))
            t = median_of(runs)
            rows.append((f"{label}: {name} right after {k:,} new letter{'' if k == 1 else 's'}", t, t[0] / base,
                         f"≤ {after_target} × baseline"))
        quiet = median_of([measure(argv, clock.at("22:45") if on_clock else b.env, ok=(0, 1))
                           for _ in range(repeat)])
        rows.append((f"{label}: {name} with nothing new", quiet, quiet[0] / base,
                     f"≤ {quiet_target} × baseline" if quiet_target is not None else ""))
    # a manual report over an explicit window prints every letter in it: proportional to
    # what it prints, so no target
    argv = b.m1nd("report", "--since", "2026-01-01T00:00:00Z", "--to", where["REPORTS"])
    t = measure(argv, b.env, ok=(0, 1))
    rows.append((f"{label}: `m1nd report --since` over every letter", t, t[0] / base, ""))
    return rows


def spool_rows(b: Bench, repeat: int, label: str, ks: list[int]) -> list:
    """Every row for one spool (already generated at b.spool)."""
    rows = Rows()
    env = b.env
    base = median_of([measure([PY, os.path.join(HERE, "baseline.py"), b.spool], env) for _ in range(repeat)])
    rows.append((f"{label}: baseline: read + sha256 + orjson", base, None, ""))

    firsts = []
    for _ in range(repeat):
        b.fresh()
        firsts.append(measure(b.m1nd("distribute"), env))
    first = median_of(firsts)
    rows.append((f"{label}: first `m1nd distribute`", first, first[0] / base[0], "≤ 3 × baseline"))
    after_first = measure(b.m1nd("sweep"), env)
    rows.append((f"{label}: first `m1nd sweep` after the first distribution", after_first,
                 after_first[0] / base[0], "≤ 4 × baseline"))

    rebuilds = []
    for _ in range(repeat):
        shutil.rmtree(os.path.join(b.home, "state", "readmodel.sqlite3"), ignore_errors=True)
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(os.path.join(b.home, "state", "readmodel.sqlite3" + suffix))
            except FileNotFoundError:
                pass
        rebuilds.append(measure(b.m1nd("--inbox-sweep", "--no-distribute"), env))
    rebuild = median_of(rebuilds)
    rows.append((f"{label}: first read after deleting the read model (rebuilt)", rebuild, rebuild[0] / base[0],
                 "≤ 4 × baseline"))

    sweep = median_of([measure(b.m1nd("--inbox-sweep", "--no-distribute"), env) for _ in range(repeat)])
    rows.append((f"{label}: `m1nd --inbox-sweep --no-distribute`", sweep, sweep[0] / base[0], "≤ 3 × baseline"))

    measure(b.m1nd("sweep"), env)  # the first sweep after the rebuild fills the counts cache
    human = median_of([measure(b.m1nd("sweep"), env) for _ in range(repeat)])
    rows.append((f"{label}: `m1nd sweep` (human, nothing new)", human, human[0] / base[0], "≤ 0.2 × baseline"))

    measure(b.m1nd("box", "repo-001"), env)
    box = median_of([measure(b.m1nd("box", "repo-001"), env) for _ in range(repeat)])
    rows.append((f"{label}: `m1nd box repo-001`", box, box[0] / base[0], "≤ 0.1 × baseline"))

    with open(b.spool, "rb") as fh:
        some_id = hashlib.sha256(fh.readline().rstrip(b"\n")).hexdigest()[:12]
    show = median_of([measure(b.m1nd("show", some_id[:8]), env) for _ in range(repeat)])
    rows.append((f"{label}: `m1nd show ID`", show, show[0] / base[0], "≤ 0.1 × baseline"))

    measure(b.m1nd("doctor"), env, ok=(0, 1))
    doctor = median_of([measure(b.m1nd("doctor"), env, ok=(0, 1)) for _ in range(repeat)])
    rows.append((f"{label}: `m1nd doctor`", doctor, doctor[0] / base[0], "≤ 0.5 × baseline"))

    again = median_of([measure(b.m1nd("distribute"), env) for _ in range(repeat)])
    rows.append((f"{label}: re-run, nothing new", again, again[0] / first[0], "≤ 0.05 × first run"))

    news = []
    for i in range(repeat):
        b.generate(1000, b.spool, seed=1000 + i, append=True, realistic=b.realistic)
        news.append(measure(b.m1nd("distribute"), env))
    new = median_of(news)
    rows.append((f"{label}: re-run after 1,000 new letters", new, new[0] / first[0], "≤ 0.1 × first run"))

    # The hook in a repository whose box holds every letter (arrived by git): nothing new.
    big = b.big_box_repo()
    hook = b.m1nd("hook", "run", "post-checkout")
    # Index the big box first with a read that waits for it (a hook gives up after its
    # time budget and leaves the work to the background), then warm the hook's path.
    measure(b.m1nd("box"), env, cwd=big)
    measure(hook, env, cwd=big)
    hooks = median_of([measure(hook, env, cwd=big) for _ in range(repeat)])
    rows.append((f"{label}: `m1nd hook run post-checkout`, nothing new, {b.letters:,}-letter box", hooks,
                 hooks[0] / first[0], "≤ 0.05 × first distribute"))
    # ... and after git brought one new letter into that box (a pull, then the checkout hook)
    after = []
    for i in range(repeat):
        extra = os.path.join(b.workdir, "one-letter.jsonl")
        b.generate(1, extra, seed=9000 + i, realistic=b.realistic)
        with open(extra, "rb") as src, open(os.path.join(big, ".m1nd", "inbox.jsonl"), "ab") as box:
            box.write(src.read())
        after.append(measure(hook, env, cwd=big))
    hook_new = median_of(after)
    rows.append((f"{label}: `m1nd hook run post-checkout` after 1 new letter, {b.letters:,}-letter box", hook_new,
                 hook_new[0] / first[0], "≤ 0.05 × first distribute"))
    shutil.rmtree(big, ignore_errors=True)
    return rows + read_rows(b, repeat, label, base[0], ks, some_id[:8])


def main() -> None:
    ap = argparse.ArgumentParser(description="m1nd benchmark")
    ap.add_argument("--letters", type=int, default=1_000_000)
    ap.add_argument("--repos", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", default=None, help="kept between runs to reuse the generated spools")
    ap.add_argument("--spools", default="plain,realistic", help="which spools to measure (comma-separated)")
    ap.add_argument("--new", default="1,1000,10000", help="K new letters before each read (comma-separated)")
    ap.add_argument("--no-secrets", action="store_true", help="skip bench/secrets.py's table")
    a = ap.parse_args()
    ks = [int(k) for k in a.new.split(",")]
    workdir = os.path.abspath(a.workdir or tempfile.mkdtemp(prefix="m1nd-bench-"))
    os.makedirs(workdir, exist_ok=True)
    rows = Rows()
    sizes = []
    for label in a.spools.split(","):
        realistic = label == "realistic"
        b = Bench(workdir, a.letters, a.repos, realistic)
        if not os.path.exists(b.spool):
            b.generate(a.letters, b.spool, realistic=realistic)
        sizes.append(f"{label} {os.path.getsize(b.spool) / 1e6:.0f} MB")
        rows += spool_rows(b, a.repeat, label, ks)

    memory_kind = "realistic" if "realistic" in a.spools.split(",") else "plain"
    b = Bench(workdir, a.letters, a.repos, memory_kind == "realistic")
    typer_t = median_of([measure([PY, "-c", "import typer"], b.env) for _ in range(max(a.repeat, 5))])
    version = median_of([measure(b.m1nd("--version"), b.env) for _ in range(max(a.repeat, 5))])
    rows.append(("`python -c 'import typer'`", typer_t, None, ""))
    rows.append(("`m1nd --version`", version, version[0] / typer_t[0], "≤ 1.5 × import typer"))

    # Peak memory at a quarter and half of N: flat in N?
    for frac in (4, 2):
        n = a.letters // frac
        small = os.path.join(workdir, f"spool-{memory_kind}-{n}.jsonl")
        if not os.path.exists(small):
            b.generate(n, small, realistic=b.realistic)
        env = dict(b.env, M1ND_SPOOL=small)
        b.fresh()
        t, rss = measure(b.m1nd("distribute"), env)
        rows.append((f"first distribute at N/{frac} (memory)", (t, rss), None, "peak ≤ 300 MB, flat in N"))
        t, rss = measure(b.m1nd("--inbox-sweep", "--no-distribute"), env)
        rows.append((f"read-model build + v0 document at N/{frac} (memory)", (t, rss), None,
                     "peak ≤ 300 MB, flat in N"))

    print(f"\nN = {a.letters:,} letters over K = {a.repos} repositories, spools: {', '.join(sizes)}, "
          f"median of {a.repeat}, Python {sys.version.split()[0]}\n")
    print("| operation | median s | peak MB | ratio | target |")
    print("|---|---:|---:|---:|---|")
    for row in rows:
        print(row_line(row))
    if not a.no_secrets:  # the held rule: external corpus table and its cost on a realistic spool
        print("\nHeld letters (bench/secrets.py):", flush=True)
        root = os.path.dirname(HERE)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
        subprocess.run([PY, os.path.join(HERE, "secrets.py"), "--letters", str(min(a.letters, 100_000))],
                       check=True, env=env)
    if not a.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
