"""The held rule's cost and recall, measured.
    PYTHONPATH=. python bench/secrets.py [--letters 100000]
Prints: the external corpus table (credential letters held, formats held in every
wrapping, ordinary lines held), then the cost of judging a realistic spool (letters
saying docker/token/auth/key in prose, hashes, digests, paths) as a ratio to parsing
the same letters with orjson, and the engine's compile time in a new home."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--letters", type=int, default=100_000)
    a = ap.parse_args()
    if a.letters > 100_000:
        sys.exit("bench/secrets.py: at most 100,000 letters")
    from secret_wrappings import credential_letters, load_corpus, ordinary_letters
    from m1nd import secrets
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        secrets._Engine.get()
        compile_s = time.perf_counter() - t
        corpus = load_corpus()
        if corpus is None:
            print("external corpus not found beside the repository: table not printed")
        else:
            creds = credential_letters(corpus)
            held = secrets.held_in_batch([raw for _, _, raw in creds])
            by_format: dict[str, bool] = {}
            for i, (fid, _, _) in enumerate(creds):
                by_format[fid] = by_format.get(fid, True) and i in held
            ordinary = ordinary_letters(corpus)
            oh = secrets.held_in_batch(ordinary)
            print(f"credential letters held   {len(held)} / {len(creds)} ({len(held) / len(creds):.1%})")
            print(f"formats with every letter {sum(by_format.values())} / {len(by_format)}")
            print(f"ordinary lines held       {len(oh)} / {len(ordinary)}")
        spool = os.path.join(d, "spool.jsonl")
        subprocess.run([sys.executable, os.path.join(HERE, "generate.py"), spool, "--letters", str(a.letters),
                        "--repos", "20", "--realistic"], check=True)
        raws = open(spool, "rb").read().splitlines()
        t = time.perf_counter()
        for raw in raws:
            orjson.loads(raw)
        base = time.perf_counter() - t
        t = time.perf_counter()
        found = secrets.held_in_batch(raws)
        cost = time.perf_counter() - t
        n = len(raws)
        print(f"realistic spool {n} letters: held check {cost / n * 1e6:.2f} us/letter, "
              f"parse {base / n * 1e6:.2f} us/letter (ratio {cost / base:.2f}), held {len(found)}; "
              f"engine compile {compile_s:.2f} s (no cache)")


if __name__ == "__main__":
    main()
