"""The attention explorer's browser-side view as a page element (Streamlit custom components v2: HTML, CSS and JS
in the page, no iframe, no build step). A sentence's data is sent once (viz/figures/browser_view.py makes it);
the kind, layer and head are picked in the browser (viz/figures/browser_view.js), with no script run, and
written to the URL there. What the server still hears of a pick, and why:

- a teacher's every pick (setStateValue): one run, which rebuilds nothing, writes it to the URL and the class's
  view is published after the page (viz/classroom/panel.after_page);
- a reader's last pick, once, when a run they caused otherwise (a new sentence) came back with the pick the
  server last knew: so the server's URL never takes the reader's pick back;
- a CSV asked for (setTriggerValue): the whole matrix of the pick, which the browser does not hold, made by
  the server and downloaded by the browser;
- the rest of a new sentence (setTriggerValue "whole"): its first run sends what the first screen shows (the
  picked kind, the picked layer's lines), the view draws it and asks for every kind and layer: one more run,
  after the picture is up.

plotly.js is the vendored cartesian bundle (viz/vendor, also the offline lesson's), sent in an element of its
own that never changes: Streamlit's message cache sends it to a browser once a session.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from viz import view
from viz.ui import plotly_config
from viz.figures import browser_view as payloads

HERE = Path(__file__).parent
PLOTLY_BUNDLE = HERE / "vendor" / "plotly-cartesian.min.js"
VIEW_JS, VIEW_CSS = HERE / "figures" / "browser_view.js", HERE / "figures" / "browser_view.css"


@cache
def _plotly_loader():
    """An element whose module defines window.Plotly once a page (a block: the bundle's top level sets it)."""
    bundle = PLOTLY_BUNDLE.read_text(encoding="utf-8")
    return st.components.v2.component("viz_plotly", js="if (!window.Plotly) {\n" + bundle + "\n}\n"
                                      "export default function () {}\n", isolate_styles=False)


# The head of each run: the view's own module listens for it (window: two elements' modules share nothing else)
HEAD_JS = """export default function ({ data }) {
  window.vizExplorerHead = data;
  for (const listener of window.vizExplorerListeners || []) listener(data);
}
"""


@cache
def _explorer_head_element():
    return st.components.v2.component("viz_attention_explorer_head", js=HEAD_JS, isolate_styles=False)


@cache
def _explorer_element():
    return st.components.v2.component("viz_attention_explorer", js=VIEW_JS.read_text(encoding="utf-8"),
                                      css=VIEW_CSS.read_text(encoding="utf-8"), isolate_styles=False)


def browser_pick(state: Any) -> dict | None:
    """A pick the browser reported ({kind, layer, head}), its types checked (the page checks its bounds when it
    reads the URL); None for anything else a client may send."""
    if not isinstance(state, dict):
        return None
    kind, layer, head = state.get("kind"), state.get("layer"), state.get("head")
    if not isinstance(kind, str) or any(isinstance(v, bool) or not isinstance(v, int) for v in (layer, head)):
        return None
    return {"kind": kind, "layer": layer, "head": head}


def _reported(part: str) -> dict | None:
    """The browser's `part` (pick, csv) of the explorer element's state, checked."""
    state = view.get(view.EXPLORER, "view") or {}
    try:
        return browser_pick(state.get(part))
    except AttributeError:
        return None


def _picked() -> None:
    """on_pick_change, before the run: the browser's pick into the URL, which the page reads."""
    _into_url(_reported("pick"))


def _into_url(pick: dict | None) -> None:
    if pick is not None:
        view.write_url({view.KIND: pick["kind"], view.LAYER: pick["layer"], view.HEAD: pick["head"]})


def _csv_asked() -> None:
    """on_csv_change, before the run: the pick whose CSV the browser asked for, for the page to make; it is the
    pick the browser shows, so the URL takes it too (the run would otherwise take it back, and the view tell it
    again: a second run)."""
    pick = _reported("csv")
    if pick is not None:
        view.put(view.EXPLORER, pick, "csv")
        _into_url(pick)


def _whole_asked() -> None:
    """on_whole_change, before the run: the browser drew a new sentence's first screen and asks for the rest
    (the value: the sentence's sig)."""
    state = view.get(view.EXPLORER, "view") or {}
    asked = state.get("whole") if hasattr(state, "get") else None
    if isinstance(asked, str):
        view.put(view.EXPLORER, asked, "whole")


def whole_asked(sentence: str) -> bool:
    """Whether this session's browser has asked for the whole body of `sentence` (then every run sends it)."""
    return view.get(view.EXPLORER, "whole") == sentence


def csv_asked() -> dict | None:
    """The pick whose CSV this run is to send (asked once: taken)."""
    return view.pop(view.EXPLORER, "csv")


def explorer_view(body: payloads.Body, pick: dict, about: dict, csv: Callable[[dict], dict] | None = None) -> None:
    """Draw the explorer's view: `body` (payloads.encode, built once per sentence and view), `about` it (the
    sentence's sig, whether it is whole: the browser keeps a whole body it holds), and this run's pick in an
    element of its own; `csv(pick)`: the file ({name, text}) of a pick whose CSV the browser asked for."""
    extra = {"teach": bool(view.get(view.CLASS_SECRET)),
             "image_format": view.get(view.IMAGE_FORMAT, default="png").lower(),     # the sidebar's PNG or SVG
             "toolbar": plotly_config("")["displayModeBar"]}          # none in presenter mode or on a phone
    asked = csv_asked()
    if asked is not None and csv is not None:
        extra["csv"] = {**csv(asked), "id": f"{asked['kind']}-{asked['layer']}-{asked['head']}-{id(asked)}"}
    _plotly_loader()(key="viz-plotly", height=0)
    _explorer_element()(key=view.key(view.EXPLORER, "view"), data=payloads.framed(body, about),
                        on_pick_change=_picked, on_csv_change=_csv_asked, on_whole_change=_whole_asked)
    _explorer_head_element()(key=view.key(view.EXPLORER, "head"), data=payloads.head(pick, about, extra), height=0)
