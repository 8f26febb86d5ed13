"""Pure tests of the positional-encoding math and figures (no Streamlit, no browser)."""
import numpy as np
import pytest

from model.nn.layers import sinusoidal_table
from model.analysis.positional import (diagonal_spread, frequencies, order_gap, pe_similarity, rotation_errors,
                                       rotation_matrix)
from model.analysis.word_order import permuted_pattern, swap_permutation
from viz.figures.positional import (norms_figure, order_gap_figure, pe_curves, pe_heatmap, plotly_text,
                                    rotation_error_figure, rotation_matrix_heatmap, similarity_heatmap,
                                    similarity_profile_figure, word_order_figure)
from viz.core.view import parse_index_list
from viz.core.i18n import words
from viz.figures.style import Look

EN = words("en")  # the words a builder takes, in English


@pytest.fixture(scope="module")
def table():
    return sinusoidal_table(128, 32).double().numpy()                                  # [128, 32]


def test_frequencies_follow_the_paper():
    w = frequencies(8)
    assert np.allclose(w, [1, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75])
    with pytest.raises(ValueError, match="even"):
        frequencies(7)


@pytest.mark.parametrize("offset", [1, 5, 100])
def test_rotation_maps_pe_p_to_pe_p_plus_k(table, offset):
    assert rotation_errors(table, offset).max() < 1e-5
    assert rotation_errors(table, offset).shape == (128 - offset,)


def test_rotation_on_float32_model_table_is_rounding_only():
    errors = rotation_errors(sinusoidal_table(512, 256).numpy(), 7)
    assert errors.max() < 1e-5


def test_rotation_matrix_is_block_diagonal_orthogonal(table):
    m = rotation_matrix(3, 32)
    assert np.allclose(m @ m.T, np.eye(32))
    blocks = np.zeros_like(m, dtype=bool)
    for i in range(0, 32, 2):
        blocks[i:i + 2, i:i + 2] = True
    assert np.all(m[~blocks] == 0)
    angle = 3 * frequencies(32)[0]
    assert np.allclose(m[:2, :2], [[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])
    # the same M_k for every p
    assert np.allclose(table[10:20] @ m.T, table[13:23])


def test_rotation_errors_validates_offset(table):
    with pytest.raises(ValueError, match="offset"):
        rotation_errors(table, 0)
    with pytest.raises(ValueError, match="offset"):
        rotation_errors(table, 128)
    with pytest.raises(ValueError, match="table"):
        rotation_errors(np.zeros(5), 1)


def test_a_random_table_is_not_a_rotation():
    rng = np.random.default_rng(0)
    assert rotation_errors(rng.normal(size=(20, 8)), 1).max() > 0.1


def test_similarity_depends_only_on_distance(table):
    sim = pe_similarity(table[:40])
    assert sim.shape == (40, 40)
    assert np.allclose(np.diag(sim), 16)                       # d/2 pairs of sin² + cos²
    assert diagonal_spread(sim) < 1e-5                         # float32 rounding of the model table
    rng = np.random.default_rng(1)
    assert diagonal_spread(pe_similarity(rng.normal(size=(10, 8)))) > 0.1


def test_parse_index_list():
    assert parse_index_list("0, 1,8,9", 0, 63) == [0, 1, 8, 9]
    assert parse_index_list("3,3,2", 0, 5) == [3, 2]
    for bad, message in [("", "no numbers"), ("a,b", "whole numbers"), ("1,99", "outside"), ("1,2,3", "at most")]:
        with pytest.raises(ValueError, match=message):
            parse_index_list(bad, 0, 10, max_items=2)


def test_swap_permutation_and_permuted_pattern():
    perm = swap_permutation(4, 0, 2)
    assert perm.tolist() == [2, 1, 0, 3]
    p = np.arange(16.0).reshape(4, 4)
    q = permuted_pattern(p, perm)
    assert q[0, 0] == p[2, 2] and q[0, 1] == p[2, 1] and q[3, 2] == p[3, 0]
    with pytest.raises(ValueError):
        swap_permutation(3, 0, 3)
    with pytest.raises(ValueError, match="permutation"):
        permuted_pattern(p, [0, 1])


def test_order_gap_is_zero_for_an_order_blind_model():
    rng = np.random.default_rng(2)
    original = rng.random((2, 3, 5, 5))                                                 # [L,H,S,S]
    perm = swap_permutation(5, 1, 3)
    assert np.allclose(order_gap(original, permuted_pattern(original, perm), perm), 0)
    assert np.all(order_gap(original, rng.random((2, 3, 5, 5)), perm) > 0)
    with pytest.raises(ValueError, match="shape"):
        order_gap(original, original[0], perm)


def test_pe_heatmap_and_curves(table):
    fig = pe_heatmap(table[:20], Look(EN), n_sentence=6, title="PE")
    assert fig.data[0].z.shape == (20, 32)
    assert fig.data[0].zmin == -fig.data[0].zmax
    assert fig.layout.shapes[0].y1 == 5.5                      # the sentence box: positions 0-5
    curves = pe_curves(table[:20], [0, 1, 9], Look(EN))
    assert [t.name for t in curves.data] == ["dim 0 (sin, pair 0)", "dim 1 (cos, pair 0)", "dim 9 (cos, pair 4)"]
    assert np.allclose(curves.data[2].y, table[:20, 9])
    with pytest.raises(ValueError, match="at least one"):
        pe_curves(table, [], Look(EN))
    with pytest.raises(ValueError, match="outside"):
        pe_curves(table, [32], Look(EN))


def test_big_maps_send_float32_the_models_own_numbers():
    """Issue 46 item 9: the PE table and PE·PEᵀ go to the browser as float32, the model's precision (its table is
    float32): every cell the model's own number, half the JSON of float64; the en-es page's 64 x 256 table was
    216 KB of chart JSON."""
    model_table = sinusoidal_table(64, 256).numpy()                                    # float32, as in the model
    fig = pe_heatmap(model_table.astype(np.float64), Look(EN), n_sentence=12, title="PE")
    z = fig.data[0].z
    assert z.dtype == np.float32 and np.array_equal(z, model_table)
    assert len(fig.to_json()) < 150_000                      # float64: about 216 KB (its z alone 175 KB of base64)
    sim = similarity_heatmap(pe_similarity(model_table), Look(EN), 12).data[0].z
    assert sim.dtype == np.float32 and np.allclose(sim, pe_similarity(model_table), rtol=1e-6, atol=1e-4)


def test_rotation_error_is_one_line_every_error_on_hover(table):
    """Issue 46 item 9: a line, no marker per position (509 at max_len 512: the page's costliest chart to draw);
    every position's error is still a point of the line, on hover."""
    errors = rotation_errors(table, 3)
    line = rotation_error_figure(errors, 3, Look(EN)).data[0]
    assert line.mode == "lines" and np.array_equal(line.y, errors) and "%{y:.2e}" in line.hovertemplate


def test_similarity_and_rotation_figures(table):
    sim = pe_similarity(table[:10])
    assert similarity_heatmap(sim, Look(EN), 4).data[0].z.shape == (10, 10)
    assert np.allclose(similarity_profile_figure(sim, Look(EN)).data[0].y, sim[0])
    with pytest.raises(ValueError, match="square"):
        similarity_heatmap(np.zeros((3, 4)), Look(EN))
    errors = rotation_errors(table, 2)
    assert len(rotation_error_figure(errors, 2, Look(EN)).data[0].y) == 126
    corner = rotation_matrix_heatmap(rotation_matrix(2, 32), Look(EN), max_dims=16)
    assert corner.data[0].z.shape == (16, 16) and list(corner.data[0].x[:2]) == ["d0", "d1"]
    with pytest.raises(ValueError):
        rotation_error_figure([], 1, Look(EN))


def test_norms_figure_groups_series_and_escapes_tokens():
    fig = norms_figure(["0 a", "1 </s>"], {"token": np.array([1.0, 2.0]), "PE": np.array([3.0, 4.0])}, Look(EN))
    assert [t.name for t in fig.data] == ["token", "PE"]
    assert list(fig.data[0].x) == ["0 a", "1 &lt;/s&gt;"]      # plotly would swallow '</s>' as markup
    assert fig.layout.barmode == "group"
    with pytest.raises(ValueError, match="token labels"):
        norms_figure(["a"], {"token": np.array([1.0, 2.0])}, Look(EN))


def test_order_gap_figure_reads_as_it_is():
    """Issue 26, item 4: on a log axis 3e-7 drew half as tall as 0.1 and 0 drew nothing. A linear axis from 0:
    bar heights in proportion to the gaps, rounding noise labelled "≈ 0", the exact value on hover."""
    fig = order_gap_figure(np.array([0.4, 0.2]), np.array([0.0, 3e-7]), Look(EN))
    assert fig.layout.yaxis.type in (None, "linear") and fig.layout.yaxis.range[0] == 0
    assert fig.layout.yaxis.range[1] >= 0.4
    assert [t.name for t in fig.data][1] == "positional encoding set to 0"
    assert list(fig.data[0].y) == [0.4, 0.2] and list(fig.data[1].y) == [0.0, 3e-7]   # drawn as they are
    assert list(fig.data[0].text) == ["0.40", "0.20"] and list(fig.data[1].text) == ["≈ 0", "≈ 0"]
    assert "%{y:.2e}" in fig.data[1].hovertemplate
    with pytest.raises(ValueError):
        order_gap_figure(np.zeros(2), np.zeros(3), Look(EN))


def test_plotly_text():
    assert plotly_text(["<s>", "a&b"]) == ["&lt;s&gt;", "a&amp;b"]


def test_rotation_matrix_cells_show_only_the_blocks():
    """Sixteen "0.00" per row ran into each other: the zeros stay blank, the 2x2 blocks keep their numbers,
    and the default corner is 8 dimensions (4 blocks) so each number has room at half the page width."""
    m = rotation_matrix(3, 32)
    fig = rotation_matrix_heatmap(m, Look(EN))
    text = np.asarray(fig.data[0].text)
    assert text.shape == (8, 8) and fig.data[0].texttemplate == "%{text}"
    block = np.kron(np.eye(4), np.ones((2, 2))).astype(bool)
    assert np.all(text[~block] == "")
    assert text[0, 0] == f"{m[0, 0]:.2f}" and text[1, 0] == f"{m[1, 0]:.2f}"
    assert rotation_matrix_heatmap(m, Look(EN), max_dims=16).data[0].z.shape == (16, 16)


def test_word_order_figure_escapes_once_with_short_titles():
    labels = ["0 a", "1 b", "2 </s>"]
    a = np.full((3, 3), 1 / 3)
    b = np.eye(3)
    fig = word_order_figure(a, b, labels, Look(EN))
    assert len(fig.data) == 3
    assert list(fig.data[0].x) == ["0 a", "1 b", "2 &lt;/s&gt;"]          # not "&amp;lt;/s&amp;gt;"
    np.testing.assert_allclose(np.asarray(fig.data[2].z), b - a)
    assert fig.data[0].coloraxis == fig.data[1].coloraxis == "coloraxis" and fig.data[2].coloraxis == "coloraxis2"
    titles = [n.text for n in fig.layout.annotations]
    assert titles == [EN("positional.order.panel_original"), EN("positional.order.panel_swapped"),
                      EN("positional.order.panel_difference")]
    for lang in ("en", "zh"):                       # a third of a projector's page
        zh = word_order_figure(a, b, labels, Look(words(lang)))
        assert max(len(n.text) for n in zh.layout.annotations) <= 26
    assert fig.layout.yaxis2.showticklabels is False and fig.layout.yaxis3.showticklabels is False   # queries: left
    with pytest.raises(ValueError):
        word_order_figure(a, b, labels[:2], Look(EN))


def test_word_order_colour_bars_belong_to_their_panels_and_show_the_weights():
    """The 'weight' bar stood between the second panel and the difference panel (read as its scale), and
    head-average weights of ~0.1 on a fixed 0-1 scale looked white."""
    rng = np.random.default_rng(3)
    labels = [f"{i} w{i}" for i in range(6)]
    a, b = rng.random((6, 6)) * 0.12, rng.random((6, 6)) * 0.2
    layout = word_order_figure(a, b, labels, Look(EN)).to_plotly_json()["layout"]
    weight, delta = layout["coloraxis"]["colorbar"], layout["coloraxis2"]["colorbar"]
    left, right = layout["xaxis"]["domain"][0], layout["xaxis2"]["domain"][1]
    low, high = layout["xaxis3"]["domain"]
    for bar, (start, end) in ((weight, (left, right)), (delta, (low, high))):
        assert bar["orientation"] == "h" and bar["xanchor"] == "center" and bar["yanchor"] == "bottom"
        assert bar["y"] >= 1.0                                           # above the maps, not beside them
        assert start <= bar["x"] - bar["len"] / 2 and bar["x"] + bar["len"] / 2 <= end   # within its panels
    assert weight["x"] + weight["len"] / 2 < low                          # the weight bar ends before panel 3
    assert layout["coloraxis"]["cmin"] == 0
    assert layout["coloraxis"]["cmax"] == pytest.approx(max(a.max(), b.max()))   # shared, not 1
    zmax = layout["coloraxis2"]["cmax"]
    assert layout["coloraxis2"]["cmin"] == -zmax and zmax == pytest.approx(np.abs(b - a).max())
    ticks = delta["tickvals"]
    assert ticks[0] == -ticks[2] and ticks[1] == 0 and 0.9 * zmax <= ticks[2] <= zmax   # −v, 0, +v
    assert all(n["yshift"] > 0 for n in layout["annotations"])           # panel titles above the bars


def test_curves_leave_room_for_a_long_legend_above_the_plot():
    """The curves are the positional page's picture now (issue 26, item 2): a Chinese legend takes two lines at
    1280x720 and was drawn over the title; the top margin holds the title and every legend line."""
    from viz.figures.style import NORMAL
    table = np.random.default_rng(0).normal(size=(16, 256))
    short = pe_curves(table, [0, 32], Look(EN, NORMAL))
    long = pe_curves(table, [0, 32, 64, 128], Look(EN, NORMAL))
    assert long.layout.margin.t >= short.layout.margin.t + 1.5 * NORMAL.text
    assert long.layout.margin.t >= 1.4 * NORMAL.title + 2 * 1.5 * NORMAL.text
    assert (long.layout.title.yref, long.layout.title.yanchor) == ("container", "top")
