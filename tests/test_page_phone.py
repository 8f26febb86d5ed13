"""Every page on a phone (AppTest, the browser saying "Mobi"): the charts are planned for a phone's column
(viz/figures/style.PHONE) and no chart title runs past its figure's width (plotly cuts it off: the explorer's
grid title lost its last words on a 390 px screen)."""
import re

import pytest

from apptest_utils import browser_view_sent, browser_view_whole, explorer_drawn, figure, no_exceptions, run_page
from long_text import SENTENCES
from viz.elements import ui
from viz.figures.style import NORMAL, PHONE
from viz.elements.nav import PAGES

PHONE_COLUMN_PX = 390 - 2 * 16          # a 390 px screen less Streamlit's side padding


@pytest.fixture
def phone(monkeypatch):
    """Every module's on_phone answers True (those that imported the function hold their own name for it)."""
    import sys
    real = ui.on_phone
    for module in [m for name, m in list(sys.modules.items()) if name.startswith("viz")]:
        if getattr(module, "on_phone", None) is real:
            monkeypatch.setattr(module, "on_phone", lambda: True)


def title_lines(fig: dict) -> list[str]:
    title = fig["layout"].get("title") or {}
    text = title.get("text") if isinstance(title, dict) else None
    return [re.sub(r"<[^>]+>", "", line) for line in str(text).split("<br>")] if text else []


@pytest.mark.parametrize("page", [p.file.rsplit("/", 1)[1] for p in PAGES])
@pytest.mark.parametrize("words", ["9", "40"])
def test_every_page_on_a_phone_keeps_its_titles_within_the_column(phone, page, words):
    at = run_page(page, text=SENTENCES[words])
    no_exceptions(at)
    for i, fig in enumerate([figure(at, i) for i in range(len(at.get("plotly_chart")))] + view_figures(at)):
        width = min(fig["layout"].get("width") or PHONE_COLUMN_PX, PHONE_COLUMN_PX)
        for line in title_lines(fig):
            assert PHONE.text_px(line, "title") <= width, (i, line)


def view_figures(at) -> list[dict]:
    """The explorer view's figures as the browser draws them: each kind's grid and lines, its map with each pick's
    title."""
    if not explorer_drawn(at):
        return []
    found = []
    for part in browser_view_sent(browser_view_whole(at))[1]["kinds"].values():
        found += [part["grid"], *(lines for lines in part["lines"] if lines)]
        found += [{**part["map"], "layout": {**part["map"]["layout"], "title": {"text": title}}}
                  for title in part["titles"]]
    return found


def test_a_phone_gets_the_phone_type_scale_and_a_wrapped_grid_title(phone):
    at = run_page("explorer.py")
    grid = browser_view_sent(at)[1]["kinds"]["encoder"]["grid"]
    assert grid["layout"]["title"]["font"]["size"] == PHONE.title
    lines = title_lines(grid)
    assert len(lines) == 2 and NORMAL.text_px(" ".join(lines), "title") > PHONE_COLUMN_PX   # it would not fit


def _first_kinds(node, found: list) -> list:
    """The page's pictures and pickers in order: a chart, or a browser-side view's pictures (its element,
    "<where>-view": step-through's steps are a deck, issue 44) counted as a chart."""
    for child in getattr(node, "children", {}).values():
        if child.type in ("plotly_chart", "selectbox", "radio"):
            found.append(child.type)
        elif child.type == "bidi_component" and str(getattr(child, "key", "")).endswith("-view"):
            found.append("plotly_chart")
        _first_kinds(child, found)
    return found


@pytest.mark.parametrize("page", ["step_through.py", "zoo.py", "compare.py"])
def test_on_a_phone_a_page_shows_its_picture_before_its_pickers(phone, page):
    """Issue 46, item 8: the first screen of step-through on a phone was only pickers; the zoo's too, in 中文,
    and the comparison's with a 40-word sentence."""
    at = run_page(page, text=SENTENCES["9"])
    no_exceptions(at)
    assert _first_kinds(at.main, [])[0] == "plotly_chart"


def test_on_a_phone_start_and_the_maps_label_every_token_of_a_9_word_sentence(phone):
    """Issue 46, item 8: Start showed 2 of a 9-word sentence's source columns on a phone, heatmaps 6 of its tokens."""
    from viz.figures.attention import keys_that_fit, translation_columns
    at = run_page("home.py", text=SENTENCES["9"])
    no_exceptions(at)
    n_source = len(at.session_state["_ctx"].trace.meta["src_tokens"])
    assert len(figure(at, 0)["data"][0]["x"]) == n_source <= translation_columns(PHONE)
    assert keys_that_fit(PHONE_COLUMN_PX, PHONE) >= n_source


def test_presenter_mode_on_a_phone_leaves_out_the_model_map(phone):
    """A phone in presenter mode drew the 'you are here' model map with its labels over one another."""
    at = run_page("layernorm.py", text=SENTENCES["9"], present=1)
    no_exceptions(at)
    assert not any(c.proto.id and "presenter-map" in c.proto.id for c in at.get("plotly_chart"))
