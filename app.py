"""See a Transformer think: `streamlit run app.py`. The entry in the source tree: transformer_viz_app.py configures
the runtime before torch loads (it is also the entry `pip install .` installs), and viz/frame/router.py is the
router (page config, the shared sidebar, then the page)."""
from transformer_viz_app import page

if __name__ == "__main__":
    page()
