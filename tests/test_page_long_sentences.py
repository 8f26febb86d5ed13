"""Long sentences on the step-through, positional, LayerNorm and attribution pages (AppTest, the shipped model):
with a 40-word sentence (69 tokens) no chart puts more tokens along an axis than it labels legibly (a window
instead), and the charts together are at most a screen taller than with the 9-word sentence."""
import re
from pathlib import Path

import pytest

from apptest_utils import browser_view_sent, figure, no_exceptions, run_page
from long_text import SENTENCES, sentence_params

SCREEN_PX = 720
MOST_LABELS = 30       # the widest window any of these charts shows in normal mode (positional norms: 30 tokens)
PAGES = [("step_through.py", {}), ("step_through.py", {"step": 0}), ("step_through.py", {"kind": "cross"}),
         ("positional.py", {}), ("layernorm.py", {}), ("layernorm.py", {"stack": "decoder"}),
         ("attribution.py", {}), ("attribution.py", {"view": "source"}), ("attribution.py", {"view": "contrastive"})]


def axis_labels(fig: dict) -> dict[str, int]:
    """Per axis of a chart ("x", "y2"...): how many labels it draws: the ticks it was given (tickmode array), else
    the distinct categories its traces put on it (every one a label on a category axis)."""
    layout, counts = fig["layout"], {}
    for trace in fig["data"]:
        for side in ("x", "y"):
            values, axis = trace.get(side), trace.get(f"{side}axis", side)
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values if v is not None):
                continue
            settings = layout.get(axis.replace(side, f"{side}axis", 1), {})
            n = len(settings.get("tickvals", [])) if settings.get("tickmode") == "array" else len(set(values))
            counts[axis] = max(counts.get(axis, 0), n)
    return counts


def charts(at) -> list[dict]:
    """The page's charts: Streamlit's, and the deck's for the pick shown (drawn in the browser: the step-through's
    step, the LayerNorm page's layer)."""
    return [figure(at, i) for i in range(len(at.get("plotly_chart")))] + [
        fig for fig in deck_shown(at)["figures"].values()]


def deck_shown(at) -> dict:
    """The deck's part of the pick shown (its figures, its words: the step-through's step, the LayerNorm page's
    layer, the zoo's head, compare's two sentences, compare's head B over head A's part every pick shows, ""), or
    nothing on another page."""
    for where in ("step", "ln-deck", "zoo-deck", "cmp-deck", "cmp-heads-deck"):
        if any(getattr(node, "key", None) == f"{where}-view" for node in at._tree):
            head, body = browser_view_sent(at, where)
            every = body["picks"].get("", {"figures": {}, "texts": {}})
            own = body["picks"][":".join(str(value) for value in head["pick"].values())]
            return {**own, "figures": {**every["figures"], **own["figures"]}, "texts": {**every["texts"], **own["texts"]}}
    return {"figures": {}, "texts": {}}


@pytest.mark.parametrize("page,params", PAGES, ids=lambda p: str(p))
def test_a_long_sentence_keeps_labels_legible_and_the_page_short(page, params):
    short = run_page(page, text=SENTENCES["9"], **params)
    no_exceptions(short)
    at = run_page(page, text=SENTENCES["40"], **params)
    no_exceptions(at)
    crowded = {f"{i}:{axis}": n for i, fig in enumerate(charts(at)) for axis, n in axis_labels(fig).items()
               if n > MOST_LABELS}
    assert not crowded, f"axes with more labels than fit (chart:axis -> labels): {crowded}"
    tall, reference = (sum(f["layout"].get("height", 450) for f in charts(a)) for a in (at, short))
    assert tall <= reference + SCREEN_PX, (tall, reference)
    said = [str(s.label) for s in at.slider] + [str(c.value) for c in at.caption] + list(deck_shown(at)["texts"].values())
    assert any(text.startswith("A long sentence") for text in said), "a window is said, not silent"


def test_the_ffn_caption_names_a_few_firing_tokens_of_a_512_token_sentence():
    at = run_page("ffn.py", **sentence_params("512"))
    no_exceptions(at)
    _, body = browser_view_sent(at, "ffn-deck")                  # the feed-forward view's captions: its deck's
    longest = max((text for part in body["picks"].values() for text in part["texts"].values()), key=len)
    assert len(longest) < 900, longest[:300]                     # every firing token of 512 ran to lines of them
    assert any(str(s.label).startswith("A long sentence") for s in at.slider)       # the window: the server's
    units = next(iter(body["picks"].values()))["figures"]["units"]["data"][0]
    assert len(units["y"]) <= 30                                  # the picture shows the window's tokens


# The zoo's and compare's maps: a 40-word sentence through a window of tokens on both axes (their 70x70 maps
# smeared the key labels into one another and silently drew every third or fourth row label). The zoo's output
# map runs along the head's 32 value dimensions, not tokens: its x axis is not counted.
WINDOWED = [("zoo.py", {}), ("zoo.py", {"kind": "cross", "weighting": "local"}),
            ("zoo.py", {"kind": "decoder", "weighting": "local", "present": 1}), ("compare.py", {}),
            ("compare.py", {"mode": "heads", "kind": "cross", "present": 1})]


@pytest.mark.parametrize("page,params", WINDOWED, ids=lambda p: str(p))
def test_a_long_sentence_shows_the_maps_through_a_window(page, params):
    at = run_page(page, text=SENTENCES["40"], **params)
    no_exceptions(at)
    named = [*((chart.key, figure(at, i)) for i, chart in enumerate(at.get("plotly_chart"))),
             *((f"deck-{name}", fig) for name, fig in deck_shown(at)["figures"].items())]     # the browser's maps
    counts = {f"{key}:{axis}": n for key, fig in named
              for axis, n in axis_labels(fig).items() if not (key in ("zoo-output", "deck-output") and axis == "x")}
    assert counts and max(counts.values()) <= 20, counts
    assert any(str(s.label).startswith("A long sentence") for s in at.slider), [s.label for s in at.slider]


def test_the_decoding_step_text_wraps_a_long_output():
    """The step's "decoder input : <s> ▁H o y …" line of a 40-word sentence ran past the right edge of a projector
    (a code block scrolls sideways): its lines wrap."""
    at = run_page("decoding.py", text=SENTENCES["40"], step=20, present=1)
    no_exceptions(at)
    _, body = browser_view_sent(at, "decoding")             # drawn in the browser: a block of code that wraps
    code = body["picks"]["20"]["texts"]["step-code"]
    assert code.startswith("decoder input : <s>") and len(code.split("\n")[0]) > 100
    assert {"type": "code", "id": "step-code"} in body["blocks"]
    css = (Path(__file__).resolve().parents[1] / "viz" / "figures" / "browser_view.css").read_text(encoding="utf-8")
    assert re.search(r"\.vz-code \{[^}]*white-space: pre-wrap", css)


def test_a_table_s_token_headers_are_whole():
    """Issue 46, item 5: step-through's row of numbers under a 40-word sentence cut its token headers to "0 <moder"
    and "14 ▁frien": st.dataframe sizes a column by its numbers. data_table gives a column whose header is wider than
    its values the header's width; others keep Streamlit's own sizing and a caller's config."""
    import pandas as pd

    from viz.figures.style import NORMAL
    from viz.elements.ui import whole_headers
    row = pd.DataFrame([[0.0123, 0.5, 7.25]], index=["3 ▁sat"], columns=["0 <modern>", "14 ▁friend", "x"])
    config = whole_headers(row, {"x": {"width": "small"}})
    for column in ("0 <modern>", "14 ▁friend"):
        assert config[column]["width"] >= NORMAL.text_px(column, "tick") + 16
    assert config["x"] == {"width": "small"}
    wide_values = pd.DataFrame({"kind": ["attends to the previous token"]})
    assert whole_headers(wide_values) == {}
