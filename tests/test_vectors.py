"""Token vectors as teaching pictures instead of 256-column stripe charts (issue 26, item 2): the maths in
model/analysis/vectors.py and the builders in viz/figures/vectors.py, as pure functions."""
import numpy as np
import pytest

from model.analysis.attention_math import concat_heads, output_projection
from model.analysis.vectors import cosine_similarity, head_contribution_norms, head_contributions
from viz.figures.style import NORMAL, PRESENTER, Look
from viz.figures.vectors import contribution_map, cosine_map
from viz.figures.style import Labels
from viz.core.i18n import words

EN = words("en")  # the words a builder's look takes (Look(EN), Look(EN, PRESENTER)), in English

RNG = np.random.default_rng(0)


def test_cosine_similarity_is_the_formula():
    x = RNG.normal(size=(6, 256))
    cos = cosine_similarity(x)
    for i in range(6):
        for j in range(6):
            expected = x[i] @ x[j] / (np.linalg.norm(x[i]) * np.linalg.norm(x[j]))
            assert cos[i, j] == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(np.diag(cos), 1.0)
    np.testing.assert_allclose(cos, cos.T)


def test_cosine_ignores_length_and_a_zero_vector_is_like_nothing():
    x = np.array([[1.0, 0.0], [5.0, 0.0], [-2.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    cos = cosine_similarity(x)
    assert cos[0, 1] == pytest.approx(1.0) and cos[0, 2] == pytest.approx(-1.0) and cos[0, 3] == pytest.approx(0.0)
    assert np.all(cos[4] == 0) and np.all(np.isfinite(cos))
    with pytest.raises(ValueError):
        cosine_similarity(np.zeros(4))


def test_head_contributions_sum_to_the_output_projection():
    z = RNG.normal(size=(8, 5, 32))
    w, b = RNG.normal(size=(256, 256)), RNG.normal(size=256)
    parts = head_contributions(z, w)
    assert parts.shape == (8, 5, 256)
    np.testing.assert_allclose(parts.sum(0) + b, output_projection(concat_heads(z), w, b), atol=1e-9)
    norms = head_contribution_norms(z, w)
    assert norms.shape == (5, 8)
    np.testing.assert_allclose(norms[3, 2], np.linalg.norm(z[2, 3] @ w[:, 64:96].T))
    with pytest.raises(ValueError):
        head_contributions(z, w[:, :100])


def test_cosine_map_is_tokens_by_tokens_fixed_scale_with_numbers():
    labels = ["the", "cat", "sat", "<s>"]
    cos = cosine_similarity(RNG.normal(size=(4, 256)))
    fig = cosine_map(cos, labels, Labels("X", "token", "token", "cosine"), Look(EN, PRESENTER), highlight=1)
    heat = fig.data[0]
    assert np.asarray(heat.z).shape == (4, 4) and (heat.zmin, heat.zmax) == (-1.0, 1.0)
    assert list(heat.x) == list(heat.y) == ["the", "cat", "sat", "&lt;s&gt;"]
    assert heat.texttemplate and heat.textfont.size >= 16          # a 4x4 map holds its numbers on a projector
    assert len(fig.layout.shapes) == 1                              # the followed token framed
    with pytest.raises(ValueError):
        cosine_map(cos, labels[:3], Labels("X", "token", "token", "cosine"), Look(EN))


def test_contribution_map_tokens_by_heads():
    norms = np.abs(RNG.normal(size=(5, 8)))
    fig = contribution_map(norms, list("abcde"), [f"head {h}" for h in range(8)], Look(EN))
    heat = fig.data[0]
    assert np.asarray(heat.z).shape == (5, 8) and heat.zmin == 0 and list(heat.x)[0] == "head 0"
    assert "length" in heat.hovertemplate
    assert fig.layout.xaxis.tickangle == 0                          # short head names stand upright: no slant room
    assert fig.layout.height < 60 + 2 * 24 + 5 * 25 + 60            # title, two label lines, rows, a little more
    for scale in (NORMAL, PRESENTER):                                 # 8 tokens x 8 heads keep their numbers
        fig = contribution_map(np.abs(RNG.normal(size=(8, 8))), list("abcdefgh"), [f"head {h}" for h in range(8)],
                               Look(EN, scale))
        assert fig.data[0].texttemplate and fig.data[0].textfont.size >= scale.cell
