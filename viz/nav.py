"""The app's pages in teaching order, and the navigation menu built from them."""
from __future__ import annotations

import streamlit as st

from viz import ROOT
from viz.i18n import t

PAGES = [  # (file, English title, url path, icon, menu section) in teaching order; the first is served at /
    # (the menu shows the titles of viz/locales: nav.page.<url path>, nav.section.<section>)
    ("viz/pages/home.py", "Start here", "home", ":material/home:", "Start"),
    ("viz/pages/explorer.py", "Attention explorer", "explorer", ":material/grid_view:", "Attention"),
    ("viz/pages/step_through.py", "Step-through: one head", "step", ":material/calculate:", "Attention"),
    ("viz/pages/multi_head.py", "Multi-head assembly", "multihead", ":material/call_merge:", "Attention"),
    ("viz/pages/positional.py", "Positional encoding", "positional", ":material/waves:", "Inside a layer"),
    ("viz/pages/layernorm.py", "LayerNorm & residual", "layernorm", ":material/equalizer:", "Inside a layer"),
    ("viz/pages/decoding.py", "Decoding", "decoding", ":material/play_arrow:", "Output"),
    ("viz/pages/heads.py", "Head analysis", "heads", ":material/analytics:", "What heads do"),
    ("viz/pages/zoo.py", "Attention zoo", "zoo", ":material/history_edu:", "Attention"),
    ("viz/pages/compare.py", "Compare", "compare", ":material/compare:", "What heads do"),
    ("viz/pages/attribution.py", "Attribution", "attribution", ":material/insights:", "What heads do"),
    ("viz/pages/training.py", "Live toy training", "training", ":material/model_training:", "The model"),
    ("viz/pages/tour.py", "Guided tour", "tour", ":material/school:", "Start"),
    ("viz/pages/about.py", "About the model", "about", ":material/info:", "The model"),
]


def navigation():
    """The menu in a bar above the page, grouped by section: every page one click away (a sidebar menu
    hid three of them behind "View more"), and the sidebar keeps the sentence and its translation in view."""
    sections: dict[str, list] = {}
    for file, _title, url, icon, section in PAGES:
        if (ROOT / file).is_file():
            sections.setdefault(t(f"nav.section.{section}"), []).append(
                st.Page(file, title=t(f"nav.page.{url}"), url_path=url, icon=icon, default=(url == "home")))
    return st.navigation(sections, position="top")


# A projector shows 1280x720: Streamlit's default 6rem above the title and its 2.75rem h1 push every
# picture toward the fold. Less of both, on every page.
COMPACT_CSS = """<style>
[data-testid=stMainBlockContainer] { padding-top: 4.2rem; }   /* below the top menu bar */
h1 { font-size: 2.1rem !important; padding-top: 0 !important; }
</style>"""


def compact_layout() -> None:
    st.html(COMPACT_CSS)
