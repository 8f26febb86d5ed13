"""See a Transformer think: the entry point and router. Page config, the shared sidebar, then the page.

    streamlit run app.py          (app.py runs this module's page())

This module, not app.py, is what `pip install .` puts into site-packages (pyproject.toml py-modules), beside
viz/: Streamlit finds pages relative to the script it runs (st.Page("viz/pages/home.py"), page links), so the
installed `transformer-viz app` runs this file. Its name says whose it is (a top-level `app` would not).
"""
from __future__ import annotations

from model import runtime

runtime.configure()  # before torch loads: OpenMP and allocator settings

import streamlit as st  # noqa: E402

from viz.elements.nav import PAGES, compact_layout, navigation  # noqa: E402
from viz.frame.presenter import run_page  # noqa: E402
from viz.services.models import model_ids  # noqa: E402
from viz.core.i18n import t  # noqa: E402
from viz.frame.choice import build_context  # noqa: E402
from viz.frame.sidebar import header, language_picker, show_result, sidebar, start_view  # noqa: E402
from viz.core.context import set_current  # noqa: E402


def main() -> None:
    models = model_ids()
    notices: list[str] = []
    start_view(models, notices)                 # first: the language of the menu comes from the URL too
    language_picker()
    page = navigation()
    compact_layout()
    if not models:
        st.error(t("notice.no_models"))
        st.stop()
    chosen = sidebar(models, notices)           # what the reader chose; None when the model does not load
    ctx = build_context(chosen[0], notices) if chosen else None
    set_current(ctx)                            # what every page reads (viz/core/context.current())
    if ctx is not None:
        show_result(ctx, chosen[1])
        header(ctx)
    run_page(page, PAGES)  # presenter mode: projector styles and page buttons around page.run()


def page() -> None:
    """One run of the script: the page config, then main()."""
    st.set_page_config(page_title="Transformer, inside", page_icon="🔎", layout="wide")
    main()


if __name__ == "__main__":
    page()
