"""Issue 36, section 1, in a real browser at a projector's 1280x720: with a short, a 40-word and the longest
sentence the sidebar takes (its default 128-token limit), multi-head, home, FFN, decoding and the explorer draw every token
label of the charts on view and stay within their short-sentence height plus one screen. One server."""
import shutil

import pytest

from browser_utils import CHROMIUM, browser, streamlit_server
from chart_text import VIEWPORT, page_url
from long_text import SENTENCES, measure

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM):
    pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)

PAGES = ("multihead", "home", "ffn", "decoding", "explorer")
ONE_SCREEN = VIEWPORT["height"]


def test_long_sentences_keep_every_label_and_the_page_height():
    heights, dropped = {}, {}
    with streamlit_server() as base, browser() as chromium:
        page = chromium.new_context(viewport=VIEWPORT).new_page()
        for name in PAGES:
            for size, text in SENTENCES.items():
                r = measure(page, page_url(base, name, present=False, extra={"text": text}))
                errors = page.locator('[data-testid="stException"]').all()
                assert not errors, f"{name} at {size}: {errors[0].inner_text()[:400]}"
                heights[name, size] = r["height"]
                if r["dropped"]:
                    dropped[name, size] = [a for a in r["axes"] if a["categories"] > a["drawn"]]
    assert not dropped, f"token labels plotly left out: {dropped}"
    too_tall = {k: (h, heights[k[0], "9"]) for k, h in heights.items() if h > heights[k[0], "9"] + ONE_SCREEN}
    assert not too_tall, f"taller than the short sentence's page plus one screen (px, short px): {too_tall}"
