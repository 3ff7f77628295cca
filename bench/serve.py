"""`m1nd serve` under the benchmark spool: GET /api/mailbox?brain=repo-000, per
request, as a ratio to the baseline measured in the same run.

    python bench/serve.py [--letters 1000000] [--repos 50] [--requests 50] [--workdir DIR]
    python bench/serve.py --load [--letters 100000] [--clients 32] [--seconds 30] [--every 0.05]

`--load` is issue 18's measurement instead (bench/serve_load.py): a realistic spool,
clients each waiting for its answer on four routes while letters keep arriving; it
prints p50/p95/p99/max per route and the errors.

Reuses bench/generate.py (through bench/run.py's Bench) for the spool, the roster of
K roots and a first distribution; then one real `m1nd serve --port 0` process and a
keep-alive HTTP client on loopback. The first request builds the read model (shown
apart); the target is on the median of the requests after it.
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import HERE, PY, Bench, measure, median_of  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description="m1nd serve benchmark")
    ap.add_argument("--letters", type=int, default=None, help="default 1,000,000 (--load: 100,000)")
    ap.add_argument("--repos", type=int, default=50)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3, help="baseline runs (median)")
    ap.add_argument("--workdir", default=None, help="kept between runs to reuse the generated spool")
    ap.add_argument("--load", action="store_true", help="the latency under load of bench/serve_load.py")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--every", type=float, default=0.05, help="seconds between two arriving letters")
    ap.add_argument("--distribute", action="store_true", help="--load: also run `m1nd distribute` in a loop")
    ap.add_argument("--py-spy", default=None, metavar="OUT", help="--load: py-spy's record of the server, to OUT")
    a = ap.parse_args()
    if a.load:
        from serve_load import load

        return load(a)
    a.letters = a.letters or 1_000_000
    workdir = os.path.abspath(a.workdir or tempfile.mkdtemp(prefix="m1nd-bench-"))
    os.makedirs(workdir, exist_ok=True)
    b = Bench(workdir, a.letters, a.repos)
    if not os.path.exists(b.spool):
        b.generate(a.letters, b.spool)
    base = median_of([measure([PY, os.path.join(HERE, "baseline.py"), b.spool], b.env) for _ in range(a.repeat)])
    b.fresh()
    first = measure(b.m1nd("distribute"), b.env)

    server = subprocess.Popen(b.m1nd("serve", "--port", "0"), env=b.env, cwd=workdir,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        # the printed URL carries the token (every request needs it, loopback too)
        url = urllib.parse.urlsplit(server.stdout.readline().decode().strip())
        token = urllib.parse.parse_qs(url.query).get("token", [""])[0]
        con = http.client.HTTPConnection(url.hostname, url.port, timeout=3600)
        path = "/api/mailbox?brain=repo-000"

        def get() -> tuple[float, int]:
            started = time.perf_counter()
            con.request("GET", path, headers={"Authorization": f"Bearer {token}"})
            response = con.getresponse()
            body = response.read()
            if response.status != 200:
                raise SystemExit(f"GET {path}: {response.status} {body[:300]!r}")
            return time.perf_counter() - started, len(body)

        cold, size = get()
        times = [get()[0] for _ in range(a.requests)]
        # one letter more for repo-000, filed: the next request builds the box's document again
        with open(b.spool, "ab") as fh:
            fh.write(b'{"ts":"2026-12-01T09:00:00Z","agent":"agent-b","class":"bug","repo":"repo-000",'
                     b'"tool":"seek","what":"one more letter after the measured requests"}\n')
        refile = measure(b.m1nd("distribute"), b.env)
        changed = get()[0]
        con.close()
    finally:
        server.send_signal(signal.SIGTERM)
        code = server.wait(60)
    if code != 0:
        raise SystemExit(f"m1nd serve exited {code}")
    median = statistics.median(times)
    p99 = sorted(times)[min(len(times) - 1, int(0.99 * len(times)))]
    print(f"\nN = {a.letters:,} letters over K = {a.repos} repositories, spool {os.path.getsize(b.spool) / 1e6:.0f} MB, "
          f"{a.requests} requests after the first, Python {sys.version.split()[0]}\n")
    print("| operation | seconds | ratio | target |")
    print("|---|---:|---:|---|")
    print(f"| baseline: read + sha256 + orjson (median of {a.repeat}) | {base[0]:.3f} |  |  |")
    print(f"| first `m1nd distribute` | {first[0]:.3f} |  |  |")
    print(f"| first `GET {path}` (builds the read model; {size / 1e6:.1f} MB) | {cold:.3f} |  |  |")
    print(f"| `GET {path}`, median per request | {median:.4f} | {median / base[0]:.4f} | ≤ 0.05 × baseline |")
    print(f"| `GET {path}`, p99 | {p99:.4f} | {p99 / base[0]:.4f} |  |")
    print(f"| `m1nd distribute` of 1 new letter for repo-000 | {refile[0]:.3f} |  |  |")
    print(f"| next `GET {path}` (the box changed: built again) | {changed:.4f} | {changed / base[0]:.4f} |  |")


if __name__ == "__main__":
    main()
