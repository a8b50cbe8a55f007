"""Kernels and the paper's width rule, checked against scipy/scikit-learn computations."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from nordicstats.kernels import (
    check_gram,
    gamma_candidates,
    make_kernel,
    pairwise_distance_quantiles,
    width_to_gamma,
)

rng = np.random.default_rng(0)
X = rng.normal(size=(40, 3))
Z = rng.normal(size=(7, 3))


def test_kernels_match_scikit_learn():
    np.testing.assert_allclose(make_kernel("rbf", gamma=0.3)(X, Z), rbf_kernel(X, Z, gamma=0.3),
                               rtol=1e-12)
    np.testing.assert_allclose(make_kernel("poly", gamma=0.5, degree=2, coef0=1.0)(X, Z),
                               polynomial_kernel(X, Z, degree=2, gamma=0.5, coef0=1.0), rtol=1e-12)
    np.testing.assert_allclose(make_kernel("linear")(X, Z), X @ Z.T, rtol=1e-12)


def test_width_rule_uses_pairwise_distance_quantiles():
    d = pdist(X)
    np.testing.assert_allclose(pairwise_distance_quantiles(X), np.quantile(d, [0.1, 0.5, 0.9]))
    np.testing.assert_allclose(gamma_candidates(X), 1 / (2 * np.quantile(d, [0.1, 0.5, 0.9]) ** 2))
    assert make_kernel("rbf", X).gamma == pytest.approx(1 / (2 * np.median(d) ** 2))
    assert width_to_gamma(2.0) == 0.125


def test_width_rule_subsample_is_deterministic_for_large_n():
    big = np.random.default_rng(1).normal(size=(1500, 2))
    a, b = pairwise_distance_quantiles(big), pairwise_distance_quantiles(big)
    np.testing.assert_array_equal(a, b)
    # a 1000-row subsample's median distance is within a few percent of the full one
    # (measured 2.5% here); 5% still catches a wrong statistic such as the mean or a quantile
    assert a[1] == pytest.approx(np.median(pdist(big)), rel=0.05)


@pytest.mark.parametrize("kwargs,message", [
    ({"kernel": "sigmoid"},
     r"'kernel' parameter of NORDIC must be one of \['linear', 'rbf', 'poly'\]"),
    ({"kernel": "rbf", "gamma": -1.0},
     r"'gamma' parameter of NORDIC must be a float in \(0, inf\)"),
    ({"kernel": "rbf", "gamma": np.nan}, r"'gamma' parameter"),
    ({"kernel": "poly", "gamma": 1.0, "degree": 0}, r"'degree' parameter of NORDIC must be an int"),
])
def test_bad_kernel_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_kernel(X=X, **kwargs)


def test_user_kernel_checks():
    bad = make_kernel(lambda A, B: -(A @ B.T))  # negative definite
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_gram(bad(X, X), bad)
    asym = make_kernel(lambda A, B: A @ B.T + np.arange(B.shape[0])[None, :])
    with pytest.raises(ValueError, match="non-symmetric"):
        check_gram(asym(X, X), asym)
    wrong_shape = make_kernel(lambda A, B: np.zeros((2, 2)))
    with pytest.raises(ValueError, match="must return the"):
        wrong_shape(X, Z)
    singular = make_kernel(lambda A, B: A[:, :1] @ B[:, :1].T)  # rank one is allowed
    check_gram(singular(X, X), singular)
