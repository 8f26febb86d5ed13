"""Issue 36, section 1, in a real browser at a projector's 1280x720: with a short, a 40-word and the longest
sentence the sidebar takes (its default 128-token limit), multi-head, home, FFN, decoding, the explorer, step-through,
positional, LayerNorm and attribution draw every token label of the charts on view and stay within their
short-sentence height plus one screen; in presenter mode too (step-through, LayerNorm). One server."""
import pytest

from chart_text import VIEWPORT, page_url
from long_text import SENTENCES, measure

pytestmark = pytest.mark.browser

PAGES = ("multihead", "home", "ffn", "decoding", "explorer", "step", "positional", "layernorm", "attribution")
ONE_SCREEN = VIEWPORT["height"]


def test_long_sentences_keep_every_label_and_the_page_height(app_url, chromium):
    heights, dropped = {}, {}
    page = chromium.new_context(viewport=VIEWPORT).new_page()
    for name in PAGES:
        for size, text in SENTENCES.items():
            r = measure(page, page_url(app_url, name, present=False, extra={"text": text}))
            errors = page.locator('[data-testid="stException"]').all()
            assert not errors, f"{name} at {size}: {errors[0].inner_text()[:400]}"
            heights[name, size] = r["height"]
            if r["dropped"]:
                dropped[name, size] = [a for a in r["axes"] if a["categories"] > a["drawn"]]
    assert not dropped, f"token labels plotly left out: {dropped}"
    too_tall = {k: (h, heights[k[0], "9"]) for k, h in heights.items() if h > heights[k[0], "9"] + ONE_SCREEN}
    assert not too_tall, f"taller than the short sentence's page plus one screen (px, short px): {too_tall}"


@pytest.mark.parametrize("name", ["step", "layernorm"])
def test_a_40_word_sentence_in_presenter_mode_keeps_every_label(app_url, chromium, name):
    """The step-through's maps and bars, or LayerNorm's token charts, on a projector: the 40-word sentence through a
    window, every label drawn, the page within a screen of the 9-word sentence's."""
    page = chromium.new_context(viewport=VIEWPORT).new_page()
    short, long = (measure(page, page_url(app_url, name, present=True, extra={"text": SENTENCES[size]}))
                   for size in ("9", "40"))
    errors = page.locator('[data-testid="stException"]').all()
    assert not errors, errors[0].inner_text()[:400]
    assert long["axes"] and not long["dropped"], [a for a in long["axes"] if a["categories"] > a["drawn"]]
    assert max(a["categories"] for a in long["axes"]) < 69          # a window of the 69 tokens, not all of them
    assert long["height"] <= short["height"] + ONE_SCREEN, (long["height"], short["height"])
