"""Requests that read the whole mailbox take turns at one read model.

A turn opens the read model once, brought current with the files as they are when
the turn begins, and answers, one after another on that model, every request that
was waiting when it began; a request that arrives during a turn waits for the next
one. What the model derives for the whole mailbox (the reply graph, the counts) is
then computed once per turn instead of once per request, and no answer is older
than its request: each comes from files read after it arrived. A request is
answered as soon as its work is done, not at the end of its turn. Nothing is kept
between turns.
"""

from __future__ import annotations

import threading


class _Ask:
    def __init__(self, work) -> None:
        self.work = work
        self.wake = threading.Event()
        self.lead = False
        self.finished = False
        self.answered = False
        self.value = None
        self.error: BaseException | None = None


class Turns:
    def __init__(self, opened) -> None:
        """`opened()`: a context manager that yields the arguments every request's
        work is called with (the run and its read model)."""
        self.opened = opened
        self.lock = threading.Lock()
        self.waiting: list[_Ask] = []
        self.busy = False

    def ask(self, work):
        """`work(*opened)`'s value (or its exception), computed in a turn that began
        after this call."""
        item = _Ask(work)
        with self.lock:
            self.waiting.append(item)
            if not self.busy:
                self.busy = item.lead = True
                item.wake.set()
        item.wake.wait()
        if not item.finished:  # woken to lead the turn that answers it
            self._turn()
        if item.error is not None:
            raise item.error
        return item.value

    def _turn(self) -> None:
        with self.lock:
            batch, self.waiting = self.waiting, []
        try:
            try:
                with self.opened() as args:
                    for item in batch:
                        try:
                            item.value = item.work(*args)
                        except Exception as exc:  # each request gets its own failure
                            item.error = exc
                        item.answered = True
                        if not item.lead:  # its answer goes now; the turn goes on without it
                            item.finished = True
                            item.wake.set()
            except Exception as exc:  # the model could not be opened: every request says why
                for item in batch:
                    if not item.answered:
                        item.error = exc
        finally:
            with self.lock:
                for item in batch:
                    item.finished = True
                if self.waiting:
                    self.waiting[0].lead = True
                    self.waiting[0].wake.set()
                else:
                    self.busy = False
            for item in batch:
                if not item.lead and not item.wake.is_set():
                    item.wake.set()
