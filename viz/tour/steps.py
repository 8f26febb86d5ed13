"""The guided tour's steps in the order of the notes, and the views presenter mode walks in that order (no Streamlit
here)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class Link:
    page: str                    # file under viz/pages; its label is the step's message link<i>
    params: dict = field(default_factory=dict)   # the page's own URL parameters (model/text are added)


@dataclass(frozen=True)
class TourStep:
    """One step: its words are in viz/locales/*.json under tour.<key>: .title, .text (2-3 sentences, our own
    words), .reading (how to read its picture), .link0, .link1… (one per link); its picture is
    viz/tour/pictures.py STEP_FIGURES[key]."""
    key: str
    formula: str                 # LaTeX
    links: tuple[Link, ...]

    def message_key(self, part: str) -> str:
        """The catalogue key of one of this step's texts: "title", "text", "reading" or "link<i>"."""
        return f"tour.{self.key}.{part}"


# The order of the notes on the paper (issue 46): before the Transformer (the RNN's bottleneck, Bahdanau and Luong),
# Q, K, V and scaled dot-product, multi-head and W^O, tokens and positional encoding, residual and LayerNorm, the
# feed-forward sublayer, encoder/decoder with the causal mask and cross-attention, teacher forcing vs decoding, label
# smoothing and dropout; then what the heads do and a model learning live. The tour, presenter mode's Next
# (lesson_stops) and the lesson file (viz/tour/lesson.py) all walk it.
TOUR = (
    TourStep("rnn", r"e_{ij}=v^\top\tanh(W s_{i-1}+U h_j),\quad a_{ij}=\mathrm{softmax}_j(e_{ij}),\quad "
             r"c_i=\sum_j a_{ij}\,h_j", (Link("rnn.py"),)),
    TourStep("zoo", r"q^\top k,\quad \frac{q^\top k}{\sqrt d},\quad q^\top Wk,\quad v^\top\tanh(W_1q+W_2k)",
             (Link("zoo.py", {"source": "model", "score": "additive"}),)),
    TourStep("one_head", r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V",
             (Link("step_through.py", {"kind": "encoder", "layer": "0", "head": "0"}),)),
    TourStep("multi_head",
             r"\mathrm{MultiHead}(X)=\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O,\quad "
             r"\mathrm{head}_i=\mathrm{Attention}(XW_i^Q,XW_i^K,XW_i^V)",
             (Link("multi_head.py", {"kind": "encoder", "layer": "0"}), Link("explorer.py", {"kind": "encoder"}))),
    TourStep("tokens", r"x_i=\sqrt{d_{\mathrm{model}}}\;E[\mathrm{token}_i]", (Link("positional.py"),)),
    TourStep("positional",
             r"PE_{(pos,2i)}=\sin\frac{pos}{10000^{2i/d}},\quad PE_{(pos,2i+1)}=\cos\frac{pos}{10000^{2i/d}}",
             (Link("positional.py", {"offset": "2"}),)),
    TourStep("add_norm",
             r"y=\mathrm{LayerNorm}\big(x+\mathrm{Sublayer}(x)\big),\quad "
             r"\mathrm{LayerNorm}(z)=\gamma\odot\frac{z-\mu}{\sigma}+\beta",
             (Link("layernorm.py", {"stack": "encoder", "layer": "0", "norm": "norm_attn"}),)),
    TourStep("ffn", r"\mathrm{FFN}(x)=\max(0,\ xW_1+b_1)\,W_2+b_2",
             (Link("ffn.py", {"view": "ffn", "stack": "encoder", "layer": "0"}),)),
    TourStep("decoder", r"\mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}+M\Big),\quad M_{ts}=-\infty\ \ (s>t)",
             (Link("explorer.py", {"kind": "decoder"}), Link("explorer.py", {"kind": "cross"}))),
    TourStep("decoding", r"y_t=\arg\max_{y}\;p_\theta(y\mid y_{<t},x)", (Link("decoding.py", {"method": "greedy"}),)),
    TourStep("regularize",
             r"q_v=(1-\varepsilon)\,[v=y]+\frac{\varepsilon}{V},\quad \mathcal{L}=-\sum_v q_v\log p_v,\quad "
             r"\tilde a=\frac{m\odot a}{1-p}",
             (Link("ffn.py", {"view": "smoothing"}), Link("ffn.py", {"view": "dropout"}))),
    TourStep("heads", r"H(a_t)=-\sum_s a_{ts}\log a_{ts}", (Link("heads.py", {"tab": "stats"}),)),
    TourStep("learn", r"\theta\leftarrow\theta-\eta\,\nabla_\theta\Big(-\sum_t\log p_\theta(y_t\mid y_{<t},x)\Big)",
             (Link("training.py", {"task": "reverse", "size": "small", "steps": "800"}),)),
)


def lesson_stops(pages: list[str]) -> list[Link]:
    """The views presenter mode's Previous/Next walk (pages: files under viz/pages that exist): the start page and
    the tour, then every view the tour's steps link, in the tour's order, then the pages no step links, in their
    menu order. A page linked twice in a row is one stop, the first view that names one (the tokens and positional
    steps' positional page; the decoder's masked self-attention then cross-attention): a link to the page on
    view keeps its pickers' values, so Next would not move."""
    stops: list[Link] = [Link(p) for p in ("home.py", "tour.py") if p in pages]
    for link in (link for step in TOUR for link in step.links if link.page in pages):
        if link in stops:
            continue
        if stops and stops[-1].page == link.page:     # one page's views in a row: one stop, the first that names one
            stops[-1] = stops[-1] if stops[-1].params or not link.params else link
            continue
        stops.append(link)
    linked = {stop.page for stop in stops}
    return stops + [Link(p) for p in pages if p not in linked]


def stop_at(stops: list[Link], page: str, params: Mapping[str, object]) -> int | None:
    """Where a page's view is among the stops: at the tour's first link of that page whose own values the view's
    URL holds, the page's stop at or before it in the tour's order (a view merged into the stop before it, such as
    the decoder's cross-attention or the dropout view, is at that stop); else the page's first stop (the teacher
    moved to another head); None for a page that is no stop."""
    mine = [i for i, stop in enumerate(stops) if stop.page == page]
    if not mine:
        return None
    linked = [link for step in TOUR for link in step.links]
    place = lambda link: linked.index(link) if link in linked else len(linked)   # noqa: E731
    shown = [link for link in linked if link.page == page and link.params
             and all(str(params.get(name)) == value for name, value in link.params.items())]
    if not shown:
        return mine[0]
    before = [i for i in mine if place(stops[i]) <= place(shown[0])]
    return before[-1] if before else mine[0]
