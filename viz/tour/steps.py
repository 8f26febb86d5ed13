"""The guided tour's steps in teaching order, and the page order presenter mode walks (no Streamlit here)."""
from __future__ import annotations

from dataclasses import dataclass, field


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


TOUR = (
    TourStep("rnn", r"e_{ij}=v^\top\tanh(W s_{i-1}+U h_j),\quad a_{ij}=\mathrm{softmax}_j(e_{ij}),\quad "
             r"c_i=\sum_j a_{ij}\,h_j", (Link("rnn.py"),)),
    TourStep("tokens", r"x_i=\sqrt{d_{\mathrm{model}}}\;E[\mathrm{token}_i]", (Link("positional.py"),)),
    TourStep("positional",
             r"PE_{(pos,2i)}=\sin\frac{pos}{10000^{2i/d}},\quad PE_{(pos,2i+1)}=\cos\frac{pos}{10000^{2i/d}}",
             (Link("positional.py", {"offset": "2"}),)),
    TourStep("one_head", r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V",
             (Link("step_through.py", {"kind": "encoder", "layer": "0", "head": "0"}),)),
    TourStep("multi_head",
             r"\mathrm{MultiHead}(X)=\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O,\quad "
             r"\mathrm{head}_i=\mathrm{Attention}(XW_i^Q,XW_i^K,XW_i^V)",
             (Link("multi_head.py", {"kind": "encoder", "layer": "0"}), Link("explorer.py", {"kind": "encoder"}))),
    TourStep("add_norm",
             r"y=\mathrm{LayerNorm}\big(x+\mathrm{Sublayer}(x)\big),\quad "
             r"\mathrm{LayerNorm}(z)=\gamma\odot\frac{z-\mu}{\sigma}+\beta",
             (Link("layernorm.py", {"stack": "encoder", "layer": "0", "norm": "norm_attn"}),)),
    TourStep("ffn", r"\mathrm{FFN}(x)=\max(0,\ xW_1+b_1)\,W_2+b_2",
             (Link("ffn.py", {"view": "ffn", "stack": "encoder", "layer": "0"}),)),
    TourStep("decoder", r"\mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}+M\Big),\quad M_{ts}=-\infty\ \ (s>t)",
             (Link("explorer.py", {"kind": "decoder"}), Link("explorer.py", {"kind": "cross"}))),
    TourStep("decoding", r"y_t=\arg\max_{y}\;p_\theta(y\mid y_{<t},x)", (Link("decoding.py", {"method": "greedy"}),)),
    TourStep("heads", r"H(a_t)=-\sum_s a_{ts}\log a_{ts}", (Link("heads.py", {"tab": "stats"}),)),
    TourStep("zoo", r"q^\top k,\quad \frac{q^\top k}{\sqrt d},\quad q^\top Wk,\quad v^\top\tanh(W_1q+W_2k)",
             (Link("zoo.py", {"source": "model", "score": "additive"}),)),
    TourStep("learn", r"\theta\leftarrow\theta-\eta\,\nabla_\theta\Big(-\sum_t\log p_\theta(y_t\mid y_{<t},x)\Big)",
             (Link("training.py", {"task": "reverse", "size": "small", "steps": "800"}),)),
    TourStep("regularize",
             r"q_v=(1-\varepsilon)\,[v=y]+\frac{\varepsilon}{V},\quad \mathcal{L}=-\sum_v q_v\log p_v,\quad "
             r"\tilde a=\frac{m\odot a}{1-p}",
             (Link("ffn.py", {"view": "smoothing"}), Link("ffn.py", {"view": "dropout"}))),
)


def presenter_order(pages: list[str]) -> list[str]:
    """Pages (files under viz/pages) in presenting order: start page and tour first, then the tour's pages
    in tour order, then any others in their menu order. Only files listed in `pages` are kept."""
    first = [p for p in ("home.py", "tour.py") if p in pages]
    toured = [link.page for step in TOUR for link in step.links]
    ordered = list(dict.fromkeys(first + [p for p in toured if p in pages] + list(pages)))
    return ordered
