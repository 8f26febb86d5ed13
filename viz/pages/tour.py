"""Guided tour: the pages in teaching order, one idea per step, each linked with its deep-link parameters."""
from pathlib import Path

import streamlit as st

from viz.presenter import style_nav_buttons
from viz.state import current, qp_int, set_query
from viz.tour_steps import TOUR

PAGES_DIR = Path(__file__).parent
STEP_KEY = "tour-step"


def carried_params() -> dict:
    """The sidebar's model and sentence, so the linked page opens on the same input (also in a new tab)."""
    ctx = current()
    if ctx is None:
        return {}
    params = {"model": ctx.model_id, "text": ctx.text.strip() or None, "target": (ctx.target or "").strip() or None}
    if st.session_state.get("presenter"):
        params["present"] = "1"
    return {k: v for k, v in params.items() if v}


def go(delta: int) -> None:
    st.session_state[STEP_KEY] = min(len(TOUR), max(1, st.session_state[STEP_KEY] + delta))


if STEP_KEY not in st.session_state:
    st.session_state[STEP_KEY] = qp_int("tour_step", 1, 1, len(TOUR))
number = st.session_state[STEP_KEY]
set_query(tour_step=number)
step = TOUR[number - 1]

st.title("Guided tour")
st.progress(number / len(TOUR))
st.header(f"Step {number} of {len(TOUR)}: {step.title}")
st.markdown(step.text)
st.latex(step.formula)

base = carried_params()
style_nav_buttons()
links = st.container(border=True, key="tour-links")
for link in step.links:
    if (PAGES_DIR / link.page).is_file():
        links.page_link(f"viz/pages/{link.page}", label=f"Open: {link.label}", icon=":material/arrow_forward:",
                        query_params={**base, **link.params})
    else:
        links.caption(f"{link.label}: this page is not part of this installation yet.")
if not base.get("text"):
    st.caption("The sidebar sentence is empty: the linked pages will ask for one.")

c_prev, c_next = st.columns(2)
c_prev.button("← Previous", key="tour-prev", on_click=go, args=(-1,), disabled=number == 1, width="stretch")
c_next.button("Next →", key="tour-next", on_click=go, args=(1,), disabled=number == len(TOUR), width="stretch",
              type="primary")
with st.expander("All steps"):
    st.markdown("\n".join(f"{i}. {'**' + s.title + '**' if i == number else s.title}"
                          for i, s in enumerate(TOUR, start=1)))
