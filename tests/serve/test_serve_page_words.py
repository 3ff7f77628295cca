"""The page says what is true in the CLI's words: box counts that add up to the
total, "waiting to be filed" for the spool, a reply worded as a reply, and cases in
the order and words of `m1nd cases` (a real `m1nd serve` process)."""

from __future__ import annotations

import re

import httpx

from servekit import Server, m1nd, mailbox, write  # noqa: F401  (mailbox is a fixture)


def get(srv: Server, path: str) -> str:
    response = httpx.get(srv.url.rstrip("/") + path, timeout=30)
    assert response.status_code == 200, response.text
    return response.text


def box_cards(page: str) -> dict[str, dict[str, int]]:
    cards = {}
    for card in re.findall(r'<div class="card box[^"]*">(.*?)</div></div>', page):
        label = re.search(r'<a class="label"[^>]*>([^<]*)</a>', card).group(1)
        counts = re.findall(r'<span class="dot [^"]*"></span>([a-z ]+) <b>(\d+)</b>', card)
        cards[label] = {word: int(n) for word, n in counts}
    return cards


def test_every_box_card_counts_add_up_to_its_total_and_the_spool_is_waiting_to_be_filed(mailbox):
    with Server() as srv:
        page = get(srv, "/")
        cards = box_cards(page)
        assert set(cards) == {"repo-a", "repo-b", "medulla", "waiting to be filed"}
        for label, c in cards.items():
            parts = ("open", "in flight", "answered", "external", "replies")
            assert sum(c[p] for p in parts) == c["total"], (label, c)
        # repo-a holds the answered bug, its pickup and receipt (two replies) and the open hostile letter
        assert cards["repo-a"] == {"open": 1, "in flight": 0, "answered": 1, "external": 0, "replies": 2, "total": 4}
        assert cards["waiting to be filed"]["total"] == 1
        assert "in the spool, in no box yet" in page
        listing = get(srv, "/?state=all&box=spool")
        assert ">waiting to be filed</a>" in listing and ">spool</a>" not in listing
        assert srv.stop() == 0


def test_a_reply_says_it_is_a_reply_never_open(mailbox):
    ids = mailbox["ids"]
    with Server() as srv:
        page = get(srv, f"/letters/{ids['pickup']}")
        card = re.search(rf'<div class="card letter [^"]*" id="l-{ids["pickup"]}">(.*?)</dl></div>', page).group(1)
        state = re.search(r"<dt>state</dt><dd>(.*?)</dd>", card).group(1)
        assert ">a reply</span>" in state and "work done, not work to do" in state
        assert ">open<" not in state and "(a reply:" not in state
        receipt = re.search(rf'id="l-{ids["receipt"]}">(.*?)</dl></div>', page).group(1)
        assert ">a receipt</span>" in re.search(r"<dt>state</dt><dd>(.*?)</dd>", receipt).group(1)
        assert srv.stop() == 0


def crash(ts: str, repo: str, what: str) -> None:
    write("--what", what, "--repo", repo, "--kind", "crash", "--ts", ts)  # no tool: fp:/crash


def test_the_cases_page_lists_fingerprints_in_the_cli_order_with_the_cli_words(mailbox):
    # fp:seek/false_absence: three witnesses long ago; fp:/crash: two witnesses this week
    for n in range(3):
        write("--what", f"seek said nothing is there, {n}", "--repo", "repo-a", "--tool", "seek",
              "--kind", "false_absence", "--ts", f"2026-03-0{n + 1}T09:00:00Z")
    crash("2026-05-02T09:00:00Z", "repo-a", "it crashed")
    crash("2026-05-02T10:00:00Z", "repo-b", "it crashed again")
    assert m1nd("distribute").returncode == 0
    human = m1nd("cases")
    assert human.returncode == 0, human.stderr
    cli_order = [l.split(" — ")[0].removeprefix("case ") for l in human.stdout.decode().splitlines()
                 if " — " in l]
    with Server() as srv:
        page = get(srv, "/cases")
        assert srv.stop() == 0
    names = [re.sub(r"&#x27;|&quot;", "", n) for n in re.findall(r'<span class="what">([^<]*)</span>', page)]
    assert names == cli_order
    assert names[0] == "fp:/crash (crash in letters that name no tool)"  # recent recurrence first
    assert "no case" not in page.lower()
    assert "2 witnesses, 2 in the last 7 days: recurring, escalated, no receipt yet" in page
    assert "3 witnesses: recurring, escalated, no receipt yet" in page
