"""See a Transformer think: the entry point and router. Page config, the shared sidebar, then the page.

    streamlit run app.py
"""
from __future__ import annotations

from model import runtime

runtime.configure()  # before torch loads: OpenMP and allocator settings

import streamlit as st  # noqa: E402

from viz.nav import PAGES, compact_layout, navigation  # noqa: E402
from viz.presenter import run_page  # noqa: E402
from viz.services import model_ids  # noqa: E402
from viz.i18n import t  # noqa: E402
from viz.sidebar import header, init_from_url, language_picker, sidebar  # noqa: E402
from viz.state import set_current  # noqa: E402


def main() -> None:
    models = model_ids()
    notices: list[str] = []
    init_from_url(models, notices)              # first: the language of the menu comes from the URL too
    language_picker()
    page = navigation()
    compact_layout()
    if not models:
        st.error(t("notice.no_models"))
        st.stop()
    ctx = sidebar(models, notices)
    set_current(ctx)
    if ctx is not None:
        header(ctx)
    run_page(page, PAGES)  # presenter mode: projector styles and page buttons around page.run()


if __name__ == "__main__":
    st.set_page_config(page_title="Transformer, inside", page_icon="🔎", layout="wide")
    main()
