"""The Streamlit app (see docs and viz/pages); ROOT is the repository's folder (app.py, pretrained/, viz/)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
