"""Run app.py on one page with AppTest, as a browser would after following a link."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")
TIMEOUT = 180  # the first run imports torch and loads the model


def run_page(page: str | None = None, **params) -> AppTest:
    """page: a file under viz/pages (e.g. "explorer.py"); params: URL query parameters."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = str(value)
    if page:
        at.switch_page(f"viz/pages/{page}")
    return at.run()


def texts(at: AppTest) -> str:
    """Everything the page wrote as text, for asserting on messages."""
    parts = []
    for kind in ("markdown", "caption", "text", "info", "warning", "error", "success", "title", "header",
                 "subheader", "latex", "code"):
        parts.extend(str(e.value) for e in at.get(kind))
    return "\n".join(parts)


def no_exceptions(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
