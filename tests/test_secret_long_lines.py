"""A long line someone else wrote (a box line pushed by a teammate) is judged in time
linear in its length: no rule backtracks across a long run of name characters, so
quadrupling a line never costs sixteen times as much (it cost 18 s for one 50 KB
letter of `token` repeated)."""

from __future__ import annotations

import time

import pytest

from m1nd import secrets

UNITS = ["token", "ghp_", "a.", "pass", "a.token", "api_key", "https", "a1", "g1-", "key-", "sk-", "a/",
         "A1b2", "secret_key", "password=", "\\u0067", '\\"', "webhook", "-----BEGIN", "\\n", "eyJ"]


def _judge_seconds(unit: str, size: int) -> float:
    text = unit * (size // len(unit))
    raw = b'{"what":"%s","snippet":"token=x"}' % text.encode()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        secrets._kind(raw)  # the full judgement, as every candidate line gets
        secrets.held_in_batch([raw])  # the small-batch path: the Python anchor, then the judgement
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("unit", UNITS)
def test_judging_a_line_four_times_longer_costs_about_four_times_as_much(unit):
    secrets._kind(b'{"what":"warm the rules"}')
    short, long = _judge_seconds(unit, 15_000), _judge_seconds(unit, 60_000)
    # linear: about 4x; quadratic: 16x.  The constant absorbs timer noise on tiny costs.
    assert long <= 8 * short + 0.05, (unit, short, long)
