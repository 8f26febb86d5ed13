"""A page's browser-side view as a page element (Streamlit custom components v2: HTML, CSS and JS in the page, no
iframe, no build step): the attention explorer's, and a deck of a page's figures (the multi-head page: a kind and
a layer picked; the feed-forward page: a stack and a layer, and in its dropout view a kind, a layer and a head; the decoding page: a step; the step-through page: one of
its nine steps; the attention zoo: a kind, a layer and a head; the compare page's two sentences: a layer and a
head or their mean, and its two heads: head B; the head page's statistics: a kind, its picture every layer's; the training page: a snapshot, its maps' layer and
head).
One element and one JS for all; the body says which it holds. A sentence's data is sent once
(viz/figures/browser_view.py makes it); the picks (kind, layer, head; multi-head: kind, layer; feed-forward: its
kind is a stack, the URL's `stack`; decoding, step-through: step) are made in the browser
(viz/figures/browser_view.js), with no script run, and written to the URL there; the LayerNorm page's deck picks a
layer alone (its stack, norm and token are server widgets). Each page's view keeps its state
under a view value of its own (EXPLORER here, the multi-head page's MULTIHEAD, the feed-forward page's FFN_DECK and DROP_DECK, the
decoding page's DECODING, the step-through page's STEP_THROUGH, the LayerNorm page's LN_DECK, the zoo's ZOO_DECK,
the compare page's COMPARE_DECK and HEADS_DECK, the head page's STATS_DECK, the training page's TRAIN_DECK: <where>-view, -head, -csv, -whole). The run's head
(its pick, the teacher's, the image format, a CSV) goes in a second element, the same for
every view
(HEAD_JS: window.vizExplorerHead, window.vizExplorerListeners: the view the page shows listens): a class's poll
hands a pick to whatever view the page shows through it. What the server still hears of a pick, and why:

- a teacher's every pick (setStateValue): one run, which rebuilds nothing, writes it to the URL and the class's
  view is published after the page (viz/classroom/panel.after_page);
- a reader's last pick, once, when a run they caused otherwise (a new sentence) came back with the pick the
  server last knew: so the server's URL never takes the reader's pick back;
- a CSV asked for (setTriggerValue): the whole matrix of the pick (a deck: of the picture asked for), which the
  browser does not hold, made by the server and downloaded by the browser;
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

from viz.core import view
from viz.elements.ui import plotly_config
from viz.figures import browser_view as payloads

OWN = view.Own("viz.elements.browser_view")  # this module's own session values
EXPLORER = OWN.value("explorer")                  # explorer-view, -whole, -csv: the explorer's browser view
BROWSER_VIEW = OWN.value("browser-view")          # the browser-side view the last run drew: page, picks, head

HERE = Path(__file__).parents[1]       # viz/
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
    return st.components.v2.component(payloads.HEAD_ELEMENT, js=HEAD_JS, isolate_styles=False)


@cache
def _explorer_element():
    return st.components.v2.component(payloads.VIEW_ELEMENT, js=VIEW_JS.read_text(encoding="utf-8"),
                                      css=VIEW_CSS.read_text(encoding="utf-8"), isolate_styles=False)


URL_VALUES = {"kind": view.KIND, "layer": view.LAYER, "head": view.HEAD, "step": view.STEP}
EXPLORER_PICK = ("kind", "layer", "head")       # what the explorer's view picks
MULTIHEAD_PICK = ("kind", "layer")              # the multi-head page's (viz/pages/multi_head.py)
STEP_PICK = ("step",)                           # a step: the decoding page's
SNAPSHOT_PICK = ("step", "layer", "head")       # the training page's (viz/pages/training.py): a snapshot, and the
                                                # layer and head (or their mean) of its maps
HEAD_STEP_PICK = ("layer", "head", "step")      # the step-through page's: a head of the kind its server-side radio
                                                # picked, and one of its nine steps (of the query its select follows)
STACK_PICK = ("kind", "layer")                  # the feed-forward page's (viz/pages/ffn.py): its kind is a stack...
STACK_URL = (("kind", view.STACK),)             # ...which its URL names `stack` (urls: a pick's own URL values)
LAYER_PICK = ("layer",)                         # the LayerNorm page's (viz/pages/layernorm.py): a layer of the stack
                                                # its server-side radio picked (a deck with no kind row)
ZOO_PICK = ("kind", "layer", "head")            # the attention zoo's (viz/pages/zoo.py): a deck with a head picker
COMPARE_PICK = ("layer", "head")                # the compare page's two sentences (viz/pages/compare.py): a head of a
                                                # layer of the kind its server-side radio picked, or their mean
KIND_PICK = ("kind",)                           # the head page's statistics (viz/pages/heads.py): a kind; its picture
                                                # holds every layer (a deck with no layer select)


def url_values(urls: tuple[tuple[str, view.Value], ...] = ()) -> dict[str, view.Value]:
    """The view value each pick name is written to in the URL: URL_VALUES, but for a page's own (`urls`: the
    feed-forward page's kind is the URL's stack, STACK_URL)."""
    return {**URL_VALUES, **dict(urls)}


def url_names(names: tuple[str, ...], urls: tuple[tuple[str, view.Value], ...] = ()) -> dict[str, str]:
    """A deck's `url_names` (the browser writes each pick name to the URL under its name): {pick name: URL name}."""
    values = url_values(urls)
    return {name: values[name].name for name in names}


def browser_pick(state: Any, names: tuple[str, ...] = EXPLORER_PICK) -> dict | None:
    """A pick the browser reported ({kind, layer, head}, or the page's `names`: some of them, or the step), its
    types checked (the page checks its bounds when it reads the URL); None for anything else a client may send."""
    if not isinstance(state, dict) or ("kind" in names and not isinstance(state.get("kind"), str)):
        return None
    numbers = [state.get(name) for name in names if name != "kind"]
    if any(isinstance(v, bool) or not isinstance(v, int) for v in numbers):
        return None
    return {name: state[name] for name in names}


def csv_pick(state: Any, names: tuple[str, ...]) -> dict | None:
    """A CSV asked for: a pick, and (a page of several pictures) the picture's name."""
    pick = browser_pick(state, names)
    if pick is not None and isinstance(state.get("figure"), str):
        pick["figure"] = state["figure"]
    return pick


class _Where:
    """One page's view: its session values (view.Value `where`: <where>-view, -head, -csv, -whole), what it picks
    and the URL values its picks are written to (`urls`: url_values())."""

    def __init__(self, where: view.Value, names: tuple[str, ...], urls: tuple[tuple[str, view.Value], ...] = ()):
        self.where, self.names, self.urls = where, names, urls

    def reported(self, part: str) -> Any:
        state = view.get(self.where, "view") or {}
        return state.get(part) if hasattr(state, "get") else None

    def picked(self) -> None:
        """on_pick_change, before the run: the browser's pick into the URL, which the page reads."""
        _into_url(browser_pick(self.reported("pick"), self.names), self.urls)

    def csv_asked(self) -> None:
        """on_csv_change, before the run: the pick whose CSV the browser asked for, for the page to make; it is the
        pick the browser shows, so the URL takes it too (the run would otherwise take it back, and the view tell it
        again: a second run)."""
        pick = csv_pick(self.reported("csv"), self.names)
        if pick is not None:
            view.put(self.where, pick, "csv")
            _into_url(pick, self.urls)

    def whole_asked(self) -> None:
        """on_whole_change, before the run: the browser drew a new sentence's first screen and asks for the rest
        (the value: the sentence's sig)."""
        asked = self.reported("whole")
        if isinstance(asked, str):
            view.put(self.where, asked, "whole")


@cache
def _where(where: view.Value, names: tuple[str, ...], urls: tuple[tuple[str, view.Value], ...] = ()) -> _Where:
    return _Where(where, names, urls)


def _into_url(pick: dict | None, urls: tuple[tuple[str, view.Value], ...] = ()) -> None:
    if pick is not None:
        values = url_values(urls)
        view.write_url({values[name]: value for name, value in pick.items() if name in values})


def whole_asked(sentence: str, where: view.Value = EXPLORER) -> bool:
    """Whether this session's browser has asked for the whole body of `sentence` (then every run sends it)."""
    return view.get(where, "whole") == sentence


def csv_asked(where: view.Value = EXPLORER) -> dict | None:
    """The pick whose CSV this run is to send (asked once: taken)."""
    return view.pop(where, "csv")


def explorer_view(body: payloads.Body, pick: dict, about: dict, csv: Callable[[dict], dict] | None = None) -> None:
    """Draw the explorer's view: `body` (payloads.encode, built once per sentence and view), `about` it (the
    sentence's sig, whether it is whole: the browser keeps a whole body it holds), and this run's pick in an
    element of its own; `csv(pick)`: the file ({name, text}) of a pick whose CSV the browser asked for."""
    browser_view(EXPLORER, EXPLORER_PICK, body, pick, about, csv)


def browser_view(where: view.Value, names: tuple[str, ...], body: payloads.Body, pick: dict, about: dict,
                 csv: Callable[[dict], dict] | None = None, urls: tuple[tuple[str, view.Value], ...] = ()) -> None:
    """Draw a page's browser view (one element, one JS: the body says which pictures it holds; the explorer's, or
    a deck of a page's pictures, viz/figures/browser_view.py) under the session values of `where`, picking
    `names`, each written to the URL value URL_VALUES names, or `urls` (pick name, view value: STACK_URL; the
    body's url_names say the same to the browser: url_names()); the run's head (the pick, the teacher's, the
    image format, a CSV) goes in the head element every view shares: the one a class's poll hands a pick to
    (window.vizExplorerHead, HEAD_JS)."""
    extra = {"teach": bool(view.get(view.CLASS_SECRET)),
             "image_format": view.get(view.IMAGE_FORMAT, default="png").lower(),     # the sidebar's PNG or SVG
             "toolbar": plotly_config("")["displayModeBar"]}          # none in presenter mode or on a phone
    asked = csv_asked(where)
    if asked is not None and csv is not None:
        extra["csv"] = {**csv(asked), "id": "-".join(map(str, asked.values())) + f"-{id(asked)}"}
    on = _where(where, names, urls)
    _plotly_loader()(key="viz-plotly", height=0)
    _explorer_element()(key=view.key(where, "view"), data=payloads.framed(body, about),
                        on_pick_change=on.picked, on_csv_change=on.csv_asked, on_whole_change=on.whole_asked)
    head = payloads.head(pick, about, extra)
    _explorer_head_element()(key=view.key(where, "head"), data=head, height=0)
    view.put(BROWSER_VIEW, (view.get(view.PAGE), names, {k: v for k, v in head.items() if k != "csv"}, urls))


def page_runs() -> None:
    """A run of the page begins (viz/frame/presenter.run_page, after the class's bar): no browser view is drawn
    yet. A page that draws one in some of its parts only (the feed-forward page's stack x layer and its dropout
    view's kind x layer, not its smoothing view) leaves none recorded when it does not: a follower's change of a server-side picker is then a switch,
    not a pick handed to a view that is not on the screen."""
    view.put(BROWSER_VIEW, None)


def pick_change(changed: set[str], query: dict[str, str]) -> dict | None:
    """The pick of a class's published view `query` (the page's names of kind, layer, head), when it differs from
    this screen's in the values `changed` only and those are picks the view this page's last run drew makes in the
    browser; None otherwise (a whole run shows the change)."""
    shown = view.get(BROWSER_VIEW)
    if not changed or not shown or shown[0] != view.get(view.PAGE):
        return None
    page, names, _, urls = shown
    values = url_values(urls)
    if not changed <= {values[name].name for name in names}:
        return None
    published = view.View.from_query(page, query)
    return {name: published.get(values[name]) for name in names}


def hand_pick(pick: dict, poll: bool) -> None:
    """Show `pick` (pick_change's) with no whole run: the URL takes it (the page's next run draws it), and in a
    poll (a fragment run: nothing rebuilt) the head element every view shares, drawn again in the poll's fragment,
    hands it to the view this page's last run drew."""
    page, names, head, urls = view.get(BROWSER_VIEW)
    _into_url(pick, urls)
    if poll:
        head = {**head, "pick": pick}
        view.put(BROWSER_VIEW, (page, names, head, urls))
        _explorer_head_element()(key=view.key(view.CLASS_FOLLOWING, "head"), data=head, height=0)
