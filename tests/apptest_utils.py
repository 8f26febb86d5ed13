"""Run app.py on one page with AppTest, as a browser would after following a link."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from viz.nav import PAGES

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT = 180  # the first run imports torch and loads the model


def run_page(page: str | None = None, **params) -> AppTest:
    """page: a file under viz/pages (e.g. "explorer.py"); params: URL query parameters."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = str(value)
    if page:
        # st.Page identifies a page by the hash of its url_path; before a first run AppTest.switch_page
        # can only guess from the file name (and silently stays on the default page). Open the page
        # directly, as a deep link does.
        at._page_hash = calc_hash(url_path(page))
    return at.run()


def url_path(page: str) -> str:
    """The url_path viz/nav.py's PAGES gives a page file."""
    for entry in PAGES:
        if entry.file == f"viz/pages/{page}":
            return entry.url
    raise ValueError(f"viz/pages/{page} is not in viz/nav.py's PAGES")


def texts(at: AppTest) -> str:
    """Everything the page wrote as text, for asserting on messages."""
    parts = []
    for kind in ("markdown", "caption", "text", "info", "warning", "error", "success", "title", "header",
                 "subheader", "latex", "code"):
        parts.extend(str(e.value) for e in at.get(kind))
    return "\n".join(parts)


def html_bodies(at: AppTest) -> str:
    """What the page gave st.html (the model card, style blocks), for asserting on the card's words."""
    return "\n".join(str(e.proto.body) for e in at.get("html"))


def no_exceptions(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


TEXT_KINDS = {"markdown", "caption", "latex", "info", "code", "subheader", "header"}


def first_chart(at):
    """The first chart on the page and how many words of text stand above it (expanders folded)."""
    words = 0

    def walk(node):
        nonlocal words
        for child in getattr(node, "children", {}).values():
            if child.type == "expander":
                continue
            if child.type == "plotly_chart":
                return child
            if child.type in TEXT_KINDS:
                words += len(str(child.value).split())
            found = walk(child)
            if found is not None:
                return found
        return None

    return walk(at.main), words


def figure(at, index=0) -> dict:
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def z_of(at, index=0) -> np.ndarray:
    """The z matrix of a chart; plotly sends numpy arrays as base64 typed arrays."""
    z = figure(at, index)["data"][0]["z"]
    if isinstance(z, dict):
        shape = [int(n) for n in str(z["shape"]).split(",")]
        return np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(shape).astype(float)
    return np.array(z, dtype=float)
