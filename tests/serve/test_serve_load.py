"""Load, bounded in time and count, loopback only: 32 concurrent clients for 10 s
against /api/mailbox and / on a 100,000-letter mailbox while letters keep arriving
in the spool and distributions run. Every response must be a valid document; the
latencies are written to tests/artifacts/serve/load.json."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import orjson
import pytest

from servekit import ARTIFACTS, Server

BENCH = Path(__file__).resolve().parents[2] / "bench"
LETTERS, REPOS, CLIENTS, SECONDS, MAX_REQUESTS = 100_000, 20, 32, 10.0, 50_000


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@pytest.mark.slow
def test_32_clients_for_10_seconds_while_letters_arrive_and_distributions_run(tmp_path):
    roots, home = tmp_path / "roots", tmp_path / "home"
    spool = tmp_path / "spool.jsonl"
    subprocess.run([sys.executable, str(BENCH / "generate.py"), str(spool), "--letters", str(LETTERS),
                    "--repos", str(REPOS), "--roots-dir", str(roots)], check=True)
    home.mkdir(mode=0o700)
    paths = []
    for i in range(REPOS):
        root = roots / f"repo-{i:03d}"
        root.mkdir(parents=True, exist_ok=True)
        paths.append(str(root))
    (home / "roster.json").write_bytes(orjson.dumps({"roots": paths}))
    env = dict(os.environ, M1ND_HOME=str(home), M1ND_SPOOL=str(spool))
    assert subprocess.run([sys.executable, "-m", "m1nd", "distribute"], env=env, capture_output=True).returncode == 0

    with Server(env=env, cwd=tmp_path) as srv:
        base = srv.url.rstrip("/")
        for path in ("/api/mailbox?brain=repo-000", "/"):  # the read model's first build
            assert httpx.get(base + path, timeout=600).status_code == 200

        stop = threading.Event()
        results: list[tuple[str, int, float, bool]] = []
        lock = threading.Lock()
        arrived = [0]
        distributions = [0]

        def arrive() -> None:  # an agent appending letters, one write each
            n = 0
            fd = os.open(spool, os.O_WRONLY | os.O_APPEND)
            try:
                while not stop.is_set():
                    line = orjson.dumps({"ts": "2026-12-01T09:00:00Z", "agent": "agent-x", "class": "bug",
                                         "repo": f"repo-{n % REPOS:03d}", "tool": "seek",
                                         "what": f"arrived during the load, {n}"}) + b"\n"
                    os.write(fd, line)
                    n += 1
                    time.sleep(0.05)
            finally:
                os.close(fd)
                arrived[0] = n

        def distribute() -> None:
            while not stop.is_set():
                done = subprocess.run([sys.executable, "-m", "m1nd", "distribute"], env=env, capture_output=True)
                assert done.returncode == 0, done.stderr
                distributions[0] += 1

        def valid(path: str, response: httpx.Response) -> bool:
            if response.status_code != 200:
                return False
            if path.startswith("/api/"):
                doc = orjson.loads(response.content)
                return set(doc) == {"served_brain", "letters", "counts"} and doc["served_brain"]["display_name"] == "repo-000"
            body = response.text
            return body.startswith("<!doctype html>") and body.endswith("</html>\n") and "<h1>Mailbox</h1>" in body

        def client(k: int) -> None:
            paths = ["/api/mailbox?brain=repo-000", "/"]
            with httpx.Client(timeout=120) as http:
                i = k
                while not stop.is_set():
                    path = paths[i % 2]
                    i += 1
                    started = time.perf_counter()
                    try:
                        response = http.get(base + path)
                        ok = valid(path, response)
                        status = response.status_code
                    except (httpx.HTTPError, orjson.JSONDecodeError):
                        ok, status = False, -1
                    with lock:
                        results.append((path, status, time.perf_counter() - started, ok))
                        if len(results) >= MAX_REQUESTS:
                            stop.set()

        workers = [threading.Thread(target=arrive), threading.Thread(target=distribute)]
        workers += [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        for w in workers:
            w.start()
        time.sleep(SECONDS)
        stop.set()
        for w in workers:
            w.join(300)
        assert not any(w.is_alive() for w in workers)
        assert srv.stop() == 0
        assert "Traceback" not in srv.stderr()

    bad = [r for r in results if not r[3]]
    assert not bad, bad[:5]
    report = {"letters": LETTERS, "clients": CLIENTS, "seconds": SECONDS, "arrived": arrived[0],
              "distributions": distributions[0], "routes": {}}
    for path in ("/api/mailbox?brain=repo-000", "/"):
        times = [r[2] for r in results if r[0] == path]
        assert len(times) >= CLIENTS // 2, path
        report["routes"][path] = {"requests": len(times), "p50_ms": round(statistics.median(times) * 1000, 1),
                                  "p99_ms": round(quantile(times, 0.99) * 1000, 1),
                                  "max_ms": round(max(times) * 1000, 1)}
    assert arrived[0] > 0 and distributions[0] > 0
    out = ARTIFACTS / "serve"
    out.mkdir(parents=True, exist_ok=True)
    (out / "load.json").write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(report).decode())
