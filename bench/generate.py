"""A seeded synthetic spool: N letters over K repositories.

    python bench/generate.py OUT --letters 1000000 --repos 50 [--seed 7] [--append] [--realistic]

Letters name their repository the ways agents do (a bare name, an annotated name, a
`~/src/...` path, an absolute path inside the root), plus projectless letters,
letters for repositories this machine does not have, replies and external tools.
`--realistic` gives the mix of agents' real field reports: 20 % replies to earlier
letters by their real ids (9 % receipts, 7 % pickups), 8 % projectless, 8 % for
unknown repositories, 12 % foreign tools, a third with a commit hash or digest, a
third with an identifier or path, one in nine saying docker, token, auth or key in
prose, 5 % multi-line snippets.  As agents write them, its letters come in time
order (their clocks a few minutes apart), and letters appended later carry later
times and answer letters already in the spool.
The same arguments (and, with --append, the same spool) always give the same bytes.
"""

from __future__ import annotations

import argparse
import datetime
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


def letter(rng: random.Random, n: int, repos: int, roots_dir: str, recent: list[str]) -> bytes:
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
    if recent and rng.random() < 0.05:
        fields["class"] = "triage" if rng.random() < 0.5 else "pickup"
        fields["answers"] = [rng.choice(recent)]
    fields["seq"] = n
    return orjson.dumps(fields)


# The realistic spool's mix, as fractions of all letters (the measured field reports).
RECEIPTS, PICKUPS, OTHER_REPLIES = 0.09, 0.07, 0.04  # 20 % replies to earlier letters by their real ids
PROJECTLESS, UNKNOWN_REPO, FOREIGN = 0.08, 0.08, 0.12
WORRY_WORDS = ("docker", "token", "auth", "key")  # prose words, never a credential
FOREIGN_TOOLS = ("playwright", "context7 (docs)", "semgrep", "browseros")
PROSE = (
    "the {w} step failed after the image rebuilt so the {w} check ran against the old layer",
    "rotating the {w} config made the login retry loop forever until the {w} cache expired",
    "the docs call it an api {w} but the field is a plain label set by the {w} helper",
)
SNIPPET_LINES = ("Traceback (most recent call last):", '  File "src/m1nd/readmodel/update.py", line 212, in apply',
                 "    rows = self.pending[key]", "KeyError: 'repo-007'", "$ git status --porcelain", " M .m1nd/inbox.jsonl")


class Replies:
    """Earlier letters a reply can name: the last few thousand plus a thin sample of
    older ones, so memory stays flat in N. Each entry is (id, repo, brain): a reply
    goes where its letter is."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.recent: list[tuple] = []
        self.old: list[tuple] = []

    def add(self, entry: tuple) -> None:
        self.recent.append(entry)
        if len(self.recent) > 4096:
            if self.rng.random() < 0.05:
                slot = self.rng.randrange(1024)
                if len(self.old) < 1024:
                    self.old.append(self.recent[0])
                else:
                    self.old[slot] = self.recent[0]
            del self.recent[:1]

    def pick(self):
        pool = self.old if self.old and self.rng.random() < 0.2 else self.recent
        return self.rng.choice(pool) if pool else None


START = datetime.datetime(2026, 1, 1, 0, 5, tzinfo=datetime.timezone.utc)
SPAN = datetime.timedelta(days=330)  # a first spool's letters spread over this
APPENDED_EVERY = 30  # seconds between letters appended later (agents writing all day)
JITTER = 180  # seconds: agents' clocks and their writes are a few minutes apart


class Clock:
    """When each letter was written: in spool order, give or take JITTER."""

    def __init__(self, start: datetime.datetime, step: float) -> None:
        self.start = start
        self.step = step

    def stamp(self, rng: random.Random, n: int) -> str:
        at = self.start + datetime.timedelta(seconds=n * self.step + rng.randrange(-JITTER, JITTER + 1))
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def continued(out: str, letters: int, rng: random.Random, replies: Replies) -> Clock:
    """The clock of a realistic spool, and the letters a reply may answer: after the
    last letters already in `out` when appending to it (read from its tail), else
    from START over SPAN."""
    lines: list[bytes] = []
    try:
        with open(out, "rb") as fh:
            at = max(os.fstat(fh.fileno()).st_size - (4 << 20), 0)
            fh.seek(at)
            lines = fh.read().split(b"\n")[1 if at else 0:]  # a cut first line is left out
    except FileNotFoundError:
        pass
    last = None
    for raw in lines:
        try:
            fields = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(fields, dict) or not isinstance(fields.get("repo"), str):
            continue
        replies.add((hashlib.sha256(raw).hexdigest()[:12], fields["repo"], fields.get("brain")))
        try:  # the generator's own form; a letter written otherwise does not set the clock
            at = datetime.datetime.strptime(fields.get("ts"), "%Y-%m-%dT%H:%M:%SZ")
        except (TypeError, ValueError):
            continue
        if last is None or at > last:
            last = at
    if last is None:
        return Clock(START, SPAN.total_seconds() / max(letters, 1))
    begin = last.replace(tzinfo=datetime.timezone.utc)
    return Clock(begin + datetime.timedelta(seconds=JITTER + APPENDED_EVERY), APPENDED_EVERY)


def realistic_letter(rng: random.Random, n: int, repos: int, roots_dir: str, replies: Replies, clock: Clock) -> dict:
    """One letter of the realistic mix (see the fractions above)."""
    fields: dict = {
        "ts": clock.stamp(rng, n),
        "agent": f"agent-{rng.randrange(8)}",
        "class": rng.choice(CLASSES),
    }
    r = rng.random()
    i = rng.randrange(repos)
    if r < PROJECTLESS:
        fields["repo"] = "all"
        if rng.random() < 0.5:
            fields["brain"] = "medulla"
    elif r < PROJECTLESS + UNKNOWN_REPO:
        fields["repo"] = f"elsewhere-{rng.randrange(10)}"
    else:
        r = rng.random()
        if r < 0.6:
            fields["repo"] = repo_name(i)
        elif r < 0.8:
            fields["repo"] = f"{repo_name(i)} (main checkout)"
        elif r < 0.9:
            fields["repo"] = f"~/src/{repo_name(i)}/"
        else:
            fields["repo"] = os.path.join(roots_dir, repo_name(i), "src", "module")
    fields["tool"] = rng.choice(FOREIGN_TOOLS) if rng.random() < FOREIGN else rng.choice(TOOLS[:5])
    what = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(12, 30)))
    if rng.random() < 1 / 9:
        what += " " + rng.choice(PROSE).format(w=rng.choice(WORRY_WORDS))
    r = rng.random()  # a third carry a hash or digest, a third an identifier or a path
    if r < 1 / 3:
        what += " " + ("commit " + "".join(rng.choice("0123456789abcdef") for _ in range(40)) if rng.random() < 0.5
                       else "sha256:" + "".join(rng.choice("0123456789abcdef") for _ in range(64)))
    elif r < 2 / 3:
        what += " " + (rng.choice(IDENTS) + f"_{rng.randrange(10 ** 6)}" if rng.random() < 0.5
                       else rng.choice(PATHS) + f":{rng.randrange(1, 2000)}")
    fields["what"] = what
    fields["expected"] = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 12)))
    if rng.random() < 0.05:
        start = rng.randrange(len(SNIPPET_LINES) - 2)
        fields["snippet"] = "\n".join(SNIPPET_LINES[start:start + rng.randrange(2, 4)])
    r = rng.random()
    if r < RECEIPTS + PICKUPS + OTHER_REPLIES:
        target = replies.pick()
        if target is not None:
            fields["class"] = "triage" if r < RECEIPTS else "pickup" if r < RECEIPTS + PICKUPS else "note"
            fields["answers"] = [target[0]]
            fields["repo"] = target[1]
            if target[2] is not None:
                fields["brain"] = target[2]
            else:
                fields.pop("brain", None)
    fields["seq"] = n
    return fields


def generate(out: str, letters: int, repos: int, roots_dir: str, seed: int, append: bool,
             realistic: bool = False) -> None:
    rng = random.Random(seed)
    recent: list[str] = []
    replies = Replies(rng)
    clock = continued(out if append else "", letters, rng, replies) if realistic else None
    with open(out, "ab" if append else "wb") as fh:
        buf = []
        for n in range(letters):
            if realistic:
                fields = realistic_letter(rng, n, repos, roots_dir, replies, clock)
                raw = orjson.dumps(fields)
                replies.add((hashlib.sha256(raw).hexdigest()[:12], fields["repo"], fields.get("brain")))
            else:
                raw = letter(rng, n, repos, roots_dir, recent)
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
                    help="the mix of real field reports (replies by real ids, hashes, paths, snippets, ...)")
    a = ap.parse_args()
    generate(a.out, a.letters, a.repos, os.path.abspath(a.roots_dir), a.seed, a.append, a.realistic)


if __name__ == "__main__":
    main()
