"""The report page in real headless Chromium (Debian's package), driven over the
DevTools protocol: at 1280 and 375 px, screenshots kept, no horizontal scroll on a
phone, summary and chart on the first screen, no console errors, no network."""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests import report_fixture

# M1ND_TEST_CHROMIUM lets a test play a machine without the browser.
CHROMIUM = os.environ.get("M1ND_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"


class Browser:
    def __init__(self, profile_dir: Path) -> None:
        import websocket

        self.proc = subprocess.Popen([
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-extensions", f"--user-data-dir={profile_dir}", "--remote-debugging-port=0", "about:blank",
        ], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not start")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.ids = itertools.count(1)
        self.events: list[dict] = []

    def call(self, method: str, **params):
        mid = next(self.ids)
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(msg["error"])
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method: str, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(e.get("method") == method for e in self.events):
                return
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(method)

    def eval(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def page_file(tmp_path, spool_path, cli):
    doc = report_fixture.build(tmp_path, spool_path)
    out = tmp_path / "report.html"
    assert cli("report", "render", doc["run_id"], "--format", "html", "--out", str(out)).code == 0
    return out


# Outside CI a machine without Chromium skips these, and pytest's `-ra` summary says so in one
# line; under CI=true (where .ci/run installs Chromium) they always run, so a missing browser fails.
NOT_RUN = "not run: Chromium is not installed (.ci/run installs it; CI=true runs these and never skips)"


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM) and os.environ.get("CI") != "true", reason=NOT_RUN)
@pytest.mark.parametrize("width,height", [(1280, 800), (375, 740)])
def test_the_report_page_reads_well_in_a_real_browser(page_file, tmp_path, width, height):
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("chromium is installed by .ci/run")
        pytest.skip("chromium is not installed here: the browser check was not run")
    browser = Browser(tmp_path / f"chromium-{width}")
    try:
        browser.call("Page.enable")
        browser.call("Runtime.enable")
        browser.call("Log.enable")
        browser.call("Network.enable")
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                     mobile=width < 500)
        browser.events.clear()
        browser.call("Page.navigate", url=page_file.as_uri())
        browser.wait_for("Page.loadEventFired")
        time.sleep(0.3)
        shot = base64.b64decode(browser.call("Page.captureScreenshot", format="png")["data"])
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / f"report-{width}.png").write_bytes(shot)
        print(f"screenshot: {ARTIFACTS / f'report-{width}.png'}")
        scroll = browser.eval("[document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth,"
                              " Math.max(...[...document.querySelectorAll('main *')].map("
                              "n => n.getBoundingClientRect().right))]")
        assert max(scroll) <= width, f"horizontal scroll at {width}px: {scroll}"
        first_screen = browser.eval("""(() => {
            const seen = s => { const r = document.querySelector(s).getBoundingClientRect();
                                return r.height > 0 && r.top >= 0 && r.top < window.innerHeight; };
            return {table: seen('table'), chart: seen('svg.chart'), period: seen('.facts')};
        })()""")
        assert first_screen == {"table": True, "chart": True, "period": True}
        assert browser.eval("document.querySelector('details').open") is False
        # What the page shows adds up: each box's bars (replies apart) = its New in the table.
        shown = browser.eval("""(() => {
            const news = {};
            for (const tr of document.querySelectorAll('tbody tr'))
                news[tr.cells[0].textContent] = +tr.cells[1].textContent;
            const bars = {};
            for (const t of document.querySelectorAll('svg.chart rect title')) {
                const m = t.textContent.match(/^(.+): (\\d+) new /);
                bars[m[1]] = (bars[m[1]] || 0) + +m[2];
            }
            return {news, bars, items: document.querySelectorAll('ul.ledger li').length};
        })()""")
        assert shown["items"] == sum(shown["news"].values())
        news = {(label.split(" ", 1)[1] if not label[0].isascii() else label).removesuffix(" (not filed yet)"): n
                for label, n in shown["news"].items()}
        assert {box: n for box, n in news.items() if n} == shown["bars"], shown
        assert browser.eval("document.querySelectorAll('script').length") == 0
        errors = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"
                  or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
                  or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error")]
        assert errors == []
        requests = [e["params"]["request"]["url"] for e in browser.events
                    if e.get("method") == "Network.requestWillBeSent"]
        assert all(u.startswith("file://") for u in requests) and len(requests) == 1, requests
    finally:
        browser.close()
