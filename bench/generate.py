"""A seeded synthetic spool: N letters over K repositories.

    python bench/generate.py OUT --letters 1000000 --repos 50 [--seed 7] [--append] [--realistic]

Letters name their repository the ways agents do (a bare name, an annotated name, a
`~/src/...` path, an absolute path inside the root), plus projectless letters,
letters for repositories this machine does not have, replies and external tools.
The same arguments always give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random

import orjson

WORDS = (
    "seek returned a deleted node after compaction while the index was warm and the cache "
    "held a stale page so the caller saw a ghost entry that vanished on retry with no error "
    "recall memory store route write box label spool checkout merge branch worktree hook"
).split()
CLASSES = ("bug", "honesty", "note", "bug", "ux", "memory_misdelivery")
TOOLS = ("seek", "recall", "index (warm cache)", "north (memory beat)", "build", "playwright")


def repo_name(i: int) -> str:
    return f"repo-{i:03d}"


IDENTS = ("ReadModelRefreshCoordinatorFactory", "test_every_view_from_the_model_equals_the_files",
          "SPOOL_LOCATION_RECORD_SIZE_BYTES", "distribute_first_run_with_held_letters_batch")
PATHS = ("src/m1nd/readmodel/update.py", "/home/dev/src/repo-a/tests/e2e/test_git_travel.py",
         "packages/core/lib/index/compaction/segment_merger.rs", "~/work/service-b/internal/cache/lru_eviction.go")


PROSE = ("the docker build failed after the auth token refresh", "the api key rotation moved to the vault",
         "token budget ran out halfway through the review", "docker compose up hung on the auth service",
         "the key column of the index was stale", "asked for auth again after the token expired")


def realistic_prose(rng: random.Random) -> str:
    """About one letter in nine says docker, token, auth or key in prose."""
    return rng.choice(PROSE) if rng.random() < 1 / 9 else ""


def realistic_token(rng: random.Random) -> str:
    """What real field reports carry: a commit hash or a digest, a long identifier or
    a path (about a third each), or nothing special."""
    r = rng.random()
    if r < 1 / 6:
        return "commit " + "".join(rng.choice("0123456789abcdef") for _ in range(40))
    if r < 2 / 6:
        return "sha256:" + "".join(rng.choice("0123456789abcdef") for _ in range(64))
    if r < 3 / 6:
        return rng.choice(IDENTS) + f"_{rng.randrange(10 ** 6)}"
    if r < 4 / 6:
        return rng.choice(PATHS) + f":{rng.randrange(1, 2000)}"
    return ""


def letter(rng: random.Random, n: int, repos: int, roots_dir: str, recent: list[str], realistic: bool = False) -> bytes:
    r = rng.random()
    i = rng.randrange(repos)
    fields: dict = {
        "ts": f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:"
              f"{rng.randrange(60):02d}:00Z",
        "agent": f"agent-{rng.randrange(8)}",
        "class": rng.choice(CLASSES),
    }
    if r < 0.55:
        fields["repo"] = repo_name(i)
    elif r < 0.70:
        fields["repo"] = f"{repo_name(i)} (main checkout)"
    elif r < 0.78:
        fields["repo"] = f"~/src/{repo_name(i)}/"
    elif r < 0.84:
        fields["repo"] = os.path.join(roots_dir, repo_name(i), "src", "module")
    elif r < 0.92:
        fields["repo"] = "all"
        if rng.random() < 0.5:
            fields["brain"] = "medulla"
    else:
        fields["repo"] = f"elsewhere-{rng.randrange(10)}"
    fields["tool"] = rng.choice(TOOLS)
    fields["what"] = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(12, 30)))
    fields["expected"] = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 12)))
    if realistic:
        prose = realistic_prose(rng)
        if prose:
            fields["what"] += " " + prose
        token = realistic_token(rng)
        if token:
            fields["what"] += " " + token
            if rng.random() < 0.5:
                fields["snippet"] = token
    if recent and rng.random() < 0.05:
        fields["class"] = "triage" if rng.random() < 0.5 else "pickup"
        fields["answers"] = [rng.choice(recent)]
    fields["seq"] = n
    return orjson.dumps(fields)


def generate(out: str, letters: int, repos: int, roots_dir: str, seed: int, append: bool,
             realistic: bool = False) -> None:
    rng = random.Random(seed)
    recent: list[str] = []
    with open(out, "ab" if append else "wb") as fh:
        buf = []
        for n in range(letters):
            raw = letter(rng, n, repos, roots_dir, recent, realistic)
            if n % 97 == 0:
                recent.append(hashlib.sha256(raw).hexdigest()[:12])
                recent = recent[-64:]
            buf.append(raw)
            if len(buf) >= 10000:
                fh.write(b"\n".join(buf) + b"\n")
                buf = []
        if buf:
            fh.write(b"\n".join(buf) + b"\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--letters", type=int, default=1_000_000)
    ap.add_argument("--repos", type=int, default=50)
    ap.add_argument("--roots-dir", default="roots")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--realistic", action="store_true",
                    help="letters carrying commit hashes, digests, long identifiers and paths")
    a = ap.parse_args()
    generate(a.out, a.letters, a.repos, os.path.abspath(a.roots_dir), a.seed, a.append, a.realistic)


if __name__ == "__main__":
    main()
