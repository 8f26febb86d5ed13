"""Start `streamlit run app.py` on a free localhost port and drive Debian's Chromium with Playwright."""
from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(env: dict | None = None, timeout: float = 120):
    """Yields the base URL of a fresh server; stops it afterwards."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("streamlit did not start in time")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


APP_TIMEOUT_MS = 240_000     # the longest a page's first run has taken on a loaded 2-core machine, with room


def wait_for_app(page, timeout_ms: int = APP_TIMEOUT_MS) -> None:
    """Until Streamlit has finished running the script (no 'Running…' status) and charts are drawn."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout_ms)


def axis_labels(page, axis: str = "x") -> list[str]:
    """Tick labels of every plotly chart on the page, in order."""
    return page.eval_on_selector_all(f".js-plotly-plot .{axis}tick text", "els => els.map(e => e.textContent)")


class PageRuns:
    """The whole-page script runs a page asks the server for: rerun_script messages naming no fragment (the worker
    watchdog, a fragment on every page, reruns every 5 s: not a run of the page, not counted)."""
    def __init__(self, page):
        self.count = 0
        page.on("websocket", lambda ws: ws.on("framesent", self._add))

    def _add(self, frame):
        from streamlit.proto.BackMsg_pb2 import BackMsg
        message = BackMsg.FromString(frame if isinstance(frame, bytes) else frame.encode())
        if message.WhichOneof("type") == "rerun_script" and not message.rerun_script.fragment_id:
            self.count += 1


def open_browser_view(chromium, url: str, view: str, load_ms: int, settle_ms: int = 1000):
    """A 1280x720 page at `url` once its browser-side view (`view`, a CSS selector) holds every kind and layer
    and the last run is over (a pick's messages are then counted alone); returns it and its PageRuns."""
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    runs = PageRuns(page)
    page.goto(url)
    wait_for_app(page)
    page.wait_for_selector(f"{view}[data-whole='1']", timeout=load_ms)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=load_ms)
    page.wait_for_timeout(settle_ms)
    return page, runs


def view_drew(page, view: str, pick: str, timeout: int) -> None:
    """Wait until the browser-side view `view` has drawn `pick` ("kind:layer[:head]") whole."""
    page.wait_for_function("([s, w]) => (document.querySelector(s) || {dataset: {}}).dataset.linesPick === w",
                           arg=[view, pick], timeout=timeout)


FONT_SIZE_JS = "(s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)"
TICK_SIZES_JS = "(s) => [...document.querySelectorAll(s)].map((e) => parseFloat(e.style.fontSize))"


def check_projector_sizes(page, picker: str, ticks: str, present: bool, *more: str) -> None:
    """Presenter mode: the view's picker (a CSS selector), its figure's tick labels (`ticks`: a selector of
    their text elements) and any `more` text (selectors) at the projector's 20 px at least; else the picker
    under 20 px (the screen's sizes)."""
    size = page.evaluate(FONT_SIZE_JS, picker)
    if not present:
        assert size < 20, size
        return
    sizes = [size, *page.evaluate(TICK_SIZES_JS, ticks), *(page.evaluate(FONT_SIZE_JS, s) for s in more)]
    assert len(sizes) > 1 + len(more) and min(sizes) >= 20, sizes     # ticks found, none under 20 px
    # the view's captions in the text's own colour, as Streamlit's captions are there (at 0.75 opacity they read grey)
    shades = page.evaluate("() => [...document.querySelectorAll('.vz-caption')].filter((e) => e.offsetParent)"
                           ".map((e) => [getComputedStyle(e).opacity, getComputedStyle(e).color])")
    assert all(shade == ["1", "rgb(49, 51, 63)"] for shade in shades), shades


class HeldAnswers:
    """The page's websocket to the server, routed through the test so that the server's messages can be held
    back from the moment the page first sends one that `hold_after(BackMsg)` picks (a run's answer that comes
    late) and let go later, in order (once: what the page sends afterwards is answered at once)."""
    def __init__(self, page, hold_after):
        self.hold_after, self.holding, self.held = hold_after, False, []
        self.done = False
        page.route_web_socket(re.compile(r"/_stcore/stream"), self._route)

    def _route(self, ws) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg
        server = ws.connect_to_server()

        def to_server(frame) -> None:
            if not self.done and self.hold_after(BackMsg.FromString(frame if isinstance(frame, bytes)
                                                                    else frame.encode())):
                self.holding = self.done = True
            server.send(frame)

        def to_page(frame) -> None:
            if self.holding:
                self.held.append((ws, frame))
            else:
                ws.send(frame)

        ws.on_message(to_server)
        server.on_message(to_page)

    def wait_until_holding(self, page, timeout_s: float = 60) -> None:
        deadline = time.time() + timeout_s
        while not self.holding:
            assert time.time() < deadline, "the page never sent the message to hold answers after"
            page.wait_for_timeout(20)            # Playwright's events are handled while the page waits

    def let_go(self) -> None:
        self.holding = False
        for ws, frame in self.held:
            ws.send(frame)
        self.held = []
