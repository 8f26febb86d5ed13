"""In a real browser: in presenter mode (present=1) at a projector's 1280x720, every chart text on each page's
first screen is at least 20 px (about 15 pt of a 540 pt slide: the back row), as Chromium draws it (computed
font-size, and the size after any transform), and none is drawn in the chart theme's grey. One browser session
walks every page, as a presenter would."""
import shutil

import pytest

from browser_utils import CHROMIUM, browser, streamlit_server
from chart_text import PAGES, VIEWPORT, measure, page_url

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM):
    pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium", pytrace=False)

PRESENTER_FLOOR_PX = 20
THEME_GREY = "rgb(128, 132, 149)"   # Streamlit's chart theme's ticks, legends and titles (#808495)


def test_presenter_mode_chart_text_is_projector_sized_on_every_page():
    too_small, greys, without_charts = {}, {}, []
    with streamlit_server() as base, browser() as chromium:
        context = chromium.new_context(viewport=VIEWPORT)
        page = context.new_page()
        for name in PAGES:
            texts = measure(page, page_url(base, name, present=True))
            errors = [e.inner_text()[:600] for e in page.locator('[data-testid="stException"]').all()]
            assert not errors, f"{name}: the page shows an exception: {errors}"
            if not texts:
                without_charts.append(name)
            small = [t for t in texts if min(t["px"], t["drawn"]) < PRESENTER_FLOOR_PX - 0.05]
            if small:
                too_small[name] = sorted(small, key=lambda t: t["drawn"])[:3]
            grey = [t for t in texts if t["fill"] == THEME_GREY]
            if grey:
                greys[name] = grey[:3]
        context.close()
    assert not too_small, f"chart text under {PRESENTER_FLOOR_PX} px in presenter mode: {too_small}"
    assert not greys, f"chart text in the theme's grey in presenter mode: {greys}"
    # every page opens with a picture (DESIGN.md, page layout): at least most have chart text on screen one
    assert len(without_charts) <= 2, f"no chart text on the first screen: {without_charts}"
