"""The guided tour's steps in teaching order, and the page order presenter mode walks (no Streamlit here)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Link:
    page: str                    # file under viz/pages
    label: str
    params: dict = field(default_factory=dict)   # the page's own URL parameters (model/text are added)


@dataclass(frozen=True)
class TourStep:
    title: str
    text: str                    # 2-3 sentences, our own words
    formula: str                 # LaTeX
    links: tuple[Link, ...]
    key: str = ""                # its messages in viz/locales/*.json: tour.<key>.title, .text, .reading,
                                 # .link0, .link1… (the page's and the offline lesson's languages)

    def message_key(self, part: str) -> str:
        """The catalogue key of one of this step's texts: "title", "text", "reading" or "link<i>"."""
        return f"tour.{self.key}.{part}"


TOUR = (
    TourStep("Tokens become vectors",
             "The tokenizer cuts the sentence into tokens, and each token's id selects one row of a learned "
             "embedding matrix, multiplied by √d_model. The vector says what the token is, but nothing yet about "
             "where it stands in the sentence.",
             r"x_i=\sqrt{d_{\mathrm{model}}}\;E[\mathrm{token}_i]",
             (Link("positional.py", "Positional encoding: embeddings and positions"),), key="tokens"),
    TourStep("Positional encoding",
             "Attention on its own is blind to order: shuffle the words and each one sees the same set of "
             "neighbours. So a pattern of sines and cosines of many wavelengths is added to every embedding; "
             "shifting by k positions is a fixed rotation of it, so the model can read relative positions too.",
             r"PE_{(pos,2i)}=\sin\frac{pos}{10000^{2i/d}},\quad PE_{(pos,2i+1)}=\cos\frac{pos}{10000^{2i/d}}",
             (Link("positional.py", "Positional encoding: offsets as rotations", {"offset": "2"}),),
             key="positional"),
    TourStep("Self-attention, one head",
             "Every token makes a query, a key and a value from its vector. A query is compared with every key "
             "(dot product, divided by √d_k), a softmax turns the scores into weights that sum to 1, and the "
             "token's new vector is the weighted sum of the values.",
             r"\mathrm{Attention}(Q,K,V)=\mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V",
             (Link("step_through.py", "Step-through: one head's arithmetic", {"kind": "encoder", "layer": "0",
                                                                              "head": "0"}),),
             key="one_head"),
    TourStep("Multi-head attention",
             "The model runs several smaller attentions side by side, each with its own projections, so one head "
             "can follow position while another follows meaning. Their outputs are concatenated and mixed by W^O.",
             r"\mathrm{MultiHead}(X)=\mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)\,W^O,\quad "
             r"\mathrm{head}_i=\mathrm{Attention}(XW_i^Q,XW_i^K,XW_i^V)",
             (Link("multi_head.py", "Multi-head assembly", {"kind": "encoder", "layer": "0"}),
              Link("explorer.py", "Attention explorer: every layer × head", {"kind": "encoder"})),
             key="multi_head"),
    TourStep("Add & Norm",
             "Each sublayer's output is added back to its input (the residual connection keeps what was there), "
             "then LayerNorm rescales every token's vector to mean 0 and spread 1, with a learned gain and bias.",
             r"y=\mathrm{LayerNorm}\big(x+\mathrm{Sublayer}(x)\big),\quad "
             r"\mathrm{LayerNorm}(z)=\gamma\odot\frac{z-\mu}{\sigma}+\beta",
             (Link("layernorm.py", "LayerNorm & residual", {"stack": "encoder", "layer": "0", "norm": "norm_attn"}),),
             key="add_norm"),
    TourStep("The decoder",
             "The decoder writes the output one token at a time. Its self-attention is masked, so a position sees "
             "only the tokens before it; its cross-attention takes queries from the output so far and keys and "
             "values from the encoder, which is where it looks in the source.",
             r"\mathrm{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}+M\Big),\quad M_{ts}=-\infty\ \text{for}\ s>t",
             (Link("explorer.py", "Cross-attention (decoder → encoder)", {"kind": "cross"}),
              Link("explorer.py", "Masked decoder self-attention", {"kind": "decoder"})), key="decoder"),
    TourStep("Decoding",
             "At inference there is no reference: the model predicts a distribution over the next token, picks "
             "one, appends it and runs again until it writes </s>. Greedy keeps the single best token; beam "
             "search keeps the k best partial outputs.",
             r"y_t=\arg\max_{y}\;p_\theta(y\mid y_{<t},x)",
             (Link("decoding.py", "Decoding, step by step", {"method": "greedy"}),), key="decoding"),
    TourStep("What the heads do",
             "With the whole machine in view, measure it: how spread out each head's attention is, how far it "
             "looks, and what breaks when a head is switched off.",
             r"H(a_t)=-\sum_s a_{ts}\log a_{ts}",
             (Link("heads.py", "Head analysis", {"tab": "stats"}),), key="heads"),
    TourStep("Where attention came from",
             "Before the Transformer, attention helped recurrent translators: additive scores (Bahdanau), "
             "dot and bilinear scores, local windows (Luong), and hard attention trained by sampling (Xu). "
             "Try them all on one of this model's heads.",
             r"q^\top k,\quad \frac{q^\top k}{\sqrt d},\quad q^\top Wk,\quad v^\top\tanh(W_1q+W_2k)",
             (Link("zoo.py", "Attention zoo", {"source": "model", "score": "additive"}),), key="zoo"),
    TourStep("Watch it learn",
             "Train a small model on reversing a sequence, live, and scrub through its attention as it trains: the "
             "cross-attention turns from a blur into an anti-diagonal as accuracy climbs.",
             r"\theta\leftarrow\theta-\eta\,\nabla_\theta\Big(-\sum_t\log p_\theta(y_t\mid y_{<t},x)\Big)",
             (Link("training.py", "Live toy training", {"task": "reverse", "size": "small", "steps": "800"}),),
             key="learn"),
)


def presenter_order(pages: list[str]) -> list[str]:
    """Pages (files under viz/pages) in presenting order: start page and tour first, then the tour's pages
    in tour order, then any others in their menu order. Only files listed in `pages` are kept."""
    first = [p for p in ("home.py", "tour.py") if p in pages]
    toured = [link.page for step in TOUR for link in step.links]
    ordered = list(dict.fromkeys(first + [p for p in toured if p in pages] + list(pages)))
    return ordered
