"""A report is frozen, checked and rendered a page at a time: what that relies on.

- the on-disk sort (reports/spill.py) gives freeze's order (box, state, newest first,
  id, digest) and each page the bytes `store.canonical` gives the page;
- the ledger read in blocks gives what `ledger.read_from` gives;
- a frozen report's entries come grouped by box in its summary's order, so the
  renderers stream them; a report whose entries are not (written otherwise) renders
  as the renderers that hold every entry render it;
- the JSON document written entry by entry is `jsonout.dumps` of the whole.
"""

from __future__ import annotations

import hashlib
import os
import shutil

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from m1nd import jsonout, ledger
from m1nd.fates import STATES
from m1nd.paths import resolve_paths
from m1nd.reports import render, spill, store
from m1nd.reports.formats import artifacts
from tests import report_fixture

BOXES = ["repo-a", "Repo-B", "medulla", "waiting"]
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
entry = st.fixed_dictionaries({
    "box": st.sampled_from(BOXES), "state": st.sampled_from(STATES), "ts": text,
    "id": st.text("0123456789abcdef", min_size=1, max_size=3), "digest": st.text("0123456789abcdef", max_size=3),
    "what": text, "reply": st.booleans(),
})


def reference_order(entries: list[dict]) -> list[dict]:
    """freeze._sort, as it sorts a list in memory (three stable sorts)."""
    order = {b: i for i, b in enumerate(BOXES)}
    rank = {s: i for i, s in enumerate(STATES)}
    out = list(entries)
    out.sort(key=lambda e: (e["id"], e["digest"]))
    out.sort(key=lambda e: e["ts"], reverse=True)
    out.sort(key=lambda e: (order[e["box"]], rank[e["state"]]))
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(entry, max_size=40), st.integers(1, 7))
def test_the_disk_sort_gives_freezes_order_and_each_pages_canonical_bytes(entries, page_size):
    # digests are unique in a report (one ledger entry per digest): so is the order
    seen, unique = set(), []
    for e in entries:
        if (e["id"], e["digest"]) not in seen:
            seen.add((e["id"], e["digest"]))
            unique.append(e)
    s = spill.Spill(page_size)
    try:
        for e in unique:
            s.add(BOXES.index(e["box"]), STATES.index(e["state"]), e)
        want = reference_order(unique)
        pages = [{"run_id": "run-x", "number": i // page_size + 1, "entries": want[i:i + page_size]}
                 for i in range(0, len(want), page_size)]
        assert list(s.page_lines("run-x")) == [store.canonical(p) for p in pages]
        assert s.pages == len(pages)
    finally:
        s.close()


def test_the_ledger_read_in_blocks_is_the_ledger_read_whole(cli, tmp_path, spool_path, monkeypatch):
    report_fixture.build(tmp_path, spool_path)
    paths = resolve_paths()
    whole, end = ledger.read_from(paths, 0)
    assert len(whole) > 5
    monkeypatch.setattr(spill, "BLOCK", 97)  # lines cut across blocks
    for offset in (0, whole[2][0], whole[-1][0]):
        lines = spill.LedgerLines(paths, offset)
        assert list(lines) == ledger.read_from(paths, offset)[0]
        assert lines.end == end


def _frozen(tmp_path, spool_path):
    doc = report_fixture.build(tmp_path, spool_path)
    paths = resolve_paths()
    return paths, store.load_frozen(paths, doc["run_id"])


def _markdown_held_whole(frozen) -> bytes:
    """The Markdown's ledger as the renderer that held every entry wrote it."""
    lines = []
    for row, items in render.boxes_in_order(frozen.head, frozen.entries):
        if items:
            lines += [f"### {render.md(render.label_of(row))} ({render.plural(len(items), 'letter')})", ""]
            lines += ["- " + " · ".join(f"`{v}`" if k in ("state", "id") else render.md(v)
                                        for k, v in render.entry_fields(e)) for e in items]
            lines.append("")
    return "\n".join(lines).encode()


def test_a_frozen_reports_entries_come_grouped_by_box_in_summary_order(cli, tmp_path, spool_path):
    _, frozen = _frozen(tmp_path, spool_path)
    tally = render.Tally(frozen)
    assert tally.grouped
    boxes = [e["box"] for e in frozen.entries]
    order = [r["box"] for r in frozen.head["summary"]]
    assert len(set(boxes)) >= 2
    assert boxes == sorted(boxes, key=order.index)
    assert _markdown_held_whole(frozen) in render.markdown(frozen)


def test_entries_not_grouped_by_box_render_as_if_held_whole(cli, tmp_path, spool_path):
    paths, frozen = _frozen(tmp_path, spool_path)
    shuffled = list(reversed(frozen.entries))  # boxes out of summary order
    run_id = frozen.run_id + "-r"
    pages = [{"run_id": run_id, "number": i // 100 + 1, "entries": shuffled[i:i + 100]}
             for i in range(0, len(shuffled), 100)]
    store.write_frozen(paths, run_id, dict(frozen.head, run_id=run_id), pages, frozen.digests,
                       triggers=(store.canonical(t) for t in frozen.iter_triggers()))
    other = store.load_frozen(paths, run_id)
    assert not render.Tally(other).grouped
    assert _markdown_held_whole(other) in render.markdown(other)
    html = artifacts(other)[f"{run_id}.html"].decode()
    ledger_html = html[html.index('<section class="ledger-section">'):]
    ledger_html = ledger_html[: ledger_html.index("</section>")]
    want = [e["id"] for row, items in render.boxes_in_order(other.head, shuffled) for e in items]
    assert want != [e["id"] for e in shuffled]  # the renderer had to group them
    positions = [ledger_html.index(f"<code>{i}</code>") for i in want]
    assert positions == sorted(positions) and len(set(want)) == len(want)


def test_the_json_written_entry_by_entry_is_the_whole_document_dumped(cli, tmp_path, spool_path):
    _, frozen = _frozen(tmp_path, spool_path)
    got = render.json_doc(frozen)
    doc = orjson.loads(got)
    assert doc["entries"] == frozen.entries and len(doc["entries"]) == frozen.head["entries"] > 0
    assert got == jsonout.dumps(doc)


def test_a_report_with_no_entries_renders_its_json_whole(cli, tmp_path, spool_path):
    paths, frozen = _frozen(tmp_path, spool_path)
    run_id = frozen.run_id + "-e"
    store.write_frozen(paths, run_id, dict(frozen.head, run_id=run_id, entries=0, pages=0), [], [],
                       triggers=(store.canonical(t) for t in frozen.iter_triggers()))
    empty = store.load_frozen(paths, run_id)
    got = render.json_doc(empty)
    assert orjson.loads(got)["entries"] == [] and got == jsonout.dumps(orjson.loads(got))
    assert b"No new letters in this period." in render.markdown(empty)


def test_a_page_cut_short_is_refused_as_before(cli, tmp_path, spool_path):
    paths, frozen = _frozen(tmp_path, spool_path)
    pages = os.path.join(frozen.dir, store.PAGES)
    shutil.copy(pages, pages + ".bak")
    with open(pages, "rb") as fh:
        data = fh.read()
    with open(pages, "wb") as fh:
        fh.write(data[: len(data) // 2])
    try:
        store.load_frozen(paths, frozen.run_id)
    except store.Tampered as exc:
        assert "does not match its digest" in exc.message or "is missing" in exc.message
    else:
        raise AssertionError("a page cut short was taken")


def _as_frozen_before_triggers_file(paths, frozen, run_id: str):
    """The same run as a release before triggers.jsonl froze it: the triggers a list in
    the head, no file, the manifest's digests made again."""
    from m1nd.reports.records import canonical, run_dir, sha256
    from m1nd.reports.runs import report_digest

    old = run_dir(paths, run_id)
    shutil.copytree(frozen.dir, old)
    os.unlink(os.path.join(old, store.TRIGGERS))
    update = {k: v for k, v in frozen.head["update"].items() if k != "triggers_digest"}
    head = dict(frozen.head, run_id=run_id, update=dict(update, triggers=list(frozen.iter_triggers())))
    head_bytes = canonical(head)
    with open(os.path.join(old, "head.json"), "wb") as fh:
        fh.write(head_bytes)
    manifest = dict(frozen.manifest, run_id=run_id, head=sha256(head_bytes),
                    digest=report_digest(sha256(head_bytes), frozen.manifest["pages"]))
    with open(os.path.join(old, "manifest.json"), "wb") as fh:
        fh.write(canonical(manifest))
    return store.load_frozen(paths, run_id)


def test_an_updates_triggers_are_frozen_beside_the_head_and_render_as_when_the_head_held_them(
        cli, tmp_path, spool_path):
    """A first report may have a trigger for every letter of its period: they are
    written to triggers.jsonl (the head names their count and digest) and streamed into
    each document, never held whole.  A run frozen with its triggers in its head (an
    earlier release) still loads, and renders the same documents but for its digest."""
    paths, frozen = _frozen(tmp_path, spool_path)
    triggers = list(frozen.iter_triggers())
    assert frozen.trigger_count == len(triggers) > 0
    head = orjson.loads(open(os.path.join(frozen.dir, "head.json"), "rb").read())
    assert head["update"]["triggers"] == len(triggers) and len(head["update"]["triggers_digest"]) == 64
    lines = open(os.path.join(frozen.dir, store.TRIGGERS), "rb").read().splitlines()
    assert lines == [store.canonical(t) for t in triggers]
    got = render.json_doc(frozen)
    doc = orjson.loads(got)
    assert doc["update"] == {"after": head["update"]["after"], "before": head["update"]["before"],
                             "triggers": triggers}
    assert got == jsonout.dumps(doc)  # streamed in at the indentation the whole would give them

    old = _as_frozen_before_triggers_file(paths, frozen, frozen.run_id + "-o")
    assert old.trigger_count == len(triggers) and list(old.iter_triggers()) == triggers
    for name, data in artifacts(frozen).items():
        before = artifacts(old)[name.replace(frozen.run_id, old.run_id)]
        md_new = hashlib.sha256(artifacts(frozen)[f"{frozen.run_id}.md"]).hexdigest()
        md_old = hashlib.sha256(artifacts(old)[f"{old.run_id}.md"]).hexdigest()
        same = (data.replace(frozen.run_id.encode(), b"RUN").replace(frozen.digest.encode(), b"DIGEST")
                .replace(md_new.encode(), b"MD"))
        assert same == (before.replace(old.run_id.encode(), b"RUN").replace(old.digest.encode(), b"DIGEST")
                        .replace(md_old.encode(), b"MD")), name


@pytest.mark.parametrize("damage", ["a byte changed", "a line more", "a line less", "missing", "count changed"])
def test_a_triggers_file_that_does_not_match_its_head_is_refused(cli, tmp_path, spool_path, damage):
    paths, frozen = _frozen(tmp_path, spool_path)
    path = os.path.join(frozen.dir, store.TRIGGERS)
    data = open(path, "rb").read()
    if damage == "missing":
        os.unlink(path)
    elif damage == "count changed":  # a head edited to say so fails its own digest first
        head_path = os.path.join(frozen.dir, "head.json")
        head = orjson.loads(open(head_path, "rb").read())
        head["update"]["triggers"] += 1
        open(head_path, "wb").write(store.canonical(head))
    else:
        lines = data.splitlines(keepends=True)
        if damage == "a byte changed":
            lines[0] = lines[0].replace(b'"id":"', b'"id":"0', 1)
        elif damage == "a line more":
            lines.append(lines[0])
        else:
            lines = lines[:-1]
        open(path, "wb").write(b"".join(lines))
    with pytest.raises(store.Tampered) as caught:
        store.load_frozen(paths, frozen.run_id)
    assert "refusing to go on" in caught.value.message
    r = cli("report", "render", frozen.run_id, "--format", "md")
    assert r.code != 0 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_head_that_counts_triggers_it_is_not_given_is_not_frozen(cli, tmp_path, spool_path):
    paths, frozen = _frozen(tmp_path, spool_path)
    assert frozen.trigger_count > 0
    with pytest.raises(ValueError, match="triggers written"):
        store.write_frozen(paths, frozen.run_id + "-t", dict(frozen.head, run_id=frozen.run_id + "-t"),
                           [], [])
    assert store.load_frozen(paths, frozen.run_id + "-t") is None
