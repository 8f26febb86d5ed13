"""The app's entry script where `pip install .` puts it, beside viz/ (pyproject.toml py-modules; the installed
`transformer-viz app` runs it, and app.py runs it in the source tree): Streamlit finds pages relative to the script
it runs. Its name says whose it is (a top-level `app` would not). The router is viz/frame/router.py."""
from model import runtime

runtime.configure()  # before torch loads: OpenMP and allocator settings

from viz.frame.router import page  # noqa: E402

if __name__ == "__main__":
    page()
