"""Requests that read the whole mailbox take turns at one read model.

A turn opens the read model once, brought current with the files as they are when
the turn begins, and answers, one after another on that model, every request that
was waiting when it began; a request that arrives during a turn waits for the next
one. What the model derives for the whole mailbox (the reply graph, the counts) is
then computed once per turn instead of once per request, and no answer is older
than its request: each comes from files read after it arrived. A request is
answered as soon as its work is done, not at the end of its turn.

A request may name what its answer is made of: a key computed in the turn from the
model just brought current (the generations of the files it reads, the roster, the
parameters; source.py builds them). An answer is kept under its key, and a later
request whose key is the same, in this turn or a later one, gets the kept answer
without computing it: the same files at the same generations give the same bytes.
A box's document, which reads its box alone, is then computed again only when that
box changes, however many letters arrive in the spool. Kept answers are bounded
(KEEP_BYTES, KEEP_ENTRIES), the least recently asked going first; failures are
never kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

KEEP_BYTES = 64 << 20  # answers kept between turns, at most (a box document is ~10 MB at 1,000,000 letters)
KEEP_ENTRIES = 256


class _Ask:
    def __init__(self, work, key) -> None:
        self.work = work
        self.key = key
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
        self.kept: OrderedDict = OrderedDict()  # key -> (value, size); only the turn's lead touches it
        self.kept_bytes = 0

    def ask(self, work, key=None):
        """`work(*opened)`'s value (or its exception), computed in a turn that began
        after this call; with `key`, the value kept under `key(*opened)` when one is
        (`key` returns None, or raises, when the answer should be computed)."""
        item = _Ask(work, key)
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
                    # Keys first: an answer already kept goes at once, before the turn
                    # computes anything for the others.
                    keys = [self._key(item, args) for item in batch]
                    for item, key in zip(batch, keys):
                        if key is not None and key in self.kept:
                            self.kept.move_to_end(key)
                            self._answered(item, self.kept[key][0])
                    for item, key in zip(batch, keys):
                        if item.answered:
                            continue
                        if key is not None and key in self.kept:  # asked twice in this turn
                            self._answered(item, self.kept[key][0])
                            continue
                        try:
                            value = item.work(*args)
                        except Exception as exc:  # each request gets its own failure
                            item.error = exc
                            self._answered(item, None)
                            continue
                        if key is not None:
                            self._keep(key, value)
                        self._answered(item, value)
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

    @staticmethod
    def _answered(item: _Ask, value) -> None:
        item.value = value
        item.answered = True
        if not item.lead:  # its answer goes now; the turn goes on without it
            item.finished = True
            item.wake.set()

    @staticmethod
    def _key(item: _Ask, args):
        if item.key is None:
            return None
        try:
            return item.key(*args)
        except Exception:  # the work itself says what is wrong
            return None

    def _keep(self, key, value) -> None:
        size = _size(value)
        if size > KEEP_BYTES // 4:  # one answer never pushes out most of the others
            return
        if key in self.kept:
            self.kept_bytes -= self.kept.pop(key)[1]
        self.kept[key] = (value, size)
        self.kept_bytes += size
        while self.kept_bytes > KEEP_BYTES or len(self.kept) > KEEP_ENTRIES:
            _, (_, gone) = self.kept.popitem(last=False)
            self.kept_bytes -= gone


def _size(value) -> int:
    """About how many bytes a kept answer holds: a document's body, a page's text."""
    if isinstance(value, (bytes, str)):
        return len(value)
    if isinstance(value, tuple):
        return sum(_size(v) for v in value)
    body = getattr(value, "body", None)
    return len(body) if isinstance(body, (bytes, str)) else 4096
