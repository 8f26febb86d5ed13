"""A cached service's spinner, in the page's language."""
from __future__ import annotations

import functools

import streamlit as st

from viz.core.i18n import t


def with_spinner(key: str):
    """A cached function's spinner in the page's language (show_spinner's text is fixed at import). It
    is entered on every call, and st.spinner draws only after 0.5 s, so a cache hit shows nothing."""
    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with st.spinner(t(key)):
                return fn(*args, **kwargs)
        return run
    return decorate
