"""Every page on a phone (AppTest, the browser saying "Mobi"): the charts are planned for a phone's column
(viz/figures/style.PHONE) and no chart title runs past its figure's width (plotly cuts it off: the explorer's
grid title lost its last words on a 390 px screen)."""
import re

import pytest

from apptest_utils import browser_view_sent, browser_view_whole, explorer_drawn, figure, no_exceptions, run_page
from long_text import SENTENCES
from viz import ui
from viz.figures.style import NORMAL, PHONE
from viz.nav import PAGES

PHONE_COLUMN_PX = 390 - 2 * 16          # a 390 px screen less Streamlit's side padding


@pytest.fixture
def phone(monkeypatch):
    monkeypatch.setattr(ui, "on_phone", lambda: True)


def title_lines(fig: dict) -> list[str]:
    title = fig["layout"].get("title") or {}
    text = title.get("text") if isinstance(title, dict) else None
    return [re.sub(r"<[^>]+>", "", line) for line in str(text).split("<br>")] if text else []


@pytest.mark.parametrize("page", [p.file.rsplit("/", 1)[1] for p in PAGES])
@pytest.mark.parametrize("words", ["9", "40"])
def test_every_page_on_a_phone_keeps_its_titles_within_the_column(phone, page, words):
    at = run_page(page, text=SENTENCES[words])
    no_exceptions(at)
    for fig in [figure(at, i) for i in range(len(at.get("plotly_chart")))] + view_figures(at):
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
