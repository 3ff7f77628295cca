"""Turns (m1nd/serve/turns.py): requests that read the whole mailbox share one read
model per turn, and no answer comes from a turn that began before it was asked."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import pytest

from m1nd.serve.turns import Turns


class Opened:
    """A turn's stand-in for the run and read model: the number of the turn."""

    def __init__(self) -> None:
        self.turns = 0
        self.open = 0
        self.lock = threading.Lock()

    @contextmanager
    def __call__(self):
        with self.lock:
            self.turns += 1
            self.open += 1
            number = self.turns
        try:
            yield (number,)
        finally:
            with self.lock:
                self.open -= 1


def test_32_threads_asking_at_once_are_answered_by_later_turns_one_at_a_time():
    opened = Opened()
    turns = Turns(opened)
    bad, answers, most_open = [], [], [0]

    def work(number):
        most_open[0] = max(most_open[0], opened.open)
        time.sleep(0.002)
        return number

    def client() -> None:
        for _ in range(20):
            begun = opened.turns  # turns begun before the question
            got = turns.ask(work)
            answers.append(got)
            if got <= begun:
                bad.append((begun, got))

    threads = [threading.Thread(target=client) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert not bad, bad[:5]
    assert len(answers) == 32 * 20
    assert most_open[0] == 1  # one turn at a time
    assert opened.turns < len(answers) / 4  # the waiting requests shared turns


def test_a_request_that_fails_in_a_turn_fails_alone():
    turns = Turns(Opened())
    results = {}

    def ask(k: int) -> None:
        def work(number):
            time.sleep(0.01)
            if k == 3:
                raise ValueError("no such letter")
            return k
        try:
            results[k] = turns.ask(work)
        except ValueError as exc:
            results[k] = str(exc)

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {k: ("no such letter" if k == 3 else k) for k in range(8)}


def test_a_model_that_cannot_be_opened_fails_every_request_of_the_turn_and_not_the_next():
    state = {"broken": True}

    @contextmanager
    def opened():
        if state["broken"]:
            raise OSError("roster unreadable")
        yield ()

    turns = Turns(opened)
    with pytest.raises(OSError, match="roster unreadable"):
        turns.ask(lambda: "answer")
    state["broken"] = False
    assert turns.ask(lambda: "answer") == "answer"


def test_a_request_is_answered_when_its_work_is_done_not_when_its_turn_ends():
    turns = Turns(Opened())
    first_in, release, fast_answered = threading.Event(), threading.Event(), threading.Event()
    results = {}

    def ask(name, work):
        results[name] = turns.ask(work)
        if name == "fast":
            fast_answered.set()

    def holding(number):  # keeps turn 1 busy until the next turn's requests wait
        first_in.set()
        release.wait(10)
        return number

    threads = [threading.Thread(target=ask, args=("first", holding))]
    threads[0].start()
    assert first_in.wait(10)
    for name, work in (("lead", lambda n: n), ("fast", lambda n: n),
                       ("slow", lambda n: fast_answered.wait(10))):  # true once "fast" has its answer
        threads.append(threading.Thread(target=ask, args=(name, work)))
        threads[-1].start()
        while len(turns.waiting) < len(threads) - 1:
            time.sleep(0.001)
    release.set()
    for t in threads:
        t.join(20)
    assert results == {"first": 1, "lead": 2, "fast": 2, "slow": True}
