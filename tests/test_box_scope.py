"""Reads in proportion to what they show: a box's reply graph is read from its own
copies when it has fewer lines than the mailbox has replies (and from the replies
otherwise, with the same answer), `m1nd box` brings current the spool and that box
only, and a first build tells the coverage ledger its letters a block at a time."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3

from conftest import write_spool

from m1nd.boxes import read_box
from m1nd.fates import reply_graph
from m1nd.readmodel import open_model
from m1nd.run import open_run


def _id(letter: dict) -> str:
    import orjson

    return hashlib.sha256(orjson.dumps(letter)).hexdigest()[:12]


def _letter(repo: str, what: str, **more) -> dict:
    return {"ts": "2026-11-01T10:00:00Z", "agent": "agent-a", "class": "bug", "repo": repo, "tool": "seek",
            "what": what, **more}


def _mailbox(spool_path, make_repo, cli):
    """repo-a: two letters and a crowd of replies (some to repo-b's letters, a
    receipt, a pickup, a reply filed twice); repo-b: many letters, few replies."""
    a = [_letter("repo-a", f"first {i}") for i in range(2)]
    b = [_letter("repo-b", f"plain {i}") for i in range(40)]
    replies = [_letter("repo-a", "taken", **{"class": "pickup", "answers": [_id(a[0])]}),
               _letter("repo-a", "fixed", **{"class": "triage", "answers": [_id(a[1]), _id(b[0])]}),
               _letter("repo-b", "on it", **{"class": "pickup", "answers": [_id(b[1]), _id(a[0])]}),
               _letter("repo-b", "closing", **{"class": "triage", "answers": [_id(b[1])]}),
               _letter("repo-a", "a mission", kind="mission", answers=[_id(a[0])])]
    replies += [_letter("repo-a", f"seen {i}", **{"class": "pickup", "answers": [_id(b[2 + i])]}) for i in range(6)]
    write_spool(spool_path, a + b + replies + [replies[0]])
    for name in ("repo-a", "repo-b"):
        assert cli("roster", "add", str(make_repo(name))).code == 0
    assert cli("distribute").code == 0


def test_a_boxs_reply_graph_from_its_own_copies_equals_the_graph_of_its_letters(spool_path, make_repo, cli):
    _mailbox(spool_path, make_repo, cli)
    run = open_run()
    model = open_model(run)
    try:
        branches = set()
        for source in model.readable_boxes():
            replies, lines = model._reply_sizes(source)
            branches.add(lines < replies)
            letters = {hashlib.sha256(l.raw).digest(): l for _, l in read_box(source.box).letters
                       if not l.is_mission}
            want = reply_graph(letters.values(), run.markers)
            got = model._whole_graph(source)
            assert (got.closed, got.picked_up, got.answered_by) == (want.closed, want.picked_up, want.answered_by)
            lazy = model.graph(source)
            for letter in letters.values():
                assert lazy.state(letter) == want.state(letter)
                assert lazy.answers_to(letter.id) == want.answers_to(letter.id)
        assert branches == {True, False}  # a box read from its copies, and one from the replies
    finally:
        model.close()


def test_m1nd_box_brings_current_the_spool_and_its_own_box_only(spool_path, make_repo, cli, tmp_path, m1nd_home):
    _mailbox(spool_path, make_repo, cli)
    assert cli("sweep").code == 0  # every box indexed
    box_b = tmp_path / "src" / "repo-b" / ".m1nd" / "inbox.jsonl"
    write_spool(box_b, [_letter("repo-b", "arrived by git")])  # as a pull would bring it

    def indexed_lines(path) -> int:
        con = sqlite3.connect(m1nd_home / "state" / "readmodel.sqlite3")
        try:
            return con.execute("SELECT lines FROM files WHERE path = ?", (os.fsencode(str(path)),)).fetchone()[0]
        finally:
            con.close()

    before = indexed_lines(box_b)
    a = cli("box", "repo-a")
    assert a.code == 0 and "first 0" in a.stdout
    assert cli("box", "repo-a", "--json").code == 0
    assert indexed_lines(box_b) == before  # repo-b's new line: not read by a look at repo-a
    b = cli("box", "repo-b", "--json")
    assert b.code == 0 and "arrived by git" in b.stdout
    assert indexed_lines(box_b) == before + 1


def test_a_first_build_tells_the_ledger_every_letter_once_in_order_a_block_at_a_time(spool_path, m1nd_home, cli,
                                                                                     monkeypatch):
    """The read model's first build tells the coverage ledger its letters in blocks (no
    list of every digest): the ledger holds every letter once, in (id, digest) order,
    whatever the block size, and a second build adds nothing."""
    import orjson

    from m1nd.ledgerfile import ledger_path
    from m1nd.paths import resolve_paths
    from m1nd.readmodel import opening

    letters = [_letter("repo-x", f"letter {i}") for i in range(23)]
    write_spool(spool_path, letters + [letters[4], _letter("repo-x", "a mission", kind="mission")])

    def ledger_after_a_build(block: int) -> list[bytes]:
        monkeypatch.setattr(opening, "FIRST_SEEN_BLOCK", block)
        for name in ("state", "records"):
            shutil.rmtree(m1nd_home / name, ignore_errors=True)
        assert cli("--inbox-sweep", "--no-distribute").code == 0
        with open(ledger_path(resolve_paths()), "rb") as fh:
            return fh.read().splitlines()

    whole = ledger_after_a_build(1 << 16)
    ids = [orjson.loads(line)["id"] for line in whole]
    assert sorted(ids) == ids and len(set(ids)) == 23 == len(ids)  # missions left out
    assert ledger_after_a_build(5) == whole
    assert ledger_after_a_build(1) == whole
    shutil.rmtree(m1nd_home / "state")
    assert cli("--inbox-sweep", "--no-distribute").code == 0  # a rebuild: nothing is new to the ledger
    with open(ledger_path(resolve_paths()), "rb") as fh:
        assert fh.read().splitlines() == whole
