"""What a report shows, in its three formats, pinned by snapshots."""

from __future__ import annotations

import re

from m1nd.reports import store
from tests import report_fixture


def rendered(cli, run_id: str, fmt: str) -> str:
    r = cli("report", "render", run_id, "--format", fmt)
    assert r.code == 0, r.stderr
    return r.stdout


def test_markdown_json_and_html_match_their_snapshots(cli, tmp_path, spool_path, snapshot):
    doc = report_fixture.build(tmp_path, spool_path)
    for fmt in ("md", "json", "html"):
        assert rendered(cli, doc["run_id"], fmt) == snapshot(name=fmt)


def test_the_markdown_puts_period_coverage_and_changes_right_under_the_heading(cli, tmp_path, spool_path):
    doc = report_fixture.build(tmp_path, spool_path)
    lines = [l for l in rendered(cli, doc["run_id"], "md").splitlines() if l]
    assert lines[0].startswith("# m1nd report: twice-daily")
    assert lines[1].startswith("Period: ") and "(America/New_York)" in lines[1]
    assert lines[2].startswith("Coverage: incomplete: ") and "pending in the spool" in lines[2]
    assert lines[3].startswith("Changes made: none.")
    assert lines[4] == "| Box | New | Open | In flight | Answered | External |"


def test_markers_are_always_beside_labels_and_replies_are_never_open(cli, tmp_path, spool_path):
    doc = report_fixture.build(tmp_path, spool_path)
    md = rendered(cli, doc["run_id"], "md")
    for marker in "🟦🟪🟩🟧":
        for m in re.finditer(marker, md):
            assert md[m.end()] == " " and md[m.end() + 1] not in " |"
    frozen = store.load_frozen(__import__("m1nd.paths", fromlist=["x"]).resolve_paths(), doc["run_id"])
    replies = [e for e in frozen.entries if e["reply"]]
    assert replies, "the fixture has replies"
    rows = {r["box"]: r for r in frozen.head["summary"]}
    non_reply_open = sum(1 for e in frozen.entries if e["state"] == "wet_ink" and not e["reply"]
                         and e["box"] != "waiting")
    assert sum(r["open"] for b, r in rows.items() if b != "waiting") == non_reply_open
    digests = [e["digest"] for e in frozen.entries]
    assert len(digests) == len(set(digests)) == doc["entries"]


def test_letter_text_is_escaped_in_every_format(cli, tmp_path, spool_path):
    doc = report_fixture.build(tmp_path, spool_path)
    md = rendered(cli, doc["run_id"], "md")
    assert "\\<script\\>" in md and "\\x1b" in md and "\x1b" not in md and "\\*\\*bold\\*\\*" in md
    html = rendered(cli, doc["run_id"], "html")
    assert "<script" not in html and "&lt;script&gt;" in html and "\x1b" not in html


def test_the_html_page_is_self_contained_deterministic_and_names_its_markdown_twin(cli, tmp_path, spool_path):
    doc = report_fixture.build(tmp_path, spool_path)
    html = rendered(cli, doc["run_id"], "html")
    assert html == rendered(cli, doc["run_id"], "html")
    md = rendered(cli, doc["run_id"], "md").encode()
    assert f'name="m1nd-markdown-sha256" content="{store.sha256(md)}"' in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"(src|href)=", html) and "url(" not in html and "@import" not in html
    assert "<svg" in html and "<details>" in html and "<details open" not in html
