"""The page in a real headless Chromium (system package), at 1280 and 375 px:
screenshots kept as test artifacts, no horizontal scroll on a phone, filters
followed as links, a thread opened, no console error, no request leaving the
server."""

from __future__ import annotations

import os

import pytest

from cdp import CHROMIUM, Browser
from servekit import ARTIFACTS, Server, m1nd, mailbox, write  # noqa: F401  (mailbox is a fixture)

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM) and not os.environ.get("CI"),
                                reason="chromium is installed by .ci/run")


@pytest.fixture
def browser():
    b = Browser()
    yield b
    b.close()


@pytest.mark.parametrize("width,height,mobile", [(1280, 900, False), (375, 812, True)])
def test_the_page_in_a_real_browser(mailbox, browser, width, height, mobile, tmp_path):
    out = ARTIFACTS / "serve"
    out.mkdir(parents=True, exist_ok=True)
    ids = mailbox["ids"]
    for n in range(2):  # a fingerprint with two witnesses, for the cases page
        write("--what", f"recall found nothing, {n}", "--repo", "repo-b", "--tool", "recall",
              "--kind", "false_absence", "--ts", f"2026-04-2{n}T08:00:00Z")
    for n in range(2):  # and one whose letters name no tool, recurring this week: listed first
        write("--what", f"it crashed, {n}", "--repo", "repo-b", "--kind", "crash", "--ts", f"2026-05-0{n + 1}T08:00:00Z")
    assert m1nd("distribute").returncode == 0
    assert m1nd("report", "--since", "2026-04-01T00:00:00Z", "--until", "2026-05-03T00:00:00Z",
                "--to", str(tmp_path / "reports")).returncode == 0
    with Server() as srv:
        page = browser.page()
        try:
            for domain in ("Page", "Runtime", "Log", "Network"):
                page.call(f"{domain}.enable")
            page.viewport(width, height, mobile)
            page.navigate(srv.url)
            assert page.eval("document.title") == "Mailbox · m1nd"
            assert page.eval("document.querySelectorAll('.box').length") == 4
            assert "WAITING TO BE FILED" in page.eval("document.body.innerText").upper()
            page.screenshot(str(out / f"mailbox-{width}.png"))
            if mobile:
                assert page.eval("document.documentElement.scrollWidth") <= width
                assert page.eval("window.innerWidth") == width

            # a filter, followed as a link: every state
            page.click("a.chip[href='/?state=all']")
            assert page.eval("location.search") == "?state=all"
            listed = page.eval("[...document.querySelectorAll('ul.ledger a.id')].map(a => a.textContent)")
            assert ids["bug"] in listed and ids["external"] in listed
            # then one box, from its card
            page.click(".box a.label[href='/?state=all&box=repo-a']")
            listed = page.eval("[...document.querySelectorAll('ul.ledger a.id')].map(a => a.textContent)")
            assert sorted(listed) == sorted([ids["bug"], ids["hostile"]])
            # the hostile letter is text, not markup: nothing it holds ran or rendered
            assert page.eval("document.querySelectorAll('script, img, svg, .what b').length") == 0
            assert '<script>alert("x")</script>' in page.eval("document.body.innerText")
            page.screenshot(str(out / f"filtered-{width}.png"))

            # the plain form: a text search
            page.eval("document.querySelector('input[name=q]').value = 'deleted node'")
            page.click("form.filters button[type=submit]")
            assert "q=deleted+node" in page.eval("location.search")
            assert page.eval("[...document.querySelectorAll('ul.ledger a.id')].map(a => a.textContent)") == [ids["bug"]]

            # a thread, opened from its letter
            page.click("ul.ledger a.what")
            assert page.eval("location.pathname") == f"/letters/{ids['bug']}"
            shown = page.eval("[...document.querySelectorAll('.letter')].map(e => e.id)")
            assert set(shown) == {f"l-{ids['bug']}", f"l-{ids['pickup']}", f"l-{ids['receipt']}"}
            assert page.eval("document.querySelector('.letter.focus').id") == f"l-{ids['bug']}"
            receipt = page.eval(f"document.getElementById('l-{ids['receipt']}').innerText").upper()
            assert "A RECEIPT" in receipt and "WORK DONE, NOT WORK TO DO" in receipt and "OPEN (A REPLY" not in receipt
            if mobile:
                assert page.eval("document.documentElement.scrollWidth") <= width
            page.screenshot(str(out / f"thread-{width}.png"))

            page.navigate(srv.url + f"letters/{ids['hostile']}")
            if mobile:
                assert page.eval("document.documentElement.scrollWidth") <= width
            page.screenshot(str(out / f"hostile-{width}.png"))

            # the cases and the delivered reports, reached from the navigation
            page.click("nav a[href='/cases']")
            shown = page.eval("document.body.innerText")
            assert "fp:recall/false_absence" in shown
            assert "2 witnesses: recurring, escalated, no receipt yet" in shown
            assert "NO CASE" not in shown.upper()
            names = page.eval("[...document.querySelectorAll('ul.ledger .what')].map(e => e.textContent)")
            assert names == ["fp:/crash (crash in letters that name no tool)", "fp:recall/false_absence"]
            if mobile:
                assert page.eval("document.documentElement.scrollWidth") <= width
            page.screenshot(str(out / f"cases-{width}.png"))
            page.click("nav a[href='/reports']")
            page.screenshot(str(out / f"reports-{width}.png"))
            page.click("ul.ledger a.what")
            assert page.eval("location.pathname").startswith("/reports/")
            assert page.eval("document.querySelectorAll('script').length") == 0
            if mobile:
                assert page.eval("document.documentElement.scrollWidth") <= width
            page.screenshot(str(out / f"report-{width}.png"))

            assert page.problems() == []
            outside = [u for u in page.requests() if not u.startswith(srv.url)]
            assert outside == []
            assert len(page.requests()) >= 6
        finally:
            page.close()
        assert srv.stop() == 0
