"""A model folder's words in real Chromium: its card and its name make no viewer's browser fetch anything and
draw no Streamlit colour; they show as the characters written (issue 35, item 14)."""
import http.server
import shutil
import threading
import urllib.parse

import pytest

from browser_utils import CHROMIUM, browser, streamlit_server, wait_for_app
from conftest import ROOT

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM):
    pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)

TOY = ROOT / "pretrained" / "toy-reverse"


class Beacon:
    """A local server that counts the requests a browser makes for the card's and the name's images."""

    def __init__(self):
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"


def hostile_card(beacon: Beacon) -> str:
    """The card probes that made Chromium fetch through the pattern-based card."""
    return (f"# Card\n\nsee `![x]({beacon.url('in-backticks.png')})` here\n\n"
            f"a mid-line ``` then ![y]({beacon.url('after-open-fence.png')})\n\n"
            f"a mid-line ~~~ then ![z]({beacon.url('after-tilde.png')})\n\n"
            f"![r][ref] and <img src={beacon.url('raw-img.png')}> &#60;img src={beacon.url('entity-img.png')}&#62;\n\n"
            f"[ref]: {beacon.url('reference.png')}\n\n:red[drawn red] :smile:\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n")


@pytest.fixture(scope="module")
def hostile_models(tmp_path_factory):
    beacon = Beacon()
    models = tmp_path_factory.mktemp("models")
    # a folder name cannot hold '/', so the address is written with entities, as the hostile class did
    name = f"toy :red[x] ![i](http:&#47;&#47;127.0.0.1:{beacon.port}&#47;folder-name.png)"
    shutil.copytree(TOY, models / name)
    (models / name / "README.md").write_text(hostile_card(beacon), encoding="utf-8")
    yield models, name, beacon
    beacon.server.shutdown()


@pytest.mark.parametrize("page_path", ["about", ""])
def test_a_hostile_card_and_folder_name_fetch_nothing_and_show_as_written(hostile_models, page_path):
    models, name, beacon = hostile_models
    requested = []
    with streamlit_server(env={"TRANSFORMER_VIZ_MODELS": str(models)}) as url, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{url}/{page_path}?" + urllib.parse.urlencode({"model": name, "text": "a b c"}))
        wait_for_app(page)
        if page_path == "about":
            page.wait_for_selector(".tv-model-card table", timeout=240_000)
            card = page.inner_text(".tv-model-card")
            assert f"![x]({beacon.url('in-backticks.png')})" in card and "<img src=" in card
            assert ":red[drawn red]" in card and page.locator(".tv-model-card img").count() == 0
            title = page.inner_text("h1")
        else:
            page.wait_for_selector(".js-plotly-plot", timeout=240_000)
            title = page.inner_text('[data-testid="stMainBlockContainer"]')
        assert name in title, title                                     # the folder's name, character for character
        page.wait_for_timeout(1500)                                     # time for any image to be asked for
        # Streamlit draws :red[...] as a span coloured red: none in the page's main text
        red = page.eval_on_selector_all('[data-testid="stMainBlockContainer"] span[style*="color"]',
                                        "els => els.map(e => e.textContent)")
        assert not [text for text in red if "x" == text.strip() or "drawn red" in text], red
    assert not beacon.hits, beacon.hits
    assert not [r for r in requested if f":{beacon.port}" in r], requested
