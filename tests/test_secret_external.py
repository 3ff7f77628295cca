"""The held rule measured through `m1nd distribute` against material nobody here
wrote (tests/secret_wrappings.py): every credential format of the public scanners'
test suites in every wrapping an agent writes, and ordinary technical text."""

from __future__ import annotations

from collections import Counter

import pytest

from conftest import write_spool
from secret_wrappings import corpus_or_skip, credential_letters, ordinary_letters

# The target: 99 % or more held, every format held in the four wrappings below, no
# ordinary line held. m1nd holds 2,539 of 2,540 (the one miss: a password with a `/`
# inside a URL's user:password, where a `/` ends the user part). A change that holds
# less fails.
RECALL_FLOOR = 0.9995
MUST_HOLD = ("bare in prose", "KEY=value", "JSON", "escaped JSON in JSON")
MUST_HOLD_MISSES_AT_MOST = 0



def test_the_external_corpus_is_held_at_least_as_well_as_today_and_no_ordinary_line_is(cli, spool_path, tmp_path):
    corpus = corpus_or_skip(pytest)
    root = tmp_path / "repo-a"
    root.mkdir()
    creds = credential_letters(corpus)
    ordinary = ordinary_letters(corpus)
    write_spool(spool_path, ordinary + [raw for _, _, raw in creds])
    before = spool_path.read_bytes()
    result = cli("distribute", "--json", "--root", str(root))
    assert result.code == 0, result.stderr
    assert spool_path.read_bytes() == before
    boxed = set((root / ".m1nd" / "inbox.jsonl").read_bytes().splitlines())
    missed = [(fid, w) for fid, w, raw in creds if raw in boxed]
    held_ordinary = [raw for raw in ordinary if raw not in boxed]
    by_wrapping = Counter(w for _, w in missed)
    recall = 1 - len(missed) / len(creds)
    print(f"\ncredential letters held: {len(creds) - len(missed)} / {len(creds)} ({recall:.1%}); "
          f"missed by wrapping: {dict(by_wrapping)}; ordinary lines held: {len(held_ordinary)} / {len(ordinary)}")
    assert not held_ordinary, held_ordinary[:5]
    assert recall >= RECALL_FLOOR, (recall, by_wrapping, missed[:40])
    unheld = sorted({(fid, w) for fid, w in missed if w in MUST_HOLD})
    print(f"formats not held in a wrapping that must hold them: {len(unheld)}")
    assert len(unheld) <= MUST_HOLD_MISSES_AT_MOST, unheld
