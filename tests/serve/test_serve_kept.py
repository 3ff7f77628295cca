"""Answers kept between turns (m1nd/serve/turns.py, source.py's keys): a server that
runs while letters arrive, boxes grow, git replaces them, the roster's markers change
and the state is deleted gives, for every question, the bytes a fresh computation
from the files gives."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from m1nd import jsonout
from m1nd.boxview import view_box
from m1nd.serve import pages
from m1nd.serve.source import Mailbox
from m1nd.serve.turns import KEEP_BYTES, Turns
from tests.test_readmodel import World, apply

OPS = st.sampled_from(["spool", "spool", "foretell", "arrive", "spool-junk", "torn-tail", "finish-tail",
                       "distribute", "box-extend", "box-replace", "box-rewrite", "box-conflict", "rm-state",
                       "markers", "nothing"])


def served(world: World) -> Mailbox:
    return Mailbox(home=world.home, spool=world.spool, roots=world.roots, cwd=world.base)


def index_page(mailbox: Mailbox, filters: pages.Filters) -> str:
    return mailbox.index(filters, lambda data: pages.index(data, filters))


def every_answer(mailbox: Mailbox, world: World, ids: list[str]) -> dict:
    out = {}
    for i, root in enumerate(world.roots):
        out[f"box {i}"] = mailbox.box(root, {}).body
        out[f"box {i} open"] = mailbox.box(root, {"state": "open"}).body
    out["medulla"] = mailbox.box("medulla", {}).body
    for lid in ids:
        out[f"show {lid}"] = mailbox.show(lid).body
    out["index"] = index_page(mailbox, pages.Filters())
    out["index all"] = index_page(mailbox, pages.Filters(state="all"))
    return out


def set_markers(world: World, markers: list[str]) -> None:
    with open(os.path.join(world.home, "config.toml"), "w", encoding="utf-8") as fh:
        fh.write("[mailbox]\nforeign_markers = [" + ", ".join(f'"{m}"' for m in markers) + "]\n")


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_server_that_keeps_answers_answers_what_a_fresh_server_and_the_files_answer(tmp_path, data):
    base = tempfile.mkdtemp(dir=tmp_path)
    world = World(base)
    kept = served(world)  # one server for the whole sequence
    try:
        for _ in range(data.draw(st.integers(1, 10))):
            op = data.draw(OPS)
            if op == "markers":  # a foreign tool's marker: fates of the same letters change
                set_markers(world, data.draw(st.sampled_from([["playwright"], ["seek"], ["north"]])))
            elif op != "nothing":
                apply(world, op, data)
            ids = world.ids[-6:]
            got = every_answer(kept, world, ids)
            want = every_answer(served(world), world, ids)  # a new server: nothing kept
            assert got == want
            run = world.run()
            for i, root in enumerate(world.roots):  # the files alone
                if os.path.exists(world.box(i)):
                    assert got[f"box {i}"] == jsonout.dumps(view_box(run, root).as_json())
    finally:
        shutil.rmtree(base, ignore_errors=True)


def settle(path: str) -> None:
    """A file last changed a while ago: the read model trusts its stat (chunks.settled)
    instead of reading it again at every open, as it does for a file changed just now."""
    past = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(past, past))


def test_a_box_document_is_kept_while_only_the_spool_grows_and_made_again_when_its_box_grows(tmp_path):
    world = World(str(tmp_path))
    letter = b'{"ts": "2026-05-01T09:00:00Z", "agent": "agent-a", "class": "bug", "repo": "repo-a", "what": "%d"}\n'
    world.append(world.box(0), letter % 1)
    settle(world.box(0))
    mailbox = served(world)
    first = mailbox.box(world.roots[0], {})
    world.append(world.spool, letter % 2)  # waits in the spool: the box is as it was
    again = mailbox.box(world.roots[0], {})
    assert again is first  # the kept answer, not computed again
    assert b'"what": "2"' in mailbox.show(hashlib.sha256((letter % 2).rstrip()).hexdigest()[:12]).body
    world.append(world.box(0), letter % 3)  # the box grew: its document is made again
    grown = mailbox.box(world.roots[0], {})
    assert grown is not first and b'"what": "3"' in grown.body and b'"what": "3"' not in first.body
    assert mailbox.box(world.roots[0], {"state": "all"}) is not grown  # other parameters, another answer


def test_the_page_asked_by_many_at_once_is_made_once_per_change(tmp_path):
    world = World(str(tmp_path))
    world.append(world.spool, b'{"ts": "2026-05-01T09:00:00Z", "agent": "agent-a", "repo": "repo-b", "what": "w"}\n')
    settle(world.spool)
    mailbox = served(world)
    made = []

    def render(data):
        made.append(data)
        return pages.index(data, pages.Filters())

    pages_seen = []
    threads = [threading.Thread(target=lambda: pages_seen.append(mailbox.index(pages.Filters(), render)))
               for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(pages_seen) == 16 and len(set(pages_seen)) == 1
    assert len(made) == 1
    world.append(world.spool, b'{"ts": "2026-05-01T10:00:00Z", "agent": "agent-b", "repo": "repo-b", "what": "v"}\n')
    changed = mailbox.index(pages.Filters(), render)
    assert len(made) == 2 and changed != pages_seen[0] and "agent-b" in changed


class Plain:
    """A turn's stand-in: no model, the number of the turn."""

    def __init__(self) -> None:
        self.number = 0

    def __call__(self):
        from contextlib import contextmanager

        @contextmanager
        def opened():
            self.number += 1
            yield (self.number,)
        return opened()


def test_a_failure_is_never_kept_and_a_key_that_fails_means_computing(tmp_path):
    turns = Turns(Plain())
    calls = []

    def failing(number):
        calls.append(number)
        raise ValueError(f"no {number}")

    for _ in range(2):
        try:
            turns.ask(failing, lambda number: "same")
        except ValueError:
            pass
    assert calls == [1, 2]

    def broken_key(number):
        raise KeyError("cannot say")

    assert turns.ask(lambda number: number * 10, broken_key) == 30
    assert turns.ask(lambda number: number * 10, broken_key) == 40


def test_kept_answers_stay_under_their_bound_and_the_least_recently_asked_go_first():
    turns = Turns(Plain())
    big = b"x" * (KEEP_BYTES // 4 - 16)  # four fit, not five
    for k in range(5):
        turns.ask(lambda number, k=k: big + bytes([k]), lambda number, k=k: k)
    assert turns.kept_bytes <= KEEP_BYTES
    assert list(turns.kept) == [1, 2, 3, 4]  # the first asked went first
    turns.ask(lambda number: b"never", lambda number: 1)  # asked again: kept, and now the most recent
    turns.ask(lambda number: big, lambda number: 5)
    assert list(turns.kept) == [3, 4, 1, 5]
    assert turns.ask(lambda number: b"y" * (KEEP_BYTES // 3), lambda number: 6) and 6 not in turns.kept


def test_a_new_foreign_marker_changes_the_kept_box_document_as_it_changes_the_files_view(tmp_path):
    world = World(str(tmp_path))
    world.append(world.box(0), b'{"ts": "2026-05-01T09:00:00Z", "agent": "agent-a", "class": "bug", '
                               b'"repo": "repo-a", "tool": "seek", "what": "seek returned a deleted node"}\n')
    settle(world.box(0))
    mailbox = served(world)
    before = mailbox.box(world.roots[0], {})
    assert b'"state": "wet_ink"' in before.body
    set_markers(world, ["seek"])  # the box is as it was; what its letter's fate is has changed
    after = mailbox.box(world.roots[0], {})
    assert b'"state": "external"' in after.body
    assert after.body == jsonout.dumps(view_box(world.run(), world.roots[0]).as_json())
