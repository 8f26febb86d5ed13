"""See a Transformer think: `streamlit run app.py`. The entry point and router live in transformer_viz_app.py
(the module `pip install .` puts beside viz/, which the installed `transformer-viz app` runs)."""
from transformer_viz_app import page

if __name__ == "__main__":
    page()
