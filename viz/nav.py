"""The app's pages in teaching order, and the navigation menu built from them."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]

PAGES = [  # (file, title, url path, icon) in teaching order; the first is the default, served at /
    ("viz/pages/home.py", "Start here", "home", ":material/home:"),
    ("viz/pages/explorer.py", "Attention explorer", "explorer", ":material/grid_view:"),
    ("viz/pages/step_through.py", "Step-through: one head", "step", ":material/calculate:"),
    ("viz/pages/multi_head.py", "Multi-head assembly", "multihead", ":material/call_merge:"),
    ("viz/pages/positional.py", "Positional encoding", "positional", ":material/waves:"),
    ("viz/pages/layernorm.py", "LayerNorm & residual", "layernorm", ":material/equalizer:"),
    ("viz/pages/decoding.py", "Decoding", "decoding", ":material/play_arrow:"),
    ("viz/pages/heads.py", "Head analysis", "heads", ":material/analytics:"),
    ("viz/pages/zoo.py", "Attention zoo", "zoo", ":material/history_edu:"),
    ("viz/pages/compare.py", "Compare", "compare", ":material/compare:"),
    ("viz/pages/training.py", "Live toy training", "training", ":material/model_training:"),
    ("viz/pages/tour.py", "Guided tour", "tour", ":material/school:"),
    ("viz/pages/about.py", "About the model", "about", ":material/info:"),
]


def navigation():
    pages = [st.Page(f, title=t, url_path=u, icon=i, default=(u == "home"))
             for f, t, u, i in PAGES if (ROOT / f).is_file()]
    return st.navigation(pages)


# A projector shows 1280x720: Streamlit's default 6rem above the title and its 2.75rem h1 push every
# picture toward the fold. Less of both, on every page.
COMPACT_CSS = """<style>
[data-testid=stMainBlockContainer] { padding-top: 2.2rem; }
h1 { font-size: 2.1rem !important; padding-top: 0 !important; }
</style>"""


def compact_layout() -> None:
    st.html(COMPACT_CSS)
