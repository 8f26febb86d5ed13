"""Guided tour: the pages in teaching order, one idea per step, each drawn in place from the sidebar sentence
(the same figure the offline lesson draws for the step) and linked to its page with deep-link parameters."""
import re
from pathlib import Path

import streamlit as st

from viz.figures.attention import KIND_TITLES
from viz.i18n import t
from viz.lesson import STEP_FIGURES
from viz.presenter import style_nav_buttons
from viz.state import Context, current, qp_int, set_query
from viz.tour_steps import TOUR, TourStep
from viz.ui import show_figure

PAGES_DIR = Path(__file__).parent
STEP_KEY = "tour-step"
_KINDS = "|".join(re.escape(title) for title in KIND_TITLES.values())
# The lesson's figures (viz/lesson.py, shared with the English HTML lesson) carry English titles; the page
# puts each text in its language: (pattern of the whole English text, catalogue key; named groups fill the
# message's placeholders, a group named "kind" is an attention kind's title and is translated too).
FIGURE_TEXTS = tuple((re.compile(pattern), key) for pattern, key in (
    (r"Each source token's embedding vector \(× √d_model\)", "fig.tour.embeddings"),
    (r"dimension", "fig.tour.dimension"),
    (r"token", "fig.tour.token"),
    (r"value", "fig.tour.value"),
    (r"The positional vectors added to your sentence, one row per position", "fig.tour.pe"),
    (r"dimension \(pairs 2i, 2i\+1 share a frequency; slower to the right\)", "fig.tour.pe.x"),
    (r"position", "fig.tour.position"),
    (r"your sentence: positions 0–(?P<last>\d+)", "fig.tour.pe.sentence"),
    (rf"(?P<kind>{_KINDS}), layer (?P<layer>\d+), head (?P<head>\d+)", "fig.tour.one_head"),
    (rf"(?P<kind>{_KINDS}), layer (?P<layer>\d+): every head", "fig.tour.every_head"),
    (rf"(?P<kind>{_KINDS}), layer (?P<layer>\d+), mean of the heads", "fig.tour.mean_heads"),
    (r"head (?P<head>\d+)", "fig.tour.head"),
    (r"layer (?P<layer>\d+)", "fig.tour.layer"),
    (r"key \(attended to\)", "fig.attention.x"),
    (r"query \(attending\)", "fig.attention.y"),
    (r"weight", "fig.attention.weight"),
    (r"query", "fig.attention.query"),
    (r"Encoder layer 0, the attention sublayer's LayerNorm: its input and output", "fig.tour.add_norm"),
    (r"mean per token", "fig.tour.mean"),
    (r"standard deviation per token", "fig.tour.std"),
    (r"input \(before\)", "fig.tour.before"),
    (r"normalized \(after\)", "fig.tour.after"),
    (r"How sure the model was of each output token", "fig.tour.confidence"),
    (r"p\(chosen token\)", "fig.tour.p_chosen"),
    (r"Encoder heads: entropy of attention \(bits; low = focused\)", "fig.tour.entropy"),
    (r"bits", "fig.tour.bits"),
    (r"Encoder layer 0, head 0's queries and keys under older score functions", "fig.tour.zoo"),
    (r"scaled dot q·k/√d", "fig.tour.zoo.scaled"),
    (r"bilinear qᵀWk \(random W\)", "fig.tour.zoo.general"),
    (r"additive vᵀtanh\(W₁q\+W₂k\)<br>\(random W\)", "fig.tour.zoo.additive"),
    (r"(?P<model>.+): loss during training", "fig.loss.title"),
    (r"training step", "fig.loss.step"),
    (r"cross-entropy per token", "fig.loss.loss"),
    (r"train loss \(label-smoothed\)", "fig.loss.train"),
    (r"dev loss \(plain cross-entropy\)", "fig.loss.dev"),
))
LAYER_HEAD = re.compile(r"(layer|head) \d+")        # the row and column labels of a layer × head grid


def carried_params(ctx: Context | None) -> dict:
    """The sidebar's model and sentence, so the linked page opens on the same input (also in a new tab)."""
    if ctx is None:
        return {}
    params = {"model": ctx.model_id, "text": ctx.text.strip() or None, "target": (ctx.target or "").strip() or None}
    if st.session_state.get("presenter"):
        params["present"] = "1"
    return {k: v for k, v in params.items() if v}


def figure_text(text: str) -> str:
    """One of the lesson figures' English texts in the page's language (FIGURE_TEXTS); others as they are."""
    for pattern, key in FIGURE_TEXTS:
        match = pattern.fullmatch(text)
        if match:
            values = match.groupdict()
            if values.get("kind"):
                kind = next(k for k, title in KIND_TITLES.items() if title == values["kind"])
                values["kind"] = t(f"fig.kind.{kind}")
            return t(key, **values) if values else t(key)
    return text


def localize(fig) -> None:
    """Put the figure's title, axis and colour-bar titles, annotations and trace names in the page's language."""
    layout = fig.layout
    if layout.title and layout.title.text:
        layout.title.text = figure_text(layout.title.text)
    for name in list(layout.to_plotly_json()):
        if re.fullmatch(r"[xy]axis\d*", name) and layout[name].title and layout[name].title.text:
            layout[name].title.text = figure_text(layout[name].title.text)
        elif re.fullmatch(r"coloraxis\d*", name) and layout[name].colorbar.title.text:
            layout[name].colorbar.title.text = figure_text(layout[name].colorbar.title.text)
    for note in layout.annotations or ():
        if note.text:
            note.text = figure_text(note.text)
    for trace in fig.data:
        for side in ("x", "y"):             # a layer × head grid's labels (token labels stay as they are)
            values = getattr(trace, side, None)
            if values is not None and len(values) and all(isinstance(v, str) and LAYER_HEAD.fullmatch(v)
                                                           for v in values):
                setattr(trace, side, [figure_text(v) for v in values])
        if getattr(trace, "name", None):
            trace.name = figure_text(trace.name)
        colorbar = getattr(trace, "colorbar", None)
        if colorbar is not None and colorbar.title and colorbar.title.text:
            colorbar.title.text = figure_text(colorbar.title.text)


def go(delta: int) -> None:
    st.session_state[STEP_KEY] = min(len(TOUR), max(1, st.session_state[STEP_KEY] + delta))


def step_picture(ctx: Context | None, step: TourStep, number: int) -> None:
    """The step's picture from the sidebar sentence, in place, with one or two lines on how to read it: the
    offline lesson's figure for the step (viz/lesson.py STEP_FIGURES), so the tour and the lesson file agree."""
    if step.title not in STEP_FIGURES:
        return
    if ctx is None or ctx.trace is None:
        st.info(t("tour.need_sentence"))
        return
    draw, _english_reading = STEP_FIGURES[step.title]
    try:
        fig = draw(ctx.trace, ctx.bundle.path)
    except (KeyError, ValueError) as e:       # a trace or model without what this picture needs
        st.caption(t("tour.cannot_draw", error=e))
        return
    if fig is None:
        st.caption(t("tour.no_training_log"))
        return
    localize(fig)
    show_figure(fig, f"{ctx.model_id}-tour-{number}", key=f"tour-picture-{number}")
    st.caption(t(step.message_key("reading")))


def step_links(step: TourStep, base: dict) -> None:
    links = st.container(border=True, key="tour-links")
    for i, link in enumerate(step.links):
        label = t(step.message_key(f"link{i}"))
        if (PAGES_DIR / link.page).is_file():
            links.page_link(f"viz/pages/{link.page}", label=t("tour.open", label=label),
                            icon=":material/arrow_forward:", query_params={**base, **link.params})
        else:
            links.caption(t("tour.missing_page", label=label))
    if not base.get("text"):
        st.caption(t("tour.empty_sentence"))


def step_header(number: int, step: TourStep) -> None:
    """One row: Previous, the step's title, Next."""
    c_prev, c_title, c_next = st.columns([1, 3.8, 1], vertical_alignment="center")
    c_prev.button(t("tour.prev"), key="tour-prev", on_click=go, args=(-1,), disabled=number == 1, width="stretch")
    c_title.subheader(t("tour.step", number=number, total=len(TOUR), title=t(step.message_key("title"))))
    c_next.button(t("tour.next"), key="tour-next", on_click=go, args=(1,), disabled=number == len(TOUR), width="stretch",
                  type="primary")


def render() -> None:
    if STEP_KEY not in st.session_state:
        st.session_state[STEP_KEY] = qp_int("tour_step", 1, 1, len(TOUR))
    number = st.session_state[STEP_KEY]
    set_query(tour_step=number)
    step = TOUR[number - 1]
    ctx = current()

    st.title(t("tour.title"))
    style_nav_buttons()
    step_header(number, step)
    step_picture(ctx, step, number)
    st.markdown(t(step.message_key("text")))
    st.latex(step.formula)
    step_links(step, carried_params(ctx))
    st.progress(number / len(TOUR))
    with st.expander(t("tour.all_steps")):
        titles = [t(s.message_key("title")) for s in TOUR]
        st.markdown("\n".join(f"{i}. {'**' + title + '**' if i == number else title}"
                              for i, title in enumerate(titles, start=1)))


if __name__ == "__main__":
    render()
