"""Faults, with real processes and real files (contract sections 1, 2, 4, 6, 8, 10).

- kill -9 at many points of a large distribution, and at chosen calls (a box write,
  a box fsync, the index, the cursor, the location log; in a first, an incremental
  and a rescanning run, and while refiling), then a re-run: every letter in its box
  exactly once, at most one torn fragment per box per kill, named by doctor; kill -9
  in the middle of `m1nd write`: one spool fragment, never filed;
- many writers and distributors at once, some distributors killed: every letter once;
- the spool truncated, replaced, rotated or rewritten between runs, a box rewritten or
  extended by git between runs: the next run prints what a first run would;
- a read-only home, state directory or box, an unreadable box or spool, a full disk
  or a failing write: a one-line error, exit 1, the spool untouched, nothing
  half-written beyond one fragment line, and a later normal run completes;
- state deleted or corrupted: the next run prints what a first run would, and says
  that it found corruption.

Nothing of m1nd is mocked.  Faults at a call are injected by faultshim.py, which
wraps os.write / os.fsync / os.ftruncate / os.replace in the m1nd process.

Expected results are computed independently of m1nd: letters are split and parsed
here by the contract's rules (section 2), ids are sha256 here, and letters are routed
here (section 3) for the simple shapes these tests write.  The reference document is
always that of a first run over a copy of the same spool, roster and boxes, taken at
the very same paths (the originals moved aside for the moment).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pytest

PY = sys.executable
HERE = Path(__file__).resolve().parent
SHIM = HERE / "faultshim.py"
GENERATE = HERE.parents[1] / "bench" / "generate.py"
STRING_FIELDS = ("ts", "agent", "class", "repo", "brain", "tool", "what", "expected", "snippet")
NOBODY = 65534


# --- running m1nd ---------------------------------------------------------------------


@dataclass
class Done:
    code: int
    out: bytes
    err: str

    @property
    def json(self):
        return orjson.loads(self.out)

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]


def command(args, *, shim: dict | None = None, user: int | None = None) -> list[str]:
    cmd = [PY, str(SHIM), *args] if shim is not None else [PY, "-m", "m1nd", *args]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *cmd]
    return cmd


def m1nd(*args, cwd=None, env=None, shim: dict | None = None, user: int | None = None, timeout=240) -> Done:
    """Run `m1nd ARGS` as a real process (through the fault shim when `shim` is given)."""
    full_env = dict(os.environ if env is None else env)
    if shim is not None:
        full_env.update({f"FAULTSHIM_{k.upper()}": str(v) for k, v in shim.items()})
    done = subprocess.run(command([str(a) for a in args], shim=shim, user=user), cwd=cwd or os.getcwd(),
                          env=full_env, capture_output=True, timeout=timeout)
    return Done(done.returncode, done.stdout, done.stderr.decode("utf-8", "replace"))


def popen(*args, cwd=None, env=None) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "m1nd", *[str(a) for a in args]], cwd=cwd or os.getcwd(),
                            env=dict(os.environ if env is None else env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def no_traceback(done: Done) -> None:
    assert "Traceback" not in done.err, done.err


def one_error_line(done: Done, *needles: str) -> str:
    """The run failed with exit 1 and said why in exactly one line naming `needles`."""
    no_traceback(done)
    assert done.code == 1, (done.code, done.err)
    errors = [line for line in done.err_lines if line.startswith("m1nd: error:")]
    assert len(errors) == 1, done.err
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


# --- the contract's letters, independently -----------------------------------------------


def _reject_constant(name):
    raise ValueError(name)


def _finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def strict_load(raw: bytes) -> dict | None:
    """The letter object of a line's raw bytes (contract section 2), None when malformed."""
    try:
        obj = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite)
        json.dumps(obj, ensure_ascii=False).encode("utf-8")  # no unpaired surrogate
    except (UnicodeError, ValueError):
        return None
    if not isinstance(obj, dict):
        return None
    if any(k in obj and not isinstance(obj[k], str) for k in STRING_FIELDS):
        return None
    answers = obj.get("answers", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        return None
    if obj.get("kind") is not None and not isinstance(obj["kind"], str):
        return None
    return obj


def sha12(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:12]


@dataclass
class Line:
    number: int
    start: int
    raw: bytes
    terminated: bool
    obj: dict | None

    @property
    def blank(self) -> bool:
        return not self.raw.strip()


def raw_lines(data: bytes):
    """(number, start, raw, terminated) per line, split on `\n`, one `\r` dropped:
    the contract's rule, written out here independently of m1nd's reader."""
    start, number = 0, 0
    while start < len(data):
        end = data.find(b"\n", start)
        terminated = end >= 0
        end = end if terminated else len(data)
        raw = data[start:end]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        number += 1
        yield number, start, raw, terminated
        start = end + 1


def split_lines(data: bytes) -> list[Line]:
    return [Line(number, start, raw, terminated, None if not raw.strip() else strict_load(raw))
            for number, start, raw, terminated in raw_lines(data)]


def spool_letters(data: bytes) -> list[Line]:
    """The spool's letters (a final unterminated line counts when it parses)."""
    return [line for line in split_lines(data) if line.obj is not None]


@dataclass
class BoxScan:
    ids: list[str]  # letter ids in file order
    fragments: list[Line]  # lines that are neither blank nor a letter

    @property
    def unterminated_fragment(self) -> Line | None:
        last = self.fragments[-1] if self.fragments else None
        return last if last is not None and not last.terminated else None


def scan_box(path: Path, known: set[str] = frozenset()) -> BoxScan:
    """A box's letters and fragments.  A line whose id is in `known` (letters already
    parsed here, from the spool) is a letter without being parsed again."""
    if not path.exists():
        return BoxScan([], [])
    ids, fragments = [], []
    for number, start, raw, terminated in raw_lines(path.read_bytes()):
        if raw.strip():
            lid = sha12(raw)
            if lid in known or strict_load(raw) is not None:
                ids.append(lid)
            else:
                fragments.append(Line(number, start, raw, terminated, None))
    return BoxScan(ids, fragments)


class Router:
    """Contract section 3 for the field shapes these tests write (no bound root)."""

    def __init__(self, roots: dict[str, Path], home: Path):
        self.roots = {label: Path(os.path.realpath(p)) for label, p in roots.items()}
        self.home = str(home)

    def route(self, obj: dict) -> str | None:
        """A root label, "medulla", or None (pending)."""
        brain = obj.get("brain", "")
        field_ = brain if brain.strip() else obj.get("repo", "")
        if brain.lower() == "medulla":
            return "medulla"
        if field_.startswith("project:"):
            field_ = field_[len("project:"):]
        step1 = field_.split("(", 1)[0].strip(" \t\n\r\f\v")
        step2 = step1
        if step2 == "~" or step2.startswith("~/"):
            step2 = os.environ["HOME"] + step2[1:]
        step2 = step2.strip(" \t\n\r\f\v").rstrip("/")
        low = step1.lower()
        if step2 == self.home or step2.startswith(self.home + "/") or low in ("all", "") \
                or low.startswith("research task"):
            return "medulla"
        if step2.startswith("/"):
            real = Path(os.path.realpath(step2))
            inside = [(len(r.parts), label) for label, r in self.roots.items() if real == r or r in real.parents]
            if inside:
                return max(inside)[1]
        name = step2.rsplit("/", 1)[-1]
        if name in ("", ".", ".."):
            name = step2
        return name if name in self.roots else None


def expected_boxes(spool: bytes, router: Router, held: set[str] = frozenset()) -> dict[str, set[str]]:
    """Box label → the ids of the spool letters it must hold (held letters: none)."""
    out: dict[str, set[str]] = {"medulla": set(), **{label: set() for label in router.roots}}
    for line in spool_letters(spool):
        dest = router.route(line.obj)
        lid = sha12(line.raw)
        if dest is None or (dest != "medulla" and lid in held):
            continue
        out[dest].add(lid)
    return out


def assert_each_letter_once(boxes: dict[str, Path], expected: dict[str, set[str]]) -> dict[str, BoxScan]:
    scans = {}
    for label, path in boxes.items():
        scan = scans[label] = scan_box(path, expected[label])
        assert len(scan.ids) == len(set(scan.ids)), f"{label}: a letter is in the box twice"
        missing = expected[label] - set(scan.ids)
        extra = set(scan.ids) - expected[label]
        assert not missing, f"{label}: {len(missing)} letters lost"
        assert not extra, f"{label}: {len(extra)} letters that are not its own"
    return scans


def doctor_boxes_check(*args, cwd=None) -> dict:
    done = m1nd("doctor", "--json", *args, cwd=cwd)
    no_traceback(done)
    return next(c for c in done.json["checks"] if c["name"] == "boxes")


def assert_doctor_names_fragments(scans: dict[str, BoxScan], *args, cwd=None) -> None:
    """Every box holding a fragment line is named by doctor's `boxes` check, with its line."""
    torn = {label: s.fragments for label, s in scans.items() if s.fragments}
    check = doctor_boxes_check(*args, cwd=cwd)
    if not torn:
        assert check["status"] == "ok", check
        return
    assert check["status"] == "warn", check
    for label, fragments in torn.items():
        assert f"{label}: " in check["message"], (label, check["message"])
        for line in fragments[:5]:
            assert str(line.number) in check["message"], (label, line.number, check["message"])


def without_appended(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))
    receipt = doc["distribution"] if "distribution" in doc else doc
    if receipt is not None:
        receipt["appended"] = None
    return doc


def first_run_over_copies(args, trees: list[Path], home: Path, cwd=None, env=None) -> tuple[dict, Done]:
    """The document a first run over the same spool, roster and boxes prints.

    Each tree (the home, the directory holding the roots, ...) is moved aside and a
    copy put at its path, so that every path stays the same; the copy of the home
    loses its private state.  The copies are thrown away and the originals put back
    afterwards (renames keep their inodes, so their state still verifies).
    """
    aside = [t.with_name(t.name + ".real") for t in trees]
    for tree, real in zip(trees, aside):
        if tree.exists():
            os.rename(tree, real)
            shutil.copytree(real, tree, symlinks=True)
    try:
        shutil.rmtree(home / "state", ignore_errors=True)
        done = m1nd("--inbox-sweep", *args, cwd=cwd, env=env)
        no_traceback(done)
        return done.json, done
    finally:
        for tree, real in zip(trees, aside):
            if real.exists():
                shutil.rmtree(tree, ignore_errors=True)
                os.rename(real, tree)


def file_hash(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def box_bytes(boxes: dict[str, Path]) -> dict[str, bytes]:
    return {label: p.read_bytes() if p.exists() else b"" for label, p in boxes.items()}


def assert_boxes_only_grew(before: dict[str, bytes], boxes: dict[str, Path]) -> None:
    for label, old in before.items():
        new = boxes[label].read_bytes() if boxes[label].exists() else b""
        assert new.startswith(old), f"{label}: a box lost bytes"


def letter(dest: str, n: int, pad: int = 40, **extra) -> bytes:
    """A compact letter for `dest` (a root label, "all", or a name no root has)."""
    fields = {"ts": "2026-05-01T10:00:00Z", "agent": f"agent-{n % 3}", "class": "bug", "repo": dest,
              "what": f"fault test letter {n:06d} " + "w" * (pad + n % 17), **extra}
    if dest == "medulla":
        fields["repo"], fields["brain"] = "all", "medulla"
    return orjson.dumps(fields)


def append_spool(path: Path, raws: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as fh:
        fh.write(b"".join(raw + b"\n" for raw in raws))


# --- a small world: roots, home, spool ------------------------------------------------


@dataclass
class World:
    base: Path
    home: Path
    roots_dir: Path
    labels: tuple[str, ...]
    work: Path
    env: dict | None = None
    extra_trees: list[Path] = field(default_factory=list)
    user: int | None = None  # run m1nd as this uid (setpriv)

    @property
    def spool(self) -> Path:
        return self.home / "field-reports.jsonl"

    @property
    def root_args(self) -> list[str]:
        out = []
        for label in self.labels:
            out += ["--root", str(self.roots_dir / label)]
        return out

    @property
    def boxes(self) -> dict[str, Path]:
        out = {label: self.roots_dir / label / ".m1nd" / "inbox.jsonl" for label in self.labels}
        out["medulla"] = self.home / "inbox.jsonl"
        return out

    @property
    def router(self) -> Router:
        return Router({label: self.roots_dir / label for label in self.labels}, self.home)

    def run(self, *args, **kw) -> Done:
        kw.setdefault("cwd", self.work)
        kw.setdefault("env", self.env)
        kw.setdefault("user", self.user)
        return m1nd(*args, *self.root_args, **kw)

    def expected(self, held: set[str] = frozenset()) -> dict[str, set[str]]:
        return expected_boxes(self.spool.read_bytes() if self.spool.exists() else b"", self.router, held)

    def reference(self) -> dict:
        doc, done = first_run_over_copies(self.root_args, [self.home, self.roots_dir, *self.extra_trees],
                                          self.home, cwd=self.work, env=self.env)
        return doc

    def wipe_filing(self) -> None:
        """Back to a first run: no box, no state (the spool stays)."""
        for label in self.labels:
            shutil.rmtree(self.roots_dir / label / ".m1nd", ignore_errors=True)
        shutil.rmtree(self.home / "state", ignore_errors=True)
        (self.home / "inbox.jsonl").unlink(missing_ok=True)


LABELS = ("repo-a", "repo-b", "repo-c")
DESTS = ("repo-a", "repo-b", "repo-c", "all", "medulla", "repo-elsewhere")


@pytest.fixture
def world(tmp_path, m1nd_home) -> World:
    roots_dir = tmp_path / "src"
    for label in LABELS:
        (roots_dir / label).mkdir(parents=True)
    m1nd_home.mkdir(mode=0o700)
    return World(tmp_path, m1nd_home, roots_dir, LABELS, tmp_path / "work")


def fill(world: World, count: int, start: int = 0, pad: int = 40) -> list[bytes]:
    raws = [letter(DESTS[n % len(DESTS)], n, pad) for n in range(start, start + count)]
    append_spool(world.spool, raws)
    return raws


# --- kill -9 at random points of a large distribution --------------------------------


@pytest.mark.slow
def test_kill_9_at_many_points_of_a_large_distribution_then_a_rerun_files_every_letter_exactly_once(
    tmp_path, m1nd_home
):
    labels = tuple(f"repo-{i:03d}" for i in range(8))  # bench/generate.py's names
    roots_dir = tmp_path / "roots"
    for label in labels:
        (roots_dir / label).mkdir(parents=True)
    m1nd_home.mkdir(mode=0o700)
    w = World(tmp_path, m1nd_home, roots_dir, labels, tmp_path / "work")
    subprocess.run([PY, str(GENERATE), str(w.spool), "--letters", "120000", "--repos", "8",
                    "--roots-dir", str(roots_dir), "--seed", "11"], check=True)
    spool_hash = file_hash(w.spool)
    expected = w.expected()
    assert sum(map(len, expected.values())) > 100000

    # The reference: a clean first run (its document, and its boxes checked here).
    first = w.run("--inbox-sweep")
    assert first.code == 0 and first.err == "", first.err
    doc_ref = first.json
    assert_each_letter_once(w.boxes, expected)
    # How long a first run takes: the faster of two (on a loaded machine one slow run
    # would put every kill point past the end of the runs that follow).
    timings = []
    for _ in range(2):
        w.wipe_filing()
        started = time.monotonic()
        clean = w.run("distribute", "--json")
        timings.append(time.monotonic() - started)
        assert clean.code == 0, clean.err
    took = min(timings)
    receipt_ref = clean.json
    w.wipe_filing()

    # Kill at points spread over the whole run, very early to just past the end.
    rng = random.Random(0x6D316E64)
    windows = [(0.0, 0.0), (0.02, 0.08), (0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, 0.95),
               (0.93, 1.0), (0.98, 1.1)]
    torn: dict[str, set[int]] = {label: set() for label in w.boxes}  # fragment start offsets
    killed = early_kills = 0
    for lo, hi in windows:
        proc = popen("distribute", *w.root_args, cwd=w.work)
        time.sleep(rng.uniform(lo, hi) * took)
        proc.kill()
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, -signal.SIGKILL), err.decode()
        killed += proc.returncode == -signal.SIGKILL
        early_kills += proc.returncode == -signal.SIGKILL and hi <= 0.5
        assert b"Traceback" not in err
        # After every kill: no letter twice, none in a box not its own, and no fragment
        # but the one this kill may have torn at the end of a box (earlier ones are
        # terminated lines now, each one torn by an earlier kill).
        for label, path in w.boxes.items():
            scan = scan_box(path, expected[label])
            assert len(scan.ids) == len(set(scan.ids)), f"{label}: a letter twice after a kill"
            assert set(scan.ids) <= expected[label], f"{label}: a letter that is not its own"
            tail = scan.unterminated_fragment
            for line in scan.fragments:
                assert line is tail or line.start in torn[label], f"{label}: a fragment no kill tore"
            if tail is not None:  # torn by this kill, or by an earlier one and not yet repaired
                torn[label].add(tail.start)
    # A run after a kill has less left to do (it resumes; the filing also records the
    # coverage ledger after it), so the later windows may find it finished; the first
    # four (within half of a clean run, with at least half the work still to do) are
    # kills in the middle of the run on any machine.
    assert early_kills == 4, "the runs killed within half of a clean run's time should have been unfinished"
    assert file_hash(w.spool) == spool_hash, "distribution wrote to the spool"

    # The re-run completes: every letter once; each fragment is one line, torn by a kill.
    final = w.run("distribute", "--json")
    no_traceback(final)
    assert final.code == 0, final.err
    assert without_appended(final.json) == without_appended(receipt_ref)
    scans = assert_each_letter_once(w.boxes, expected)
    for label, scan in scans.items():
        assert {line.start for line in scan.fragments} == torn[label], label
        assert all(line.terminated for line in scan.fragments), label
    if any(scan.fragments for scan in scans.values()):  # (doctor over 120k letters takes seconds)
        assert_doctor_names_fragments(scans, *w.root_args, cwd=w.work)

    again = w.run("--inbox-sweep")
    assert again.code == 0, again.err
    assert without_appended(again.json) == without_appended(doc_ref)
    assert again.json["distribution"]["appended"] == 0
    assert file_hash(w.spool) == spool_hash
    print(f"kills: {killed}; fragments torn: {sum(map(len, torn.values()))}; clean run {took:.2f}s")


# --- kill -9 and failing writes at chosen calls ------------------------------------------


def box_target(label):
    return lambda w: str(w.boxes[label])


def state_target(suffix):
    return lambda w: f"{w.home}/state/{suffix}"


# (name, call, which file, the run it happens in: "first" from nothing, "incremental"
# after a complete run, "rescan" after a complete run over a spool since replaced)
CRASH_POINTS = [
    ("box write, first run", "write", box_target("repo-b"), "first"),
    ("box write, incremental run", "write", box_target("repo-b"), "incremental"),
    ("box write, rescan", "write", box_target("repo-b"), "rescan"),
    ("medulla box write", "write", box_target("medulla"), "incremental"),
    ("box fsync", "fsync", box_target("repo-a"), "incremental"),
    ("box index temp file write", "write", state_target("boxes/.m1nd-"), "incremental"),
    ("box index rename", "replace", state_target("boxes/"), "incremental"),
    ("location log truncation", "ftruncate", state_target("spool-locations.bin"), "incremental"),
    ("location log truncation, rescan", "ftruncate", state_target("spool-locations.bin"), "rescan"),
    ("location log write", "write", state_target("spool-locations.bin"), "incremental"),
    ("location log write, rescan", "write", state_target("spool-locations.bin"), "rescan"),
    ("cursor temp file write", "write", state_target(".m1nd-"), "incremental"),
    ("cursor rename", "replace", state_target("distribute.json"), "incremental"),
    ("cursor rename, rescan", "replace", state_target("distribute.json"), "rescan"),
    ("box write, refiling a root new to the run", "write", box_target("repo-c"), "new root"),
    ("box write, refiling a deleted box", "write", box_target("repo-b"), "deleted box"),
]


def prepare(world: World, mode: str = "incremental") -> None:
    """A spool of 3000 letters over every kind of destination.  "incremental": a
    complete run has filed the first 2000 already; "rescan": and the spool was then
    replaced by a new file (the same letters and more: every one must be read again);
    "new root": that run did not know repo-c; "deleted box": repo-b's box was deleted
    after it."""
    fill(world, 2000)
    if mode == "new root":  # repo-c's letters wait, then its root comes: they are refiled
        done = m1nd("distribute", *world.root_args[:-2], cwd=world.work)
        assert done.code == 0 and world.root_args[-1].endswith("repo-c"), done.err
    elif mode != "first":
        done = world.run("distribute")
        assert done.code == 0, done.err
    if mode == "deleted box":
        world.boxes["repo-b"].unlink()
    fill(world, 1000, start=2000)
    if mode == "rescan":
        copy = world.spool.with_name("incoming")
        copy.write_bytes(world.spool.read_bytes())
        os.replace(copy, world.spool)


def check_after_fault(world: World, spool_hash: str, expected: dict[str, set[str]]) -> None:
    """Nothing half-written beyond one fragment line per box, the spool untouched."""
    assert file_hash(world.spool) == spool_hash
    scans = {}
    for label, path in world.boxes.items():
        scan = scan_box(path, expected[label])
        assert len(scan.ids) == len(set(scan.ids)), f"{label}: a letter twice"
        assert set(scan.ids) <= expected[label], f"{label}: a letter that is not its own"
        assert len(scan.fragments) <= 1, f"{label}: {len(scan.fragments)} fragments"
        assert scan.fragments == [] or scan.unterminated_fragment is not None, label
        scans[label] = scan
    # A torn last line is named by doctor (and never counted as a letter).
    if any(scan.fragments for scan in scans.values()):
        check = doctor_boxes_check(*world.root_args, cwd=world.work)
        assert check["status"] == "warn", check
        for label, scan in scans.items():
            for line in scan.fragments:
                assert f"{label}: torn last line {line.number}" in check["message"], check


def check_recovered(world: World, expected, rerun: Done, reference: dict) -> None:
    """The normal run after a fault: complete, each letter once, the first run's result."""
    no_traceback(rerun)
    assert rerun.code == 0, rerun.err
    assert without_appended(rerun.json) == without_appended(reference["distribution"])
    scans = assert_each_letter_once(world.boxes, expected)
    for label, scan in scans.items():
        assert len(scan.fragments) <= 1, label
    assert_doctor_names_fragments(scans, *world.root_args, cwd=world.work)
    sweep = world.run("--inbox-sweep")
    assert sweep.code == 0 and sweep.err == "", sweep.err
    assert without_appended(sweep.json) == without_appended(reference)
    assert sweep.json["distribution"]["appended"] == 0


@pytest.mark.parametrize("name, op, target, mode", CRASH_POINTS, ids=[c[0] for c in CRASH_POINTS])
def test_kill_9_at_a_chosen_call_then_a_rerun_files_every_letter_exactly_once(world, tmp_path, name, op, target,
                                                                             mode):
    prepare(world, mode)
    spool_hash = file_hash(world.spool)
    expected = world.expected()
    before = box_bytes(world.boxes)
    mark = tmp_path / "fault-fired"
    crashed = world.run("distribute", shim={"op": op, "path": target(world), "action": "kill", "mark": mark})
    assert mark.exists(), f"the run never reached the {name}"
    assert crashed.code == -signal.SIGKILL, crashed.err
    check_after_fault(world, spool_hash, expected)
    assert_boxes_only_grew(before, world.boxes)
    before = box_bytes(world.boxes)

    rerun = world.run("distribute", "--json")
    assert rerun.err == "", rerun.err  # a crash is not corruption: nothing to warn about
    check_recovered(world, expected, rerun, world.reference())
    assert_boxes_only_grew(before, world.boxes)


# (name, call, which file, errno, bytes written before the fault, what the error line names)
FAILING_WRITES = [
    ("box, disk full mid-write", "write", box_target("repo-b"), "ENOSPC", None, ["box repo-b", "No space left"]),
    ("box, I/O error before any byte", "write", box_target("repo-b"), "EIO", 0, ["box repo-b", "Input/output"]),
    ("box, quota exceeded after one line", "write", box_target("repo-c"), "EDQUOT", 150, ["box repo-c", "quota"]),
    ("medulla box, disk full", "write", box_target("medulla"), "ENOSPC", None, ["box medulla", "No space left"]),
    ("box fsync fails", "fsync", box_target("repo-a"), "EIO", None, ["repo-a", "Input/output"]),
    ("box index save, disk full", "write", state_target("boxes/.m1nd-"), "ENOSPC", None,
     ["state/boxes", "No space left"]),
    ("location log, disk full", "write", state_target("spool-locations.bin"), "ENOSPC", None,
     ["spool-locations.bin", "No space left"]),
    ("cursor save, disk full", "write", state_target(".m1nd-"), "ENOSPC", None, ["state", "No space left"]),
    ("cursor rename fails", "replace", state_target("distribute.json"), "EIO", None,
     ["distribute.json", "Input/output"]),
]


@pytest.mark.parametrize("name, op, target, code, partial, needles", FAILING_WRITES,
                         ids=[c[0] for c in FAILING_WRITES])
def test_a_failing_write_gives_one_clear_error_line_exit_1_and_a_later_run_completes(
    world, tmp_path, name, op, target, code, partial, needles
):
    prepare(world)
    spool_hash = file_hash(world.spool)
    expected = world.expected()
    mark = tmp_path / "fault-fired"
    shim = {"op": op, "path": target(world), "action": code, "mark": mark}
    if partial is not None:
        shim["partial"] = partial
    before = box_bytes(world.boxes)
    failed = world.run("distribute", shim=shim)
    assert mark.exists(), f"the run never reached the {name}"
    one_error_line(failed, *needles)
    check_after_fault(world, spool_hash, expected)
    assert_boxes_only_grew(before, world.boxes)
    before = box_bytes(world.boxes)

    rerun = world.run("distribute", "--json")
    assert rerun.err == "", rerun.err
    check_recovered(world, expected, rerun, world.reference())
    assert_boxes_only_grew(before, world.boxes)


def test_a_full_disk_under_every_project_box_names_each_box_and_still_files_the_medulla_box(world, tmp_path):
    prepare(world)
    spool_hash = file_hash(world.spool)
    expected = world.expected()
    failed = world.run("distribute", shim={"op": "write", "path": str(world.roots_dir) + "/", "action": "ENOSPC"})
    no_traceback(failed)
    assert failed.code == 1
    errors = [line for line in failed.err_lines if line.startswith("m1nd: error:")]
    assert sorted(errors) == sorted(
        f"m1nd: error: box {label} not filed: cannot write {world.boxes[label]}: No space left on device"
        for label in LABELS
    ), failed.err
    check_after_fault(world, spool_hash, expected)
    assert set(scan_box(world.boxes["medulla"]).ids) == expected["medulla"]

    rerun = world.run("distribute", "--json")
    assert rerun.err == "", rerun.err
    check_recovered(world, expected, rerun, world.reference())


def test_a_full_disk_while_a_deleted_box_is_filled_again_then_a_normal_run_completes_it(world):
    prepare(world, "deleted box")
    expected = world.expected()
    failed = world.run("distribute", shim={"op": "write", "path": str(world.boxes["repo-b"]), "action": "ENOSPC"})
    one_error_line(failed, "box repo-b not filed", "No space left")
    # Filled in part: the box is neither missing nor empty any more.
    assert 0 < len(scan_box(world.boxes["repo-b"]).ids) < len(expected["repo-b"])
    rerun = world.run("distribute", "--json")
    assert rerun.err == "", rerun.err
    check_recovered(world, expected, rerun, world.reference())


def test_with_json_a_failing_box_still_prints_the_receipt_and_a_failing_state_prints_the_error_document(world):
    prepare(world)
    box = world.run("distribute", "--json", shim={"op": "write", "path": str(world.boxes["repo-a"]),
                                                  "action": "ENOSPC"})
    one_error_line(box, "box repo-a")
    assert set(box.json) == {"spool_total", "appended", "to_project", "to_medulla", "pending"}

    fill(world, 10, start=5000)
    state = world.run("distribute", "--json", shim={"op": "replace", "path": "distribute.json", "action": "EIO"})
    no_traceback(state)
    assert state.code == 1
    error = state.json["error"]
    assert error["code"] == 1 and "distribute.json" in error["message"] and "\n" not in error["message"]


def test_m1nd_write_on_a_full_disk_gives_one_error_line_and_at_most_one_fragment(world, tmp_path):
    fill(world, 5)
    done = m1nd("write", "--repo", "repo-a", "--what", "a letter that meets a full disk",
                shim={"op": "write", "path": str(world.spool), "action": "ENOSPC"})
    one_error_line(done, str(world.spool), "No space left")
    assert done.out == b""  # no id printed for a letter that was not written
    lines = split_lines(world.spool.read_bytes())
    assert [l for l in lines if l.obj is None] in ([], [lines[-1]])
    # The next write closes the fragment and is one whole line of its own.
    after = m1nd("write", "--repo", "repo-a", "--what", "once the disk has room again")
    assert after.code == 0, after.err
    lines = split_lines(world.spool.read_bytes())
    assert len([l for l in lines if l.obj is None]) <= 1 and lines[-1].obj is not None and lines[-1].terminated
    assert sha12(lines[-1].raw) == after.out.decode().strip()


def test_kill_9_in_the_middle_of_m1nd_write_leaves_one_fragment_that_is_never_filed_and_doctor_names(world,
                                                                                                      tmp_path):
    fill(world, 20)
    assert world.run("distribute").code == 0
    mark = tmp_path / "fault-fired"
    killed = m1nd("write", "--repo", "repo-a", "--what", "killed while writing this", cwd=world.work,
                  shim={"op": "write", "path": str(world.spool), "action": "kill", "partial": 40, "mark": mark})
    assert mark.exists() and killed.code == -signal.SIGKILL
    lines = split_lines(world.spool.read_bytes())
    assert len(lines) == 21 and not lines[-1].terminated and lines[-1].obj is None

    done = world.run("distribute", "--json")
    assert done.code == 0 and done.err == "", done.err
    assert done.json["spool_total"] == 20 and done.json["appended"] == 0
    spool_check = next(c for c in world.run("doctor", "--json").json["checks"] if c["name"] == "spool")
    assert spool_check["status"] == "warn" and "line 21 is an unfinished tail" in spool_check["message"]

    # The next write starts a fresh line: the fragment becomes one malformed line,
    # never filed, named by doctor; the new letter is filed.
    again = m1nd("write", "--repo", "repo-a", "--what", "written after the crash", cwd=world.work)
    assert again.code == 0, again.err
    lines = split_lines(world.spool.read_bytes())
    assert len(lines) == 22 and lines[20].terminated and lines[20].obj is None and lines[21].obj is not None
    reference = world.reference()
    done = world.run("--inbox-sweep")
    assert done.code == 0 and done.err == "", done.err
    assert without_appended(done.json) == without_appended(reference)
    assert done.json["distribution"]["spool_total"] == 21
    assert_each_letter_once(world.boxes, world.expected())
    spool_check = next(c for c in world.run("doctor", "--json").json["checks"] if c["name"] == "spool")
    assert spool_check["status"] == "warn" and "line 21" in spool_check["message"]
    assert "malformed" in spool_check["message"]


# --- state under <home>/state/ deleted or corrupted --------------------------------------

SECRET = b"hunter22"


def held_ids(world: World) -> set[str]:
    """Letters carrying the one likely secret these tests write (held from project boxes)."""
    data = world.spool.read_bytes() if world.spool.exists() else b""
    return {sha12(l.raw) for l in spool_letters(data) if SECRET in l.raw}


def with_held(world: World, count: int, start: int, at: int) -> None:
    """`count` letters, the one at index `at` carrying a likely secret for repo-a."""
    raws = [letter(DESTS[n % len(DESTS)], n) for n in range(start, start + count)]
    raws[at] = letter("repo-a", start + at, what="staging login failed: password=hunter22 was rejected")
    append_spool(world.spool, raws)


def _rewrite_json(state: Path, change) -> None:
    doc = orjson.loads((state / "distribute.json").read_bytes())
    change(doc)
    (state / "distribute.json").write_bytes(orjson.dumps(doc))


def _bump_a_count(doc) -> None:
    doc["pairs"][0][3] += 3


def _route_pending_to_medulla(doc) -> None:
    pair = next(p for p in doc["pairs"] if p[2].startswith("n\0"))
    pair[2] = "m"


def _scramble_locations(state: Path) -> None:
    log = state / "spool-locations.bin"
    data = log.read_bytes()
    records = [data[i:i + 16] for i in range(0, len(data), 16)]
    assert len(data) % 16 == 0 and records
    # Same length, same pair numbers, every offset moved a few bytes into its line.
    out = b"".join(r[:4] + (int.from_bytes(r[4:12], "little") + 7).to_bytes(8, "little") + r[12:] for r in records)
    log.write_bytes(out)


def _for_each_index(change):
    def run(state: Path) -> None:
        found = sorted((state / "boxes").glob("*.idx"))
        assert found
        for idx in found:
            idx.write_bytes(change(idx.read_bytes()))
    return run


GARBAGE = bytes(random.Random(7).randrange(256) for _ in range(300))

# (name, corruption of the state directory, delete repo-a's box too, the file the warning names)
CORRUPTIONS = [
    ("cursor: garbage bytes", lambda s: (s / "distribute.json").write_bytes(GARBAGE), False, "distribute.json"),
    ("cursor: truncated", lambda s: (s / "distribute.json").write_bytes((s / "distribute.json").read_bytes()[:90]),
     False, "distribute.json"),
    ("cursor: empty", lambda s: (s / "distribute.json").write_bytes(b""), False, "distribute.json"),
    ("cursor: a count changed, still valid JSON", lambda s: _rewrite_json(s, _bump_a_count), False,
     "distribute.json"),
    ("cursor: a route changed, still valid JSON", lambda s: _rewrite_json(s, _route_pending_to_medulla), False,
     "distribute.json"),
    ("location log: truncated", lambda s: (s / "spool-locations.bin").write_bytes(
        (s / "spool-locations.bin").read_bytes()[:-5]), False, "spool-locations.bin"),
    ("location log: deleted", lambda s: (s / "spool-locations.bin").unlink(), False, "spool-locations.bin"),
    ("location log: scrambled, then a box to refill", _scramble_locations, True, "spool-locations.bin"),
    ("box index: garbage bytes", _for_each_index(lambda b: GARBAGE), False, "boxes"),
    ("box index: truncated", _for_each_index(lambda b: b[: len(b) // 2]), False, "boxes"),
    ("box index: a bit flipped in the ids", _for_each_index(lambda b: b[:-3] + bytes([b[-3] ^ 1]) + b[-2:]), False,
     "boxes"),
    ("state directory deleted", lambda s: shutil.rmtree(s), False, None),
    ("locks deleted", lambda s: shutil.rmtree(s / "locks"), False, None),
    ("state deleted, and a box too", lambda s: shutil.rmtree(s), True, None),
]


@pytest.mark.parametrize("name, corrupt, delete_box, named", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_state_deleted_or_corrupted_the_next_run_prints_what_a_first_run_prints_and_says_so(
    world, name, corrupt, delete_box, named
):
    with_held(world, 300, start=0, at=150)
    assert world.run("distribute").code == 0
    with_held(world, 60, start=300, at=30)  # new letters for every box, so every index is read
    corrupt(world.home / "state")
    if delete_box:
        world.boxes["repo-a"].unlink()
    expected = world.expected(held_ids(world))
    reference = world.reference()

    done = world.run("distribute", "--json")
    no_traceback(done)
    assert done.code == 0, done.err
    assert without_appended(done.json) == without_appended(reference["distribution"])
    if named is None:
        assert done.err == ""
    else:
        # Reported, in one warning naming the file; never taken silently as empty.
        warnings = done.err_lines
        assert warnings and all(w.startswith("m1nd: warning: ") for w in warnings), done.err
        assert any(named in w for w in warnings), done.err
    assert_each_letter_once(world.boxes, expected)

    sweep = world.run("--inbox-sweep")
    assert sweep.code == 0 and sweep.err == "", sweep.err  # the state was rebuilt: nothing more to say
    assert without_appended(sweep.json) == without_appended(reference)
    assert sweep.json["distribution"]["appended"] == 0


# --- the spool truncated, replaced, rotated or rewritten between runs -------------------


def _lines(world: World) -> list[bytes]:
    return world.spool.read_bytes().split(b"\n")[:-1]


def _write_in_place(path: Path, data: bytes) -> None:
    """Rewrite a file's bytes keeping its inode (an editor, `cat new > spool`)."""
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate()


def _truncate_lines(keep: int):
    def change(world: World) -> None:
        _write_in_place(world.spool, b"".join(l + b"\n" for l in _lines(world)[:keep]))
    return change


def _truncate_mid_line(world: World) -> None:
    data = world.spool.read_bytes()
    at = sum(len(l) + 1 for l in _lines(world)[:250])
    os.truncate(world.spool, at + 30)
    assert len(data) > at + 30


def _truncate_then_append(world: World) -> None:
    _truncate_lines(250)(world)
    append_spool(world.spool, [letter(DESTS[n % 6], n, pad=90) for n in range(1000, 1300)])


def _replace_new(world: World) -> None:
    new = world.spool.with_name("incoming")
    new.write_bytes(b"".join(letter(DESTS[n % 6], n) + b"\n" for n in range(2000, 2120)))
    os.replace(new, world.spool)


def _replace_one_changed(world: World) -> None:
    lines = _lines(world)
    old = lines[120]
    lines[120] = old.replace(b"fault test letter", b"fault test LETTER")
    assert len(lines[120]) == len(old) and lines[120] != old
    new = world.spool.with_name("incoming")
    new.write_bytes(b"".join(l + b"\n" for l in lines))
    os.replace(new, world.spool)


def _unlink_and_write_anew_one_changed(world: World) -> None:
    """Deleted, then written again with one letter changed: the new file may well get
    the old inode number back, so identity alone cannot tell the two apart."""
    lines = _lines(world)
    lines[150] = lines[150].replace(b"fault test letter", b"fault test LETTER")
    world.spool.unlink()
    world.spool.write_bytes(b"".join(l + b"\n" for l in lines))


def _rotate(world: World) -> None:
    os.rename(world.spool, world.spool.with_name("field-reports.jsonl.1"))
    append_spool(world.spool, [letter(DESTS[n % 6], n) for n in range(3000, 3030)])


def _rotate_and_back(world: World) -> None:
    _rotate(world)
    assert world.run("distribute").code == 0
    os.replace(world.spool.with_name("field-reports.jsonl.1"), world.spool)


def _redact_in_place(world: World, append: bool = False) -> None:
    """The held letter's secret blotted out in place: same inode, same size, a change
    far from both ends of the spool."""
    data = world.spool.read_bytes()
    at = data.index(SECRET)
    assert 8192 < at < len(data) - 8192
    with open(world.spool, "r+b") as fh:
        fh.seek(at)
        fh.write(b"*" * len(SECRET))
    if append:
        append_spool(world.spool, [letter(DESTS[n % 6], n) for n in range(4000, 4020)])


def _same_bytes_again(world: World) -> None:
    _write_in_place(world.spool, world.spool.read_bytes())


SPOOL_CHANGES = [
    ("truncated at a line boundary", _truncate_lines(250)),
    ("truncated mid-line", _truncate_mid_line),
    ("truncated, then appended past the old end", _truncate_then_append),
    ("emptied", _truncate_lines(0)),
    ("deleted", lambda w: w.spool.unlink()),
    ("replaced by a new file", _replace_new),
    ("replaced by a copy with one letter changed", _replace_one_changed),
    ("deleted and written anew with one letter changed", _unlink_and_write_anew_one_changed),
    ("rotated", _rotate),
    ("rotated, distributed, rotated back", _rotate_and_back),
    ("a held letter redacted in place", _redact_in_place),
    ("a held letter redacted in place, then letters appended", lambda w: _redact_in_place(w, append=True)),
    ("the same bytes written again in place", _same_bytes_again),
]


@pytest.mark.parametrize("name, change", SPOOL_CHANGES, ids=[c[0] for c in SPOOL_CHANGES])
def test_a_spool_changed_between_runs_gives_a_first_runs_result_and_boxes_only_grow(world, name, change):
    with_held(world, 400, start=0, at=200)
    first = world.run("distribute", "--json")
    assert first.code == 0 and first.json["appended"] > 0, first.err
    change(world)
    before = box_bytes(world.boxes)
    reference = world.reference()

    done = world.run("--inbox-sweep")
    no_traceback(done)
    assert done.code == 0 and done.err == "", done.err
    assert without_appended(done.json) == without_appended(reference)
    assert_boxes_only_grew(before, world.boxes)
    expected = world.expected(held_ids(world))
    for label, path in world.boxes.items():
        scan = scan_box(path)
        assert len(scan.ids) == len(set(scan.ids)), f"{label}: a letter twice"
        old = set(scan_box_bytes(before[label]))
        assert expected[label] <= set(scan.ids), f"{label}: a letter of the spool not filed"
        assert set(scan.ids) <= old | expected[label], f"{label}: a letter filed that the spool does not hold"
        assert scan.fragments == []

    again = world.run("distribute", "--json")
    assert again.code == 0 and again.err == ""
    assert again.json == {**done.json["distribution"], "appended": 0}


def scan_box_bytes(data: bytes) -> list[str]:
    return [sha12(l.raw) for l in split_lines(data) if l.obj is not None]


# --- a box rewritten or extended by git between runs -----------------------------------


def git(*args, cwd) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout.strip()


def test_a_box_rewritten_or_extended_by_git_between_runs_keeps_dedup_and_the_document_right(
    tmp_path, m1nd_home, make_repo
):
    a, b = make_repo("repo-a"), make_repo("repo-b")
    m1nd_home.mkdir(mode=0o700)
    world = World(tmp_path, m1nd_home, tmp_path / "src", ("repo-a", "repo-b"), tmp_path / "work")
    box = world.boxes["repo-a"]
    dests = ("repo-a", "repo-b", "all", "medulla", "repo-elsewhere")
    from_peer = [letter("repo-a", 800 + n, what=f"filed on another machine {n}") for n in range(3)]
    both = letter("repo-a", 900, what="reached this spool and the other machine's box")
    n = 0

    def more(count: int, extra: list[bytes] = ()) -> None:
        nonlocal n
        append_spool(world.spool, [letter(dests[i % 5], i) for i in range(n, n + count)] + list(extra))
        n += count

    def step(what: str) -> None:
        """A run after `what`: the first run's document, no letter twice, every
        spool letter of each box in it, nothing in a box but its own letters."""
        reference = world.reference()
        done = world.run("--inbox-sweep")
        no_traceback(done)
        assert done.code == 0 and done.err == "", (what, done.err)
        assert without_appended(done.json) == without_appended(reference), what
        expected = world.expected()
        allowed = {**expected, "repo-a": expected["repo-a"] | {sha12(r) for r in from_peer + [both]}}
        for label, path in world.boxes.items():
            scan = scan_box(path)
            assert len(scan.ids) == len(set(scan.ids)), f"{what}: {label} holds a letter twice"
            assert set(scan.ids) <= allowed[label], f"{what}: {label} holds a letter not its own"
            assert scan.fragments == [], what
        for label in ("repo-b", "medulla"):
            assert expected[label] <= set(scan_box(world.boxes[label]).ids), (what, label)

    # v1: filed and committed (a box of more than 8 KiB).
    more(300)
    step("a first distribution")
    git("add", "-f", ".m1nd/inbox.jsonl", ".m1nd/.gitignore", cwd=a)
    git("commit", "-q", "-m", "box v1", cwd=a)
    v1 = git("rev-parse", "HEAD", cwd=a)

    # Another machine extends the box; a pull brings its letters here, one of them
    # also in this spool (not yet distributed): it must not be appended again.
    peer = tmp_path / "peer"
    git("clone", "-q", str(a), str(peer), cwd=tmp_path)
    with open(peer / ".m1nd" / "inbox.jsonl", "ab") as fh:
        fh.write(b"".join(r + b"\n" for r in from_peer + [both]))
    git("commit", "-q", "-am", "letters from another machine", cwd=peer)
    more(20, [both])
    git("pull", "-q", "--ff-only", str(peer), "main", cwd=a)
    assert box.read_bytes().count(both) == 1
    step("a git pull that extends the box")
    assert box.read_bytes().count(both + b"\n") == 1
    assert expected_boxes(world.spool.read_bytes(), world.router)["repo-a"] <= set(scan_box(box).ids)
    git("commit", "-q", "-am", "box v2", cwd=a)

    # An older version checked out over it, then new letters.
    git("checkout", v1, "--", ".m1nd/inbox.jsonl", cwd=a)
    more(10)
    step("an older box checked out")
    new_for_a = {sha12(l.raw) for l in spool_letters(world.spool.read_bytes())[-10:]
                 if world.router.route(l.obj) == "repo-a"}
    assert new_for_a and new_for_a <= set(scan_box(box).ids)

    # Back to the committed version (the letters appended meanwhile are gone from the file).
    git("checkout", "HEAD", "--", ".m1nd/inbox.jsonl", cwd=a)
    step("the committed box checked out again")

    # A commit that rewrites the box: lines reordered, one of this spool's letters dropped.
    lines = box.read_bytes().split(b"\n")[:-1]
    dropped = next(l for l in lines if l not in from_peer and l != both)
    rewritten = [l for l in reversed(lines) if l != dropped]
    box.write_bytes(b"".join(l + b"\n" for l in rewritten))
    git("commit", "-q", "-am", "box rewritten", cwd=a)
    more(5)
    step("a commit that rewrote the box")
    assert box.read_bytes().startswith(b"".join(l + b"\n" for l in rewritten)), "a box only grows"

    # A rewrite in place (same inode, same size: an editor), far from the end: an old
    # line becomes a letter of the same length that this spool holds too.
    data = box.read_bytes()
    old = data.split(b"\n")[1]
    arrived = letter("repo-a", 950, what="x")
    arrived = letter("repo-a", 950, what="x" * (1 + len(old) - len(arrived)))
    assert len(arrived) == len(old) and len(data) > 8192
    with open(box, "r+b") as fh:
        fh.seek(data.index(old))
        fh.write(arrived)
    more(0, [arrived])
    step("a line rewritten in place")
    assert box.read_bytes().count(arrived) == 1

    # A branch switch to v1 (the whole tree).
    git("commit", "-q", "-am", "box v3", cwd=a)
    git("checkout", "-q", "-B", "old", v1, cwd=a)
    more(5)
    step("a branch switch to an older box")


# --- a read-only home or box -----------------------------------------------------------
#
# Permission bits do not bind root, so when the tests run as root, m1nd runs as an
# unprivileged user (setpriv), in a tree that user can reach, and "read-only" means
# owned by root with no write bits.  Run as anyone else, m1nd runs as the same user
# and the write bits alone make things read-only.


def _setpriv_works() -> bool:
    if shutil.which("setpriv") is None:
        return False
    done = subprocess.run(command(["--version"], user=NOBODY), capture_output=True, cwd="/")
    return done.returncode == 0


@pytest.fixture
def ro_world():
    user = None
    if os.geteuid() == 0:
        if not _setpriv_works():
            pytest.skip("running as root, and setpriv cannot run m1nd as an unprivileged user")
        user = NOBODY
    base = Path(tempfile.mkdtemp(prefix="m1nd-faults-"))
    try:
        base.chmod(0o755)
        home, roots_dir, work, user_home = base / "home", base / "src", base / "work", base / "user-home"
        for d in (home, work, user_home, *(roots_dir / label for label in LABELS)):
            d.mkdir(parents=True)
        home.chmod(0o700)
        env = {**os.environ, "HOME": str(user_home), "M1ND_HOME": str(home)}
        world = World(base, home, roots_dir, LABELS, work, env=env, user=user)
        yield world
    finally:
        for dirpath, dirnames, _ in os.walk(base):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
        shutil.rmtree(base, ignore_errors=True)


def give_to_user(world: World) -> None:
    """Everything in the world belongs to the user m1nd runs as."""
    if world.user is None:
        return
    for dirpath, dirnames, filenames in os.walk(world.base):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.lchown(name, world.user, world.user)


def make_read_only(world: World, path: Path) -> None:
    if world.user is not None:
        os.lchown(path, 0, 0)
    path.chmod(0o555 if path.is_dir() else 0o444)


def make_writable(world: World, path: Path) -> None:
    if world.user is not None:
        os.lchown(path, world.user, world.user)
    path.chmod(0o700 if path == world.home else 0o755 if path.is_dir() else 0o644)


def test_a_read_only_home_fails_in_one_line_with_exit_1_loses_nothing_and_a_writable_home_completes(ro_world):
    world = ro_world
    fill(world, 300)
    give_to_user(world)
    spool_hash = file_hash(world.spool)
    make_read_only(world, world.home)

    done = world.run("distribute")
    one_error_line(done, str(world.home), "Permission denied")
    sweep = world.run("--inbox-sweep")
    no_traceback(sweep)
    assert sweep.code == 1 and sweep.err == ""
    assert sweep.json["error"]["code"] == 1 and str(world.home) in sweep.json["error"]["message"]
    read_only = world.run("--inbox-sweep", "--no-distribute")
    assert read_only.code == 0, read_only.err
    assert read_only.json["total"] == len(spool_letters(world.spool.read_bytes()))
    doctor = world.run("doctor", "--json")
    no_traceback(doctor)
    assert doctor.json["mailbox"]["spool_letters"] == 300
    assert file_hash(world.spool) == spool_hash
    assert not any((world.roots_dir / label / ".m1nd").exists() for label in LABELS)
    assert sorted(os.listdir(world.home)) == ["field-reports.jsonl"]

    make_writable(world, world.home)
    reference = world.reference()
    done = world.run("--inbox-sweep")
    assert done.code == 0 and done.err == "", done.err
    assert without_appended(done.json) == without_appended(reference)
    assert_each_letter_once(world.boxes, world.expected())


def test_a_read_only_home_with_writable_state_files_the_project_boxes_and_names_the_medulla_box(ro_world):
    world = ro_world
    fill(world, 300)
    (world.home / "state").mkdir()
    give_to_user(world)
    spool_hash = file_hash(world.spool)
    make_read_only(world, world.home)

    done = world.run("distribute")
    one_error_line(done, "box medulla", str(world.boxes["medulla"]), "Permission denied")
    expected = world.expected()
    assert_each_letter_once({l: p for l, p in world.boxes.items() if l != "medulla"},
                            {l: ids for l, ids in expected.items() if l != "medulla"})
    assert not world.boxes["medulla"].exists()
    assert file_hash(world.spool) == spool_hash

    make_writable(world, world.home)
    again = world.run("distribute", "--json")
    assert again.code == 0 and again.err == "", again.err
    assert again.json["appended"] == len(expected["medulla"])
    assert_each_letter_once(world.boxes, expected)


# (name, what is made read-only: "box" the box file and its directory, "dir" only an
# empty box directory (no box yet), the box's label)
READ_ONLY_BOXES = [
    ("a project box and its directory", "box", "repo-a"),
    ("the medulla box", "box", "medulla"),
    ("a box directory with no box in it yet", "dir", "repo-c"),
    ("an unreadable project box", "unreadable", "repo-b"),
]


@pytest.mark.parametrize("name, what, label", READ_ONLY_BOXES, ids=[c[0] for c in READ_ONLY_BOXES])
def test_a_read_only_box_is_named_in_one_line_exit_1_the_rest_is_filed_and_a_writable_box_completes(
    ro_world, name, what, label
):
    world = ro_world
    fill(world, 300)
    box = world.boxes[label]
    if what == "dir":
        box.parent.mkdir()
    give_to_user(world)
    if what != "dir":
        assert world.run("distribute").code == 0
    fill(world, 120, start=300)
    spool_hash = file_hash(world.spool)
    before = box.read_bytes() if box.exists() else None
    locked = [box.parent] if what == "dir" or (what == "box" and label != "medulla") else []
    if box.exists():
        locked.append(box)
    for path in locked:
        make_read_only(world, path)
    if what == "unreadable":
        box.chmod(0o000)
    expected = world.expected()
    reference = world.reference()

    done = world.run("distribute")
    one_error_line(done, f"box {label} not filed", str(box), "Permission denied")
    sweep = world.run("--inbox-sweep")
    one_error_line(sweep, f"box {label} not filed")
    assert without_appended(sweep.json) == without_appended(reference)
    assert (box.read_bytes() if box.exists() else None) == before
    others = {l: p for l, p in world.boxes.items() if l != label}
    assert_each_letter_once(others, {l: expected[l] for l in others})
    assert file_hash(world.spool) == spool_hash

    for path in reversed(locked):
        make_writable(world, path)
    again = world.run("distribute", "--json")
    assert again.code == 0 and again.err == "", again.err
    assert again.json["appended"] == len(expected[label]) - len(scan_box_bytes(before or b""))
    assert_each_letter_once(world.boxes, expected)


def test_an_unreadable_spool_is_one_error_line_exit_1_and_doctor_says_why(ro_world):
    world = ro_world
    fill(world, 30)
    give_to_user(world)
    make_read_only(world, world.spool)
    world.spool.chmod(0o000)
    done = world.run("distribute")
    one_error_line(done, "cannot read spool", str(world.spool), "Permission denied")
    sweep = world.run("--inbox-sweep")
    no_traceback(sweep)
    assert sweep.code == 1 and str(world.spool) in sweep.json["error"]["message"]
    doctor = world.run("doctor", "--json")
    no_traceback(doctor)
    assert doctor.code == 1 and doctor.json["mailbox"] is None
    spool_check = next(c for c in doctor.json["checks"] if c["name"] == "spool")
    assert spool_check["status"] == "error" and "Permission denied" in spool_check["message"]
    assert not any(p.exists() for p in world.boxes.values())


def test_a_read_only_state_directory_fails_in_one_line_after_filing_and_the_next_run_agrees(ro_world):
    world = ro_world
    fill(world, 300)
    (world.home / "state" / "locks").mkdir(parents=True)
    give_to_user(world)
    spool_hash = file_hash(world.spool)
    make_read_only(world, world.home / "state")  # its locks directory stays writable
    expected = world.expected()
    reference = world.reference()

    done = world.run("distribute")
    one_error_line(done, str(world.home / "state"), "Permission denied")
    assert_each_letter_once(world.boxes, expected)  # filed before the state could not be kept
    assert file_hash(world.spool) == spool_hash

    make_writable(world, world.home / "state")
    again = world.run("distribute", "--json")
    assert again.code == 0 and again.err == "", again.err
    assert again.json == {**reference["distribution"], "appended": 0}
    assert_each_letter_once(world.boxes, expected)


def test_m1nd_write_into_a_read_only_home_gives_one_error_line_and_writes_nothing(ro_world):
    world = ro_world
    fill(world, 5)
    give_to_user(world)
    spool_hash = file_hash(world.spool)
    make_read_only(world, world.home)
    make_read_only(world, world.spool)
    done = m1nd("write", "--repo", "repo-a", "--what", "into a read-only home", cwd=world.work, env=world.env,
                user=world.user)
    assert file_hash(world.spool) == spool_hash
    one_error_line(done, "Permission denied")


# --- many writers and distributors at once ----------------------------------------------

LONG_LIVED_LETTERS = 250
LONG_LIVED_WRITER = """
import sys
from m1nd.cli.main import main
w, count = int(sys.argv[1]), int(sys.argv[2])
dests = ("repo-a", "repo-b", "repo-c", "all", "medulla", "repo-elsewhere")
for i in range(count):
    dest = dests[(i + w) % len(dests)]
    where = ["--repo", "all", "--brain", "medulla"] if dest == "medulla" else ["--repo", dest]
    try:
        main(["write", *where, "--what", f"long-lived writer {w} letter {i}", "--snippet", "s" * (i * 37 % 5000)])
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise
    sys.stdout.flush()
"""


@pytest.mark.slow
def test_many_writers_and_distributors_at_once_some_killed_file_every_letter_exactly_once(world, tmp_path):
    # repo-a and repo-b are on the roster; repo-c only for the distributors given
    # --root, so its letters flip between pending and filed from run to run.
    for label in ("repo-a", "repo-b"):
        assert m1nd("roster", "add", world.roots_dir / label).code == 0
    with_c = ["--root", str(world.roots_dir / "repo-c")]
    rng = random.Random(0x5EED)
    written: dict[str, str] = {}  # id → destination
    held: set[str] = set()
    failures: list[str] = []
    lock = threading.Lock()
    writers_done = threading.Event()

    def record(ids: list[str], dest_of) -> None:
        with lock:
            for i, lid in enumerate(ids):
                written[lid] = dest_of(i)

    def cli_writer(w: int) -> None:  # a process per letter
        for i in range(10):
            dest = DESTS[(w + i) % len(DESTS)]
            where = ["--repo", "all", "--brain", "medulla"] if dest == "medulla" else ["--repo", dest]
            done = m1nd("write", *where, "--what", f"cli writer {w} letter {i}",
                        "--snippet", "x" * (6000 if i % 3 == 0 else 10), cwd=world.work)
            if done.code != 0:
                failures.append(f"write: {done.code} {done.err}")
            else:
                record([done.out.decode().strip()], lambda _: dest)

    def long_lived_writer(w: int) -> None:  # one process, many writes through the CLI entry point
        count = LONG_LIVED_LETTERS
        done = subprocess.run([PY, "-c", LONG_LIVED_WRITER, str(w), str(count)], cwd=world.work,
                              capture_output=True, timeout=240)
        if done.returncode != 0:
            failures.append(f"long-lived writer {w}: {done.stderr.decode()[-2000:]}")
            return
        ids = done.stdout.decode().split()
        assert len(ids) == count
        record(ids, lambda i: DESTS[(i + w) % len(DESTS)])

    def hand_writer() -> None:
        # Appends by hand, each line in one O_APPEND write (a line split over two
        # writes may be interleaved by any other writer: no tool can help that), some
        # long, some carrying a likely secret (held from project boxes).
        for i in range(120):
            dest = DESTS[i % len(DESTS)]
            secret = i % 40 == 7
            extra = {"snippet": "password=hunter22"} if secret else {}
            if i % 9 == 0:
                extra["expected"] = "e" * 70000
            raw = letter(dest, 10000 + i, **extra)
            fd = os.open(world.spool, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                assert os.write(fd, raw + b"\n") == len(raw) + 1
            finally:
                os.close(fd)
            record([sha12(raw)], lambda _: dest)
            # held from project boxes: a likely secret, or over 64 KiB (oversized)
            if (secret or len(raw) > 64 * 1024) and dest not in ("all", "medulla"):
                held.add(sha12(raw))
            time.sleep(0.005)

    kills = [0]
    rounds = [0, 0, 0]

    def distributor(d: int) -> None:
        args = [["distribute"], ["--inbox-sweep", *with_c], ["distribute", "--json", *with_c]][d]
        cwd = world.roots_dir / "repo-a" if d == 0 else world.work
        while True:
            last = writers_done.is_set()
            proc = popen(*args, cwd=cwd)
            if d == 2 and not last and rounds[d] % 2 == 0:
                time.sleep(rng.uniform(0.0, 0.5))
                proc.kill()
            _, err = proc.communicate(timeout=240)
            if proc.returncode == -signal.SIGKILL:
                kills[0] += 1
            elif proc.returncode != 0 or b"Traceback" in err:
                failures.append(f"distributor {d}: {proc.returncode} {err.decode()}")
            rounds[d] += 1
            if last:
                return

    world.spool.parent.mkdir(parents=True, exist_ok=True)
    writers = [threading.Thread(target=cli_writer, args=(w,)) for w in range(3)]
    writers += [threading.Thread(target=long_lived_writer, args=(w,)) for w in range(3)]
    writers.append(threading.Thread(target=hand_writer))
    distributors = [threading.Thread(target=distributor, args=(d,)) for d in range(3)]
    for t in writers + distributors:
        t.start()
    for t in writers:
        t.join()
    writers_done.set()
    for t in distributors:
        t.join()
    assert not failures, failures
    assert min(rounds) >= 2, rounds
    total = 3 * 10 + 3 * LONG_LIVED_LETTERS + 120
    assert len(written) == total

    # The spool: one whole line per letter, none merged, torn, lost or doubled.
    letters = spool_letters(world.spool.read_bytes())
    assert sorted(sha12(l.raw) for l in letters) == sorted(written)
    assert world.spool.read_bytes().count(b"\n") == total

    final = m1nd("distribute", "--json", *with_c, cwd=world.work)
    assert final.code == 0 and final.err == "", final.err
    assert final.json["spool_total"] == total
    boxes = {label: world.boxes[label] for label in (*LABELS, "medulla")}
    expected = {label: set() for label in boxes}
    for lid, dest in written.items():
        box = {"all": "medulla", "repo-elsewhere": None}.get(dest, dest)
        if box is not None and lid not in held:
            expected[box].add(lid)
    assert held and not (held & set().union(*expected.values()))
    scans = assert_each_letter_once(boxes, expected)
    fragments = sum(len(s.fragments) for s in scans.values())
    assert fragments <= kills[0]
    assert all(line.terminated for s in scans.values() for line in s.fragments)
    if fragments:
        assert_doctor_names_fragments(scans, *with_c, cwd=world.work)

    reference, _ = first_run_over_copies(with_c, [world.home, world.roots_dir], world.home, cwd=world.work)
    sweep = m1nd("--inbox-sweep", *with_c, cwd=world.work)
    assert sweep.code == 0 and sweep.err == "", sweep.err
    assert without_appended(sweep.json) == without_appended(reference)
    assert without_appended(final.json) == without_appended(reference["distribution"])
    print(f"rounds {rounds}, kills {kills[0]}, fragments {fragments}")
