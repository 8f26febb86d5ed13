"""Guided tour: the pages in teaching order, one idea per step, each drawn in place from the sidebar sentence
(the same figure the offline lesson draws for the step) and linked to its page with deep-link parameters."""
from pathlib import Path

import streamlit as st

from viz.figures.model_map import TOUR_BLOCKS
from viz.core.i18n import t
from viz.elements.map_view import map_figure
from viz.elements.nav import PAGES
from viz.services.models import resolve_model_dir
from viz.tour.buttons import TOUR_URL, neighbours, page_button, style_nav_buttons
from viz.core import view
from viz.core.context import Context, current
from viz.tour.pictures import FULL_FIGURES, STEP_FIGURES, step_pictures
from viz.tour.steps import TOUR, TourStep
from viz.elements.ui import look, show_figure

PAGES_DIR = Path(__file__).parent


def go(delta: int) -> None:
    view.put(view.TOUR_STEP, min(len(TOUR), max(1, view.get(view.TOUR_STEP) + delta)))


def step_picture(ctx: Context | None, step: TourStep, number: int) -> None:
    """The step's pictures from the sidebar sentence, in place, each with one or two lines on how to read it:
    the offline lesson's figures for the step (viz/tour/pictures.step_pictures), so the tour and the lesson file
    agree (the multi-head step: the heads' grid, then the same layer's head view)."""
    if step.key not in STEP_FIGURES:
        return
    if ctx is None or ctx.trace is None:
        st.info(t("tour.need_sentence"))
        return
    try:
        pictures = step_pictures(step, ctx.trace, resolve_model_dir(ctx.model_id), look())
    except (KeyError, ValueError) as e:       # a trace or model without what this picture needs
        st.caption(t("tour.cannot_draw", error=e))
        return
    if not pictures:
        st.caption(t("tour.no_training_log"))
        return
    for i, picture in enumerate(pictures):     # the first keeps its key, the next ones (the head view) -1, -2…
        suffix = "" if i == 0 else f"-{i}"
        if picture.narrow:                         # a head view: lines across the page lie flat; its reading beside
            c_fig, c_words = st.columns([3, 2], vertical_alignment="center")
        else:
            c_fig = c_words = st.container()
        with c_fig:
            show_figure(picture.figure, f"{ctx.model_id}-tour-{number}{suffix}", key=f"tour-picture-{number}{suffix}")
        c_words.caption(t(picture.reading))
    if step.key in FULL_FIGURES:                  # the full matrix behind a teaching picture, one click away
        with st.expander(t("step.full")):
            show_figure(FULL_FIGURES[step.key](ctx.trace, resolve_model_dir(ctx.model_id), look()),
                        f"{ctx.model_id}-tour-{number}-full", key=f"tour-full-{number}")


def you_are_here(ctx: Context | None, step: TourStep, number: int) -> None:
    """The whole model (the paper's Figure 1, live on the sentence) with this step's blocks framed in red."""
    if ctx is None or ctx.trace is None or not TOUR_BLOCKS.get(step.key):
        return
    fig = map_figure(ctx.trace, look(), highlight=TOUR_BLOCKS[step.key],
                     compact=True, token_strings=ctx.model.tokenizer.token_strings)
    show_figure(fig, f"{ctx.model_id}-tour-map-{number}", key=f"tour-map-{number}")


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
    """One row: Previous, the step's title, Next. In presenter mode these are the one way on (the pages'
    Previous/Next page buttons are not shown here): from the first step Previous leads to the page before the
    tour, from the last step Next to the page after it."""
    c_prev, c_title, c_next = st.columns([1, 3.8, 1], vertical_alignment="center")
    prev_page, next_page = neighbours(TOUR_URL, PAGES) if view.get(view.PRESENT) else (None, None)
    if number == 1 and prev_page:
        page_button(c_prev, "presenter-prev", prev_page, t("tour.prev_page"), help=prev_page.title)
    else:
        c_prev.button(t("tour.prev"), key="tour-prev", on_click=go, args=(-1,), disabled=number == 1,
                      width="stretch")
    c_title.subheader(t("tour.step", number=number, total=len(TOUR), title=t(step.message_key("title"))))
    if number == len(TOUR) and next_page:
        page_button(c_next, "presenter-next", next_page, t("tour.next_page"), help=next_page.title)
    else:
        c_next.button(t("tour.next"), key="tour-next", on_click=go, args=(1,), disabled=number == len(TOUR),
                      width="stretch", type="primary")


def render() -> None:
    view.seed(view.TOUR_STEP, view.read(view.TOUR_STEP, hi=len(TOUR)))
    number = view.get(view.TOUR_STEP)
    view.write_url({view.TOUR_STEP: number})
    step = TOUR[number - 1]
    ctx = current()

    st.title(t("tour.title"))
    style_nav_buttons()
    step_header(number, step)
    step_picture(ctx, step, number)
    st.markdown(t(step.message_key("text")))
    st.latex(step.formula)
    step_links(step, view.link_params() if ctx is not None else {})
    you_are_here(ctx, step, number)
    st.progress(number / len(TOUR))
    st.caption(t("tour.class"))
    with st.expander(t("tour.all_steps")):
        titles = [t(s.message_key("title")) for s in TOUR]
        st.markdown("\n".join(f"{i}. {'**' + title + '**' if i == number else title}"
                              for i, title in enumerate(titles, start=1)))


if __name__ == "__main__":
    render()
