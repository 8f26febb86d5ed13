"""See a Transformer think: the router. Page config, the shared sidebar, then the page.

    streamlit run app.py          (app.py, or the installed transformer_viz_app.py, runs this module's page())

Streamlit finds pages relative to the script it runs (st.Page("viz/pages/home.py"), page links), so the script
sits beside viz/: app.py in the source tree, transformer_viz_app.py (pyproject.toml py-modules) where
`pip install .` puts it. Both are entries that call page() here; this module is the one router. The entry
configures the runtime (model/runtime.py) before this module, and so torch, loads.
"""
from __future__ import annotations

import streamlit as st

from viz.elements.nav import PAGES, compact_layout, navigation
from viz.frame.presenter import run_page
from viz.services.models import model_ids
from viz.core.i18n import t
from viz.frame.choice import build_context
from viz.frame.sidebar import header, language_picker, show_result, sidebar, start_view
from viz.core.context import set_current


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
