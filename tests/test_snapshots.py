"""Snapshot tests of the mailbox core over the fixture spools.

Each scenario builds a real workspace in the test's tmp dir (git repositories made
with `git init`, the roster written by `m1nd roster add` or roots given by `--root`,
a fixture spool copied to `$M1ND_HOME/field-reports.jsonl`, box fixtures copied into
place), runs the real CLI in-process, and snapshots:

- the v0 document of `m1nd --inbox-sweep --no-distribute` (before any filing),
- the v0 document of `m1nd --inbox-sweep` (the first, filing run),
- `m1nd doctor --json` (after filing),
- the human `m1nd sweep` (stdout and stderr apart).

Machine-specific paths (the tmp dir) are replaced by `<tmp>` before snapshotting.
Snapshots are regenerated with `pytest --snapshot-update`; review the diff of
`tests/__snapshots__/` against the contract (spec/mailbox.md) before committing it.

The snapshots only pin bytes; the key facts of every scenario are also checked
explicitly below, derived by hand from the contract and the fixture README.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import FIXTURES, git_init, run_cli

# ----------------------------------------------------------------------------- helpers


def scrub(text: str, tmp_path: Path) -> str:
    """Replace the machine-specific tmp dir (as given and as resolved) with `<tmp>`."""
    for p in sorted({str(tmp_path), os.path.realpath(tmp_path)}, key=len, reverse=True):
        text = text.replace(p, "<tmp>")
    return text


def canonical(text: str) -> str:
    """The contract's formatting rule (sections 6 and 8)."""
    return json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def tree_state(path: Path) -> list:
    """Every entry under `path` with size, mtime and mode: to prove nothing was written.

    `<home>/state/` and `<home>/records/` are left out: the contract lets a read-only run
    keep the read model and the coverage ledger there (section 6), and making them
    changes only the home directory's mtime."""
    state = []
    home = os.environ["M1ND_HOME"]
    private = (os.path.join(home, "state"), os.path.join(home, "records"))
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if any(p == d or p.startswith(d + os.sep) for d in private):
                continue
            st = os.lstat(p)
            state.append((p, st.st_size, None if p == home else st.st_mtime_ns, st.st_mode))
    return sorted(state)


def lines_of(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line]


def fixture_lines(name: str) -> list[bytes]:
    """Raw bytes of each line of a fixture (one trailing `\\r` dropped), blank lines kept."""
    out = []
    for chunk in (FIXTURES / name).read_bytes().split(b"\n"):
        out.append(chunk[:-1] if chunk.endswith(b"\r") else chunk)
    return out


@dataclass
class Workspace:
    """A test workspace: the user's HOME, the m1nd home, repositories, a cwd."""

    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    extra: list[str] = field(default_factory=list)  # options every run gets (e.g. --root)
    cwd: Path | None = None

    @property
    def user_home(self) -> Path:
        return Path(os.environ["HOME"])

    @property
    def home(self) -> Path:
        return Path(os.environ["M1ND_HOME"])

    @property
    def spool(self) -> Path:
        return self.home / "field-reports.jsonl"

    def repo(self, name: str, parent: str = "src") -> Path:
        """A real git repository at `$HOME/<parent>/<name>` (so `~/src/repo-a` names it)."""
        return git_init(self.user_home / parent / name)

    def roster_add(self, path: Path | str) -> None:
        result = run_cli("roster", "add", str(path))
        assert result.code == 0, result.stderr

    def copy_spool(self, fixture: str) -> None:
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / fixture, self.spool)

    def copy_box(self, fixture: str, root: Path | None) -> Path:
        """Copy a box fixture into a root's `.m1nd/inbox.jsonl` (or the medulla box)."""
        target = (root / ".m1nd" / "inbox.jsonl") if root is not None else self.home / "inbox.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / fixture, target)
        return target

    def run(self, *args: str):
        return run_cli(*args, *self.extra, cwd=self.cwd)

    def box_of(self, name: str, parent: str = "src") -> Path:
        return self.user_home / parent / name / ".m1nd" / "inbox.jsonl"


def git_commit_all(repo: Path, message: str) -> None:
    env = {k: v for k, v in os.environ.items()}
    subprocess.run(["git", "-C", str(repo), "add", "-A", "-f"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message], check=True, env=env)


# ----------------------------------------------------------------------------- scenarios
#
# Each builds its workspace and returns it.  Unless said otherwise: repo-a and repo-b
# under $HOME/src, both in the roster, the cwd outside any work tree.


def two_repos(ws: Workspace) -> tuple[Path, Path]:
    a, b = ws.repo("repo-a"), ws.repo("repo-b")
    ws.roster_add(a)
    ws.roster_add(b)
    return a, b


def sc_worked_example(ws: Workspace) -> None:
    two_repos(ws)
    ws.copy_spool("worked-example.jsonl")


def sc_arrived_by_git(ws: Workspace) -> None:
    """The repo-a box already holds letters that came by git: the repository consented
    (its `.m1nd/.gitignore` ignores nothing) and the box is committed."""
    a, _ = two_repos(ws)
    ws.copy_spool("worked-example.jsonl")
    ws.copy_box("box-repo-a-arrived-by-git.jsonl", a)
    (a / ".m1nd" / ".gitignore").write_text("# consented: inbox.jsonl is committed\n")
    git_commit_all(a, "letters from another machine")


def sc_conflict(ws: Workspace) -> None:
    _, b = two_repos(ws)
    ws.copy_spool("worked-example.jsonl")
    ws.copy_box("box-repo-b-conflict.jsonl", b)


def sc_worktrees_bound(ws: Workspace) -> None:
    """Run from inside repo-a (a subdirectory): repo-a is the bound root; repo-b rostered."""
    a = ws.repo("repo-a")
    ws.roster_add(ws.repo("repo-b"))
    (a / "lib").mkdir()
    ws.cwd = a / "lib"
    ws.copy_spool("worktrees.jsonl")


def sc_worktrees_unbound(ws: Workspace) -> None:
    two_repos(ws)
    ws.copy_spool("worktrees.jsonl")


def sc_case_variants(ws: Workspace) -> None:
    two_repos(ws)
    ws.copy_spool("case-variants.jsonl")


def sc_ambiguous(ws: Workspace) -> None:
    ws.roster_add(ws.repo("repo-a"))
    ws.roster_add(ws.repo("repo-b"))
    ws.roster_add(ws.repo("repo-b", parent="other"))
    ws.copy_spool("ambiguous.jsonl")


def sc_malformed(ws: Workspace) -> None:
    two_repos(ws)
    ws.copy_spool("malformed.jsonl")


def sc_missions(ws: Workspace) -> None:
    two_repos(ws)
    ws.copy_spool("missions.jsonl")


def sc_projectless(ws: Workspace) -> None:
    """The home is ~/.m1nd here (so `~/.m1nd/...` names it); roots come from --root."""
    ws.monkeypatch.setenv("M1ND_HOME", str(ws.user_home / ".m1nd"))
    a, b = ws.repo("repo-a"), ws.repo("repo-b")
    ws.extra = ["--root", str(a), "--root", str(b)]
    ws.copy_spool("projectless.jsonl")


def sc_misdelivery_window(ws: Workspace) -> None:
    ws.roster_add(ws.repo("repo-a"))
    ws.copy_spool("misdelivery-window.jsonl")


def sc_fates(ws: Workspace) -> None:
    two_repos(ws)
    ws.copy_spool("fates.jsonl")


def sc_held(ws: Workspace) -> None:
    two_repos(ws)
    ws.copy_spool("held.jsonl")


def sc_trouble(ws: Workspace) -> None:
    """repo-b's `.m1nd` is a symlink (refused) and a rostered root is gone (unreachable)."""
    _, b = two_repos(ws)
    elsewhere = ws.tmp / "elsewhere"
    elsewhere.mkdir()
    (b / ".m1nd").symlink_to(elsewhere, target_is_directory=True)
    ws.roster_add(ws.user_home / "src" / "repo-gone")
    ws.copy_spool("worked-example.jsonl")


def sc_empty(ws: Workspace) -> None:
    """Nothing anywhere: no spool, no roster, no boxes."""


SCENARIOS = {
    "worked-example": sc_worked_example,
    "arrived-by-git": sc_arrived_by_git,
    "conflict": sc_conflict,
    "worktrees-bound": sc_worktrees_bound,
    "worktrees-unbound": sc_worktrees_unbound,
    "case-variants": sc_case_variants,
    "ambiguous": sc_ambiguous,
    "malformed": sc_malformed,
    "missions": sc_missions,
    "projectless": sc_projectless,
    "misdelivery-window": sc_misdelivery_window,
    "fates": sc_fates,
    "held": sc_held,
    "trouble": sc_trouble,
    "empty": sc_empty,
}
# Scenarios whose runs exit 1 by contract (a refused box).
FAILING = {"trouble"}


@pytest.fixture
def build(tmp_path, monkeypatch):
    def make(name: str) -> Workspace:
        ws = Workspace(tmp_path, monkeypatch)
        SCENARIOS[name](ws)
        return ws

    return make


def by_id(doc: dict) -> dict[str, dict]:
    return {letter["id"]: letter for letter in doc["letters"]}


def states(doc: dict) -> dict[str, str]:
    return {letter["id"]: letter["state"] for letter in doc["letters"]}


def check_v0_shape(text: str) -> dict:
    """Bytes exactly as the contract formats them; the keys exactly the contract's."""
    assert text == canonical(text)
    doc = json.loads(text)
    assert set(doc) == {"schema", "spool_path", "distribution", "total", "open", "misdelivery",
                        "unreachable", "letters"}
    assert doc["schema"] == "m1nd-inbox-sweep-v0"
    ids = [letter["id"] for letter in doc["letters"]]
    assert ids == sorted(set(ids)), "letters ascending by id, each once"
    for letter in doc["letters"]:
        assert list(letter) == sorted(letter)
        assert set(letter) == {"id", "ts", "agent", "class", "repo", "brain", "tool", "what", "expected",
                               "snippet", "answers", "answered_by", "state"}
        assert letter["state"] in ("wet_ink", "in_flight", "fired_clay", "external")
        assert letter["answered_by"] == sorted(letter["answered_by"])
    assert doc["total"] == len(doc["letters"])
    assert doc["open"] == sum(1 for s in states(doc).values() if s in ("wet_ink", "in_flight"))
    assert doc["unreachable"] == sorted(set(doc["unreachable"]))
    if doc["distribution"] is not None:
        assert set(doc["distribution"]) == {"spool_total", "appended", "to_project", "to_medulla", "pending"}
        assert doc["distribution"]["pending"] == sorted(set(doc["distribution"]["pending"]))
    return doc


def check_doctor_shape(text: str) -> dict:
    assert text == canonical(text)
    doc = json.loads(text)
    assert set(doc) == {"schema", "mailbox", "checks"}
    assert doc["schema"] == "m1nd-doctor-v0"
    for check in doc["checks"]:
        assert set(check) == {"name", "status", "message", "fix"}
        assert check["status"] in ("ok", "warn", "error")
    if doc["mailbox"] is not None:
        assert set(doc["mailbox"]) == {"memory_misdelivery", "confusion_rate_7d", "spool_letters",
                                       "pending_distribution", "spool_path"}
    return doc


# ----------------------------------------------------------------------------- the snapshots


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_snapshots(name, build, tmp_path, snapshot):
    ws = build(name)
    expected_code = 1 if name in FAILING else 0

    # 1. read only: prints the document, writes nothing, creates no directory
    before = tree_state(tmp_path)
    dry = ws.run("--inbox-sweep", "--no-distribute")
    assert tree_state(tmp_path) == before, "--no-distribute wrote something"
    assert dry.code == expected_code, dry.stderr
    dry_doc = check_v0_shape(dry.stdout)
    assert dry_doc["distribution"] is None
    assert scrub(dry.stdout, tmp_path) == snapshot(name="v0-no-distribute")

    # 2. the first filing run
    first = ws.run("--inbox-sweep")
    assert first.code == expected_code, first.stderr
    doc = check_v0_shape(first.stdout)
    assert scrub(first.stdout, tmp_path) == snapshot(name="v0")
    assert scrub(first.stderr, tmp_path) == snapshot(name="v0-stderr")

    # Filing never changes the union: the same letters and fates before and after.
    for key in ("total", "open", "misdelivery", "unreachable", "letters", "spool_path"):
        assert doc[key] == dry_doc[key], key

    # 3. a second run: nothing new to file, the same document otherwise
    again = ws.run("--inbox-sweep")
    again_doc = json.loads(again.stdout)
    assert again_doc["distribution"]["appended"] == 0
    again_doc["distribution"]["appended"] = doc["distribution"]["appended"]
    assert again_doc == doc

    # 4. doctor
    doctor = ws.run("doctor", "--json")
    check_doctor_shape(doctor.stdout)
    assert doctor.code == (1 if any(c["status"] == "error" for c in doctor.json["checks"]) else 0)
    assert scrub(doctor.stdout, tmp_path) == snapshot(name="doctor")

    # 5. the human sweep
    human = ws.run("sweep")
    assert human.code == expected_code
    assert {"stdout": scrub(human.stdout, tmp_path), "stderr": scrub(human.stderr, tmp_path)} == snapshot(
        name="sweep-human"
    )


@pytest.mark.parametrize(
    "name, selector",
    [
        ("worked-example", "repo-a"),
        ("worked-example", "medulla"),
        ("arrived-by-git", "repo-a"),
        ("missions", "repo-a"),
        ("fates", "repo-a"),
    ],
)
def test_box_snapshots(name, selector, build, tmp_path, snapshot):
    ws = build(name)
    assert ws.run("distribute").code == 0
    as_json = ws.run("box", selector, "--json")
    assert as_json.code == 0, as_json.stderr
    assert as_json.stdout == canonical(as_json.stdout)
    assert scrub(as_json.stdout, tmp_path) == snapshot(name="box-json")
    human = ws.run("box", selector)
    assert human.code == 0
    assert {"stdout": scrub(human.stdout, tmp_path), "stderr": scrub(human.stderr, tmp_path)} == snapshot(
        name="box-human"
    )


# ----------------------------------------------------------------------------- the facts

WE = {  # worked-example.jsonl, line by line
    "seek": "89a55a8758cb",
    "index": "3a9cdb587d79",
    "docs": "232d8e3f0c2e",
    "misdelivery": "5f5a51bd048f",
    "receipt": "0b99a99db016",
}


def sweep(ws: Workspace, *args: str) -> dict:
    result = ws.run("--inbox-sweep", *args)
    assert result.code == 0, result.stderr
    return check_v0_shape(result.stdout)


def test_worked_example_facts(build):
    ws = build("worked-example")
    doc = sweep(ws)
    assert doc["spool_path"] == str(ws.spool)
    assert doc["distribution"] == {"spool_total": 5, "appended": 5, "to_project": 4, "to_medulla": 1,
                                   "pending": []}
    assert (doc["total"], doc["open"], doc["misdelivery"], doc["unreachable"]) == (5, 3, 1, [])
    assert states(doc) == {
        WE["seek"]: "fired_clay",
        WE["index"]: "in_flight",
        WE["docs"]: "external",
        WE["misdelivery"]: "wet_ink",
        WE["receipt"]: "wet_ink",  # a receipt is open until something answers it
    }
    letters = by_id(doc)
    assert letters[WE["seek"]]["answered_by"] == [WE["receipt"]]
    assert letters[WE["index"]]["answered_by"] == [WE["misdelivery"]]
    assert letters[WE["receipt"]]["answers"] == [WE["seek"]]
    assert letters[WE["index"]]["repo"] == "repo-b (main checkout)"  # the field as written
    assert "disposition" not in letters[WE["receipt"]]  # exactly the contract's keys

    # Bytes travel: each box holds the spool's lines, unchanged, in spool order.
    spool = fixture_lines("worked-example.jsonl")
    assert lines_of(ws.box_of("repo-a")) == [spool[0], spool[2], spool[4]]
    assert lines_of(ws.box_of("repo-b")) == [spool[1]]
    assert lines_of(ws.home / "inbox.jsonl") == [spool[3]]
    assert (ws.box_of("repo-a").parent / ".gitignore").read_bytes() == b"inbox.jsonl\n"
    assert not (ws.home / ".gitignore").exists()

    assert sweep(ws)["distribution"]["appended"] == 0
    assert sweep(ws, "--no-distribute")["distribution"] is None


def test_arrived_by_git_facts(build):
    ws = build("arrived-by-git")
    box = ws.box_of("repo-a")
    original = box.read_bytes()
    dry = sweep(ws, "--no-distribute")
    # Union: 5 spool letters + 3 that came only by git (the duplicate once, the mission left out).
    assert dry["total"] == 8
    s = states(dry)
    assert s["0d1e2dcd665d"] == "in_flight"  # picked up by the box's own pickup
    assert s["96cd45b968d1"] == "wet_ink" and s["f41a3f56cb77"] == "wet_ink"
    assert "517e153bbfe1" not in s  # the mission
    assert dry["open"] == 6

    doc = sweep(ws)
    # The seek letter is already in the box: not appended again.
    assert doc["distribution"] == {"spool_total": 5, "appended": 4, "to_project": 4, "to_medulla": 1,
                                   "pending": []}
    spool = fixture_lines("worked-example.jsonl")
    # A box only grows: the git letters untouched, a `\n` first (its last line had none).
    assert box.read_bytes() == original + b"\n" + spool[2] + b"\n" + spool[4] + b"\n"
    # An existing .gitignore is never rewritten by filing.
    assert (box.parent / ".gitignore").read_text() == "# consented: inbox.jsonl is committed\n"


def test_conflict_box_facts(build):
    ws = build("conflict")
    dry = sweep(ws, "--no-distribute")
    assert dry["total"] == 8 and dry["open"] == 6
    assert {"599e904e1408", "e4907411fe11", "e805d51ac9aa"} <= set(states(dry))
    doctor = ws.run("doctor", "--json").json
    boxes = next(c for c in doctor["checks"] if c["name"] == "boxes")
    assert boxes["status"] == "warn"
    assert "2, 4, 6" in boxes["message"]
    human = ws.run("sweep", "--no-distribute")
    assert human.code == 0
    assert "box repo-b has 3 malformed lines (first: 2, 4, 6)" in human.stderr


WT = {  # worktrees.jsonl
    "plain": "a59dd0eeba6d", "feature": "65f55214a3aa", "fix": "819ef3072802", "annot": "736b43230dc5",
    "tilde": "45fbd9288b7f", "tilde-sub": "821e8b949129", "tilde-wt": "d8b125cb7a21", "slash": "e0c65ba4f403",
    "padded": "ee0d1e52aad1", "brain": "278ad4f893ee", "abs": "3ba38f658b28", "near": "872b85c0e81f",
    "other-wt": "44587b4ab20f", "b": "c1132ba0d189", "pick": "47f0c8f242b9", "rcpt": "5b593ade8c59",
}


def box_ids(path: Path) -> list[str]:
    return [hashlib.sha256(line.rstrip(b"\r")).hexdigest()[:12] for line in lines_of(path) if line.strip()]


def test_worktrees_bound_root_folds_worktree_names(build):
    ws = build("worktrees-bound")
    doc = sweep(ws)
    assert doc["distribution"] == {"spool_total": 16, "appended": 14, "to_project": 14, "to_medulla": 0,
                                   "pending": ["repo-ab", "repo-b-feature"]}
    into_a = [k for k in WT if k not in ("near", "other-wt", "b")]
    assert box_ids(ws.box_of("repo-a")) == [WT[k] for k in into_a]
    assert box_ids(ws.box_of("repo-b")) == [WT["b"]]
    s = states(doc)
    assert s[WT["fix"]] == "in_flight" and s[WT["feature"]] == "fired_clay"
    assert (doc["total"], doc["open"]) == (16, 15)
    # Nothing was written outside the bound root's .m1nd.
    assert not (ws.user_home / "src" / "repo-a" / "lib" / ".m1nd").exists()


def test_worktrees_without_bound_root_wait(build):
    ws = build("worktrees-unbound")
    doc = sweep(ws)
    assert doc["distribution"]["pending"] == ["repo-a-feature", "repo-a-fix", "repo-ab", "repo-b-feature"]
    assert doc["distribution"]["to_project"] == 6
    assert box_ids(ws.box_of("repo-a")) == [WT[k] for k in ("plain", "annot", "tilde", "tilde-sub", "slash")]
    # Waiting letters are still in the sweep (the spool is part of the union).
    s = states(doc)
    assert s[WT["fix"]] == "in_flight" and s[WT["feature"]] == "fired_clay"
    assert not (ws.home / "inbox.jsonl").exists(), "a pending letter never goes to the medulla box"


def test_case_variants_facts(build):
    ws = build("case-variants")
    doc = sweep(ws)
    assert doc["distribution"] == {"spool_total": 11, "appended": 9, "to_project": 7, "to_medulla": 2,
                                   "pending": ["REPO-C", "repo-c"]}
    assert box_ids(ws.box_of("repo-a")) == ["6ccef6b81103", "34fa3d0940f0", "a7021bc27856", "7ed96ae403b9"]
    assert box_ids(ws.box_of("repo-b")) == ["adb47131b49d", "97fbeb57bb3d", "9b43bd830fae"]
    assert box_ids(ws.home / "inbox.jsonl") == ["b6a074bde5f2", "fc71e402463a"]
    s = states(doc)
    assert s["34fa3d0940f0"] == "fired_clay"  # class TRIAGE is a receipt
    assert s["9b43bd830fae"] == "external"  # tool Playwright
    assert (doc["total"], doc["open"]) == (11, 9)


def test_ambiguous_basename_waits(build):
    ws = build("ambiguous")
    doc = sweep(ws)
    assert doc["distribution"] == {"spool_total": 6, "appended": 3, "to_project": 3, "to_medulla": 0,
                                   "pending": ["Repo-B", "repo-b"]}
    assert box_ids(ws.box_of("repo-a")) == ["3c54eea5fe8c", "547b66ea446a"]
    assert box_ids(ws.box_of("repo-b", parent="other")) == ["82314251c286"]
    assert not ws.box_of("repo-b").exists(), "an ambiguous name is never guessed"
    assert states(doc)["c20b70ee75c9"] == "in_flight"
    roster = next(c for c in ws.run("doctor", "--json").json["checks"] if c["name"] == "roster")
    assert roster["status"] == "warn" and "ambiguous" in roster["message"]


def test_malformed_lines_are_skipped_never_fatal(build):
    ws = build("malformed")
    doc = sweep(ws)
    # Lines 1, 3, 5, 20, 21, 22, 23, 24 are letters (23 repeats 1); 7-19 malformed; 25 a tail.
    assert doc["distribution"] == {"spool_total": 8, "appended": 7, "to_project": 8, "to_medulla": 0,
                                   "pending": []}
    raw = fixture_lines("malformed.jsonl")
    # Bytes travel: the padding is kept, the CRLF line's `\r` is not part of it.
    assert lines_of(ws.box_of("repo-a")) == [raw[0], raw[2], raw[19], raw[23]]
    assert lines_of(ws.box_of("repo-b")) == [raw[4], raw[20], raw[21]]
    letters = by_id(doc)
    assert letters["9d6414db90fa"]["repo"] == "repo-a"  # duplicate key: the last wins
    assert "000000000000" not in letters and "a882bce070a2" in letters  # an id key is ignored
    assert letters["e29997c827c5"]["expected"] == "café — non-ASCII kept as is"
    assert letters["b3b11cd41002"]["state"] == letters["cd355ce76a52"]["state"] == "fired_clay"
    assert (doc["total"], doc["open"]) == (7, 5)

    doctor = ws.run("doctor", "--json").json
    spool_check = next(c for c in doctor["checks"] if c["name"] == "spool")
    assert spool_check["status"] == "warn"
    assert "13 malformed" in spool_check["message"] and "7, 8, 9, 10, 11" in spool_check["message"]
    assert "12," not in spool_check["message"], "only the first five line numbers"
    assert "line 25" in spool_check["message"] and "unfinished" in spool_check["message"]
    assert doctor["mailbox"]["spool_letters"] == 8

    human = ws.run("sweep")
    assert human.code == 0
    assert "13 malformed lines (first: 7, 8, 9, 10, 11)" in human.stderr


def test_missions_are_filed_but_never_shown(build):
    ws = build("missions")
    doc = sweep(ws)
    assert doc["distribution"] == {"spool_total": 8, "appended": 7, "to_project": 6, "to_medulla": 1,
                                   "pending": ["repo-c"]}
    # Filed like any other letter ...
    assert box_ids(ws.box_of("repo-a")) == ["7dab0be106f5", "2e1ecdeb5430", "8793c74fd0ff", "2739f9b56a57"]
    assert box_ids(ws.home / "inbox.jsonl") == ["ba9ff749b4ab"]
    # ... but left out of every sweep and count: a mission receipt closes nothing.
    assert states(doc) == {"2e1ecdeb5430": "wet_ink", "f1436e72bf54": "wet_ink", "f2edb45f9c86": "wet_ink",
                           "2739f9b56a57": "wet_ink"}
    assert (doc["total"], doc["open"], doc["misdelivery"]) == (4, 4, 0)
    mailbox = ws.run("doctor", "--json").json["mailbox"]
    assert mailbox["spool_letters"] == 8 and mailbox["memory_misdelivery"] == 0
    assert mailbox["pending_distribution"] == ["repo-c"]
    box = ws.run("box", "repo-a", "--json").json
    assert [l["id"] for l in box["letters"]] == ["2e1ecdeb5430", "2739f9b56a57"]
    assert sum(box["counts"][k] for k in ("wet_ink", "in_flight", "fired_clay", "external")) == 2


def test_projectless_letters_go_to_the_medulla_box(build):
    ws = build("projectless")
    assert ws.home == ws.user_home / ".m1nd"
    doc = sweep(ws)
    assert doc["distribution"] == {"spool_total": 15, "appended": 15, "to_project": 2, "to_medulla": 13,
                                   "pending": []}
    assert box_ids(ws.box_of("repo-b")) == ["3ecdb5fed8ba"]
    assert box_ids(ws.box_of("repo-a")) == ["649db49dc5ad"]
    assert len(box_ids(ws.home / "inbox.jsonl")) == 13
    assert states(doc)["3b70905cdef3"] == "fired_clay"
    assert (doc["total"], doc["open"], doc["misdelivery"]) == (15, 14, 1)


def test_fates_facts(build):
    ws = build("fates")
    doc = sweep(ws, "--no-distribute")
    letters = by_id(doc)
    expect = {
        "6699431fc080": ("wet_ink", []),
        "4a8965e74b53": ("in_flight", ["0d425eb046f5", "0d425eb046f5", "6dde0f4fe52b"]),
        "29e4981b4d60": ("fired_clay", ["22f121ec5182", "6dde0f4fe52b"]),
        "dfaf19565844": ("external", ["22f121ec5182"]),
        "985419a9ff88": ("external", ["1df1560cf886"]),
        "6dde0f4fe52b": ("wet_ink", []),
        "0d425eb046f5": ("wet_ink", []),
        "22f121ec5182": ("fired_clay", ["616915084a91"]),
        "616915084a91": ("wet_ink", []),
        "1df1560cf886": ("wet_ink", []),
    }
    assert {i: (l["state"], l["answered_by"]) for i, l in letters.items()} == expect
    assert "ffffffffffff" not in letters
    assert (doc["total"], doc["open"]) == (10, 6)


def test_misdelivery_window_facts(build):
    ws = build("misdelivery-window")
    doc = sweep(ws, "--no-distribute")
    assert doc["misdelivery"] == 8  # exact class, missions left out
    mailbox = ws.run("doctor", "--json").json["mailbox"]
    assert mailbox["memory_misdelivery"] == 8
    assert mailbox["confusion_rate_7d"] == 3


def test_held_letters_stay_in_the_spool(build):
    ws = build("held")
    doc = sweep(ws)
    # Held: lines 2, 3 (would be pending) and 5.  Counted in spool_total only.
    assert doc["distribution"] == {"spool_total": 7, "appended": 4, "to_project": 3, "to_medulla": 1,
                                   "pending": []}
    assert box_ids(ws.box_of("repo-a")) == ["cf262069e5ee", "ddd8bfbe8260", "3feec110a35f"]
    assert not ws.box_of("repo-b").exists()
    assert box_ids(ws.home / "inbox.jsonl") == ["1ee75f3433de"]  # the medulla box never holds back
    # Still in the spool, so still in the sweep; the receipt answers the held letter.
    assert states(doc)["bee2ce6898bc"] == "fired_clay"
    assert doc["total"] == 7
    doctor = ws.run("doctor", "--json")
    held = next(c for c in doctor.json["checks"] if c["name"] == "held")
    assert held["status"] != "ok"
    for line in ("line 2", "line 3", "line 5"):
        assert line in held["message"]
    assert "hunter2" not in doctor.stdout and "abc123def" not in doctor.stdout, "never the secret itself"
    assert held["fix"]


def test_trouble_refused_and_unreachable(build, tmp_path):
    ws = build("trouble")
    result = ws.run("--inbox-sweep")
    assert result.code == 1
    doc = check_v0_shape(result.stdout)  # the document is still printed, whole
    assert doc["unreachable"] == ["repo-gone"]
    assert doc["distribution"]["to_project"] == 4
    assert doc["distribution"]["appended"] == 3 + 1  # repo-a and medulla; repo-b refused
    assert "repo-b" in result.stderr and "symlink" in result.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == [], "never written through a symlink"
    assert doc["total"] == 5  # the refused box's letter is still in the spool
    doctor = ws.run("doctor", "--json")
    assert doctor.code == 1
    checks = {c["name"]: c for c in doctor.json["checks"]}
    assert checks["boxes"]["status"] == "error"
    assert checks["roster"]["status"] == "warn" and "repo-gone" in checks["roster"]["message"]


def test_empty_workspace(build, tmp_path):
    ws = build("empty")
    doc = sweep(ws)
    assert doc["distribution"] == {"spool_total": 0, "appended": 0, "to_project": 0, "to_medulla": 0,
                                   "pending": []}
    assert (doc["total"], doc["open"], doc["misdelivery"], doc["letters"]) == (0, 0, 0, [])
