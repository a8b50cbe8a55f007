"""plot_boundaries: the drawn boundaries and the shaded ambiguous region."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nordicstats import NORDIC
from nordicstats.plotting import boundary_grid, plot_boundaries

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.fixture(scope="module")
def crossing_fits():
    """Four classes in the plane whose separate linear SVMs cross (getting-started vignette)."""
    rng = np.random.default_rng(2)
    codes = rng.choice(4, size=100, p=[0.35, 0.15, 0.15, 0.35])
    centres = np.array([[-2.0, 0.0], [0.0, 1.5], [0.0, -1.5], [2.0, 0.0]])
    X = pd.DataFrame(centres[codes] + 0.7 * rng.normal(size=(100, 2)), columns=["x1", "x2"])
    y = pd.Categorical(np.array(list("abcd"))[codes], categories=list("abcd"), ordered=True)
    bsvm = NORDIC(y, X, method="bsvm", kernel="linear").fit()
    nordic = NORDIC(y, X, method="nordic1", kernel="linear").fit()
    return X, y, bsvm, nordic


def test_grid_values_are_the_decision_function(crossing_fits):
    X, _, bsvm, _ = crossing_fits
    xx, yy, F = boundary_grid(bsvm, grid=15)
    assert xx.shape == yy.shape == (15, 15) and F.shape == (15, 15, 3)
    # Linear boundaries: f_k(x) = b_k + x'w_k computed by hand from params.
    params = bsvm.params.to_numpy()
    by_hand = params[0] + xx[..., None] * params[1] + yy[..., None] * params[2]
    np.testing.assert_allclose(F, by_hand, rtol=1e-10, atol=1e-10)
    # The grid spans the data padded by 5% of the range on each side.
    span = X["x1"].max() - X["x1"].min()
    assert xx.min() == pytest.approx(X["x1"].min() - 0.05 * span)


def test_ambiguous_share_matches_an_independent_count(crossing_fits):
    _, _, bsvm, nordic = crossing_fits
    import matplotlib.pyplot as plt

    shares = {}
    for name, res in [("bsvm", bsvm), ("nordic", nordic)]:
        ax = plot_boundaries(res, grid=80)
        xx, yy, F = boundary_grid(res, grid=80)
        crossing = np.any((F[..., :-1] < 0) & (F[..., 1:] >= 0), axis=-1)
        assert ax.ambiguous_share == pytest.approx(crossing.mean())
        shares[name] = ax.ambiguous_share
        assert len(ax.collections) >= 3  # boundaries (+ region) + scattered classes
        plt.close(ax.figure)
    assert shares["bsvm"] > 0.01 and shares["bsvm"] > shares["nordic"]


def test_points_and_labels(crossing_fits):
    X, y, bsvm, _ = crossing_fits
    import matplotlib.pyplot as plt

    ax = plot_boundaries(bsvm, X=X.to_numpy()[:10], y=np.asarray(y)[:10], grid=20,
                         legend=False, title="t")
    assert ax.get_title() == "t" and ax.get_legend() is None
    plt.close(ax.figure)
    with pytest.raises(ValueError, match=r"labels \['z'\]"):
        plot_boundaries(bsvm, X=X.to_numpy()[:2], y=["a", "z"], grid=20)
    with pytest.raises(ValueError, match="y has 1 labels but X has 2 rows"):
        plot_boundaries(bsvm, X=X.to_numpy()[:2], y=["a"], grid=20)


def test_bad_input_messages(crossing_fits):
    X, y, bsvm, _ = crossing_fits
    with pytest.raises(ValueError, match="'grid' parameter of plot_boundaries.*Got 5"):
        plot_boundaries(bsvm, grid=5)
    three = NORDIC(y, X.assign(x3=X["x1"] * 0.1 + 1.0), kernel="linear").fit()
    with pytest.raises(ValueError, match="exactly 2 covariates; this one has 3"):
        plot_boundaries(three)
    with pytest.raises(TypeError, match="fitted NORDICResults"):
        plot_boundaries(object())
    with pytest.raises(ValueError, match="one entry per boundary"):
        plot_boundaries(bsvm, grid=10, colors=["red"])
