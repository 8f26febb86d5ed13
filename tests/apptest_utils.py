"""Run app.py on one page with AppTest, as a browser would after following a link."""
from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import numpy as np
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from viz.elements.nav import PAGES

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
    """The url_path viz/elements/nav.py's PAGES gives a page file."""
    for entry in PAGES:
        if entry.file == f"viz/pages/{page}":
            return entry.url
    raise ValueError(f"viz/pages/{page} is not in viz/elements/nav.py's PAGES")


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
    """The first chart on the page (a plotly chart, or a view drawn in the browser: viz/elements/browser_view.py)
    and how many words of text stand above it (expanders folded)."""
    words = 0

    def walk(node):
        nonlocal words
        for child in getattr(node, "children", {}).values():
            if child.type == "expander":
                continue
            if child.type == "plotly_chart" or (child.type == "bidi_component"
                                                and str(getattr(child, "key", "")).endswith("-view")):
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


# -- the explorer's browser-side view (viz/elements/browser_view.py): what it is sent, what it reports back -----------------
BROWSER_VIEW_KEY = "explorer-view"


def explorer_drawn(at) -> bool:
    """Whether the explorer's view is on the page (its maps drawn in the browser)."""
    return any(getattr(node, "key", None) == BROWSER_VIEW_KEY for node in at._tree)


def browser_view(at, key: str = BROWSER_VIEW_KEY):
    """The explorer view's element of the last run (key "explorer-head": the element of the run's head)."""
    found = [node for node in at._tree if getattr(node, "key", None) == key]
    assert len(found) == 1, f"{len(found)} elements {key} on the page"
    return found[0]


def browser_view_sent(at, where: str = "explorer") -> tuple[dict, dict]:
    """What the view was sent this run: its head (pick, csv…, from the head's element) with the body's line
    (sig, sentence, whole), and its body (every kind's figures). `where`: the page's view ("mh": multi-head's)."""
    raw = browser_view(at, f"{where}-view").proto.bytes
    end = raw.index(b"\n")
    head = json.loads(browser_view(at, f"{where}-head").proto.json)
    return {**json.loads(raw[:end]), **head}, json.loads(gzip.decompress(raw[end + 1:]))


def browser_says(at, state: dict | None = None, trigger: tuple[str, dict] | None = None, where: str = "explorer"):
    """Rerun as the browser does after the view's setStateValue (state: its whole state) or setTriggerValue."""
    states = at._tree.get_widget_states()
    view_id = browser_view(at, f"{where}-view").proto.id
    if state is not None:
        widget = states.widgets.add()
        widget.id, widget.json_value = view_id, json.dumps(state)
    if trigger is not None:
        widget = states.widgets.add()
        widget.id = _make_trigger_id(view_id, "events")
        widget.json_trigger_value = json.dumps([{"event": trigger[0], "value": trigger[1]}])
    return at._tree._runner._run(states, timeout=at.default_timeout)


def browser_view_whole(at, where: str = "explorer"):
    """Rerun as the browser does once it has drawn a new sentence's first screen: asking for the rest."""
    return browser_says(at, trigger=("whole", browser_view_sent(at, where)[0]["sentence"]), where=where)
