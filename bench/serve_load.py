"""`m1nd serve` under load, as issue 18 measures it (run through `bench/serve.py --load`).

A realistic spool (bench/generate.py --realistic) of N letters over K roots, as
bench/run.py's Bench lays it out, distributed; one real `m1nd serve --port 0` process;
C client processes, each looping request -> wait for the whole answer -> next over
`/`, `/api/mailbox?brain=repo-NNN` (a real box), `/api/letters/ID` (a real letter's
id) and `/api/health`, with the token the server printed; meanwhile a writer appends
one new realistic letter to the spool every `--every` seconds (replies to real ids
among them), and with `--distribute` a loop of `m1nd distribute` files them. After
`--seconds`, the table: requests, p50, p95, p99 and max per route and overall, and
the errors (any status but 200, a body that is not the route's document, a failed
connection). Before the clocks start every path is asked once (the read model's
first build, each box's and letter's first answer), shown apart.
"""

from __future__ import annotations

import datetime
import hashlib
import http.client
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

import orjson

from generate import Clock, Replies, realistic_letter
from run import Bench, measure

ROUTES = ("/", "/api/mailbox", "/api/letters/ID", "/api/health")
QUANTILES = (("p50", 0.50), ("p95", 0.95), ("p99", 0.99))


def quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sample_letters(spool: str, count: int) -> list[tuple[str, str, str | None]]:
    """(id, repo, brain) of `count` letters spread over the spool, and the last few
    thousand (what the writer's replies answer)."""
    with open(spool, "rb") as fh:
        lines = [line.rstrip(b"\n") for line in fh if line.strip()]
    out = []
    for i in range(0, len(lines), max(1, len(lines) // count)):
        fields = orjson.loads(lines[i])
        out.append((hashlib.sha256(lines[i]).hexdigest()[:12], fields.get("repo", ""), fields.get("brain")))
    recent = [(hashlib.sha256(raw).hexdigest()[:12], orjson.loads(raw).get("repo", ""), orjson.loads(raw).get("brain"))
              for raw in lines[-4096:]]
    return out[:count], recent


def valid(route: str, status: int, body: bytes) -> str | None:
    """None when the answer is the route's document, else what is wrong with it."""
    if status != 200:
        return f"status {status}: {body[:120]!r}"
    if route == "/":
        ok = body.startswith(b"<!doctype html>") and body.endswith(b"</html>\n") and b"<h1>Mailbox</h1>" in body
        return None if ok else f"not the mailbox page: {body[:120]!r}"
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return f"not JSON: {body[:120]!r}"
    want = {"/api/mailbox": "letters", "/api/letters/ID": "id", "/api/health": "status"}[route]
    return None if isinstance(doc, (dict, list)) and (want in doc if isinstance(doc, dict) else doc) else \
        f"not the document: {body[:120]!r}"


def client(k: int, host: str, port: int, token: str, paths: list[str], start_at: float, stop_at: float, out) -> None:
    """One client: request, wait for the whole answer, next route; (route index,
    seconds, problem or None) per request, sent back at the end."""
    headers = {"Authorization": f"Bearer {token}"}
    con = http.client.HTTPConnection(host, port, timeout=120)
    results = []
    i = k
    while time.time() < start_at:
        time.sleep(0.005)
    while time.time() < stop_at:
        r = i % len(ROUTES)
        i += 1
        started = time.perf_counter()
        try:
            con.request("GET", paths[r], headers=headers)
            response = con.getresponse()
            body = response.read()
            problem = valid(ROUTES[r], response.status, body)
        except (OSError, http.client.HTTPException) as exc:
            problem = f"{type(exc).__name__}: {exc}"
            con.close()
            con = http.client.HTTPConnection(host, port, timeout=120)
        results.append((r, time.perf_counter() - started, problem))
    con.close()
    out.send(results)
    out.close()


def writer(spool: str, repos: int, roots: str, every: float, recent: list, stop: threading.Event, counter: list) -> None:
    """One new realistic letter every `every` seconds, one append each (as an agent writes)."""
    rng = random.Random(18)
    replies = Replies(rng)
    for entry in recent:
        replies.add(entry)
    clock = Clock(datetime.datetime.now(datetime.timezone.utc), every)
    fd = os.open(spool, os.O_WRONLY | os.O_APPEND)
    try:
        n = 0
        due = time.monotonic()
        while not stop.is_set():
            fields = realistic_letter(rng, 10_000_000 + n, repos, roots, replies, clock)
            fields["ts"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())  # written now
            raw = orjson.dumps(fields)
            os.write(fd, raw + b"\n")
            replies.add((hashlib.sha256(raw).hexdigest()[:12], fields["repo"], fields.get("brain")))
            n += 1
            due += every
            stop.wait(max(0.0, due - time.monotonic()))
    finally:
        os.close(fd)
        counter[0] = n


def distributor(b: Bench, stop: threading.Event, counter: list) -> None:
    while not stop.is_set():
        measure(b.m1nd("distribute"), b.env)
        counter[0] += 1


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def load(a) -> None:
    import tempfile

    letters = a.letters or 100_000
    workdir = os.path.abspath(a.workdir or tempfile.mkdtemp(prefix="m1nd-bench-serve-"))
    os.makedirs(workdir, exist_ok=True)
    b = Bench(workdir, letters, a.repos, realistic=True)
    b.generate(letters, b.spool, realistic=True)  # anew: every run starts from the same spool
    b.fresh()
    first = measure(b.m1nd("distribute"), b.env)
    picked, recent = sample_letters(b.spool, a.clients)

    server = subprocess.Popen(b.m1nd("serve", "--port", "0"), env=b.env, cwd=workdir,
                              stdout=subprocess.PIPE, stderr=open(os.path.join(workdir, "serve.log"), "wb"))
    stop = threading.Event()
    arrived, distributions = [0], [0]
    try:
        url = urllib.parse.urlsplit(server.stdout.readline().decode().strip())
        token = urllib.parse.parse_qs(url.query).get("token", [""])[0]
        paths_of = []
        for k in range(a.clients):
            lid = picked[k % len(picked)][0]
            paths_of.append(["/", f"/api/mailbox?brain=repo-{k % a.repos:03d}", f"/api/letters/{lid}",
                             "/api/health"])
        con = http.client.HTTPConnection(url.hostname, url.port, timeout=3600)
        cold = [[] for _ in ROUTES]  # every path once before the clocks start: the first builds, shown apart
        for r in range(len(ROUTES)):
            for path in dict.fromkeys(paths[r] for paths in paths_of):
                started = time.perf_counter()
                con.request("GET", path, headers={"Authorization": f"Bearer {token}"})
                response = con.getresponse()
                body = response.read()
                problem = valid(ROUTES[r], response.status, body)
                if problem:
                    raise SystemExit(f"GET {path}: {problem}")
                cold[r].append(time.perf_counter() - started)
        con.close()

        ctx = multiprocessing.get_context("fork")
        start_at = time.time() + 1.0
        stop_at = start_at + a.seconds
        pipes, procs = [], []
        for k in range(a.clients):
            mine, theirs = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=client, args=(k, url.hostname, url.port, token, paths_of[k], start_at,
                                                     stop_at, theirs))
            proc.start()
            theirs.close()
            pipes.append(mine)
            procs.append(proc)
        threads = [threading.Thread(target=writer, args=(b.spool, a.repos, b.roots, a.every, recent, stop, arrived))]
        if a.distribute:
            threads.append(threading.Thread(target=distributor, args=(b, stop, distributions)))
        while time.time() < start_at:
            time.sleep(0.01)
        for t in threads:
            t.start()
        spy = None
        if a.py_spy:  # the server's stacks over the measured window, collapsed (flamegraph.pl's input)
            spy = subprocess.Popen(["py-spy", "record", "--pid", str(server.pid), "--format", "raw", "--nonblocking",
                                    "--duration", str(int(a.seconds)), "--output", a.py_spy],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        results = []
        for pipe in pipes:
            results += pipe.recv()
        for proc in procs:
            proc.join()
        stop.set()
        for t in threads:
            t.join()
        if spy is not None:
            spy.wait()
    finally:
        stop.set()
        server.send_signal(signal.SIGTERM)
        code = server.wait(60)
    if code != 0:
        raise SystemExit(f"m1nd serve exited {code}")

    errors = [(ROUTES[r], problem) for r, _, problem in results if problem]
    print(f"\nN = {letters:,} realistic letters over K = {a.repos} repositories "
          f"(spool {os.path.getsize(b.spool) / 1e6:.0f} MB), first distribution {first[0]:.1f} s; "
          f"{a.clients} clients for {a.seconds:g} s, a letter every {a.every * 1000:g} ms "
          f"({arrived[0]} arrived{f', {distributions[0]} distributions' if a.distribute else ''}), "
          f"Python {sys.version.split()[0]}\n")
    print("before the clocks start, each path once (the first builds): "
          + ", ".join(f"{route} {len(t)} × first {ms(t[0])} ms, max of the rest {ms(max(t[1:] or [0]))} ms"
                      for route, t in zip(ROUTES, cold)) + "\n")
    print("| route | requests | p50 ms | p95 ms | p99 ms | max ms | errors |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, which in [(f"`{route}`", {r}) for r, route in enumerate(ROUTES)] + [("all", set(range(len(ROUTES))))]:
        times = sorted(t for r, t, _ in results if r in which)
        bad = sum(1 for r, _, p in results if r in which and p)
        if not times:
            print(f"| {name} | 0 |  |  |  |  | {bad} |")
            continue
        cells = " | ".join(ms(quantile(times, q)) for _, q in QUANTILES)
        print(f"| {name} | {len(times)} | {cells} | {ms(times[-1])} | {bad} |")
    print("\ntarget: p99 ≤ 100 ms, no error")
    for route, problem in errors[:5]:
        print(f"error: {route}: {problem}")
