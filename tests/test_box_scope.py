"""A box's reads are in proportion to the box: its reply graph is read from its own
copies when it has fewer lines than the mailbox has replies (and from the replies
otherwise, with the same answer), and `m1nd box` brings current the spool and that
box only."""

from __future__ import annotations

import hashlib
import os
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
