"""The guided tour's token and positional steps (issue 26, item 2): cosine similarities of the tokens' embeddings and of the
positional vectors as the pictures, the full [tokens x d_model] matrices one click away in an expander."""
import json

import numpy as np
import pytest

from apptest_utils import no_exceptions, run_page, z_of
from viz.tour.steps import TOUR


@pytest.mark.parametrize("number", [n for n, step in enumerate(TOUR, 1) if step.key in ("tokens", "positional")])
def test_tour_step_keeps_the_full_matrix_a_click_away(number):
    at = run_page("tour.py", model="toy-reverse", text="a b c d", tour_step=number)
    no_exceptions(at)
    charts = at.get("plotly_chart")
    ids = [c.proto.id for c in charts]
    picture = next(i for i, c in enumerate(ids) if f"tour-picture-{number}" in c)
    full = next(i for i, c in enumerate(ids) if f"tour-full-{number}" in c)
    n = z_of(at, picture).shape[0]
    assert z_of(at, picture).shape == (n, n)                       # tokens x tokens
    assert z_of(at, full).shape[0] == n and z_of(at, full).shape[1] > n   # every dimension, behind the click
    assert "cosine" in json.dumps(json.loads(charts[picture].proto.spec)["layout"]["title"])
    assert any(e.label == "All the numbers: the full matrix" for e in at.expander)
    assert np.allclose(np.diag(z_of(at, picture)), 1.0)
