"""Tuning-parameter selection as in the paper (Section 6).

Every classifier of the comparison is tuned over the same grid:

* ``C`` in 2^-4, 2^-3, ..., 2^4 (``C = 1/lambda``, the weight of the hinge slacks);
* the Gaussian kernel ``k(x, x') = exp(-gamma ||x - x'||^2)`` with width sigma
  equal to the 10%, 50% and 90% quantiles of the pairwise distances between
  training vectors, ``gamma = 1 / (2 sigma^2)``
  (:func:`nordicstats.kernels.gamma_candidates`).

Two protocols choose a grid point:

* **tuning set** (the paper's): fit on the training set, score on a separate
  tuning set;
* **k-fold cross-validation**: stratified folds (:func:`stratified_folds`,
  deterministic for a given ``random_state``); the score of a grid point is the
  criterion computed on the pooled out-of-fold predictions.

The criterion is the error rate by default, or the mean absolute error, or the
weighted error ``mean(cost[y, yhat])`` for a cost matrix (Section 6.2, Section 7),
or any callable ``score(y_true, y_pred)`` where smaller is better.

Ties (equal scores) are broken deterministically: the smallest ``C`` first,
then the ``gamma`` nearest the middle of the gamma grid (the median-distance
width of the paper's grid), then the smaller ``gamma`` (the wider kernel);
any other parameter by its position in the grid.

For the NORDIC methods (``bsvm``, ``nordic0``, ``nordic1``, ``nordic2``) the
model, its training kernel matrix and the kernel matrix between the evaluation
and training rows are built once per width and fold and reused along the ``C``
grid: each ``C`` only re-solves the problem, along the solver layer's path over C
(:class:`nordicstats.solvers.SolverPath`), which starts each solve from the solution at
the previous ``C`` where the solver can and keeps NORDIC-2's relaxation LPs.  The
competitors (libsvm-based SVR and DR, CK, ordered logit) are refitted from the
data at every grid point.
"""

from __future__ import annotations

import inspect
import time
import warnings
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd
from sklearn.model_selection import ParameterGrid, StratifiedKFold

from nordicstats import metrics, solvers
from nordicstats._validation import check_int
from nordicstats.class_rule import predict_codes
from nordicstats.compare import NORDIC_METHODS, make_classifier
from nordicstats.exceptions import SolverError
from nordicstats.kernels import gamma_candidates
from nordicstats.weighting import check_case_weights

__all__ = [
    "PAPER_C_GRID",
    "PAPER_WIDTH_QUANTILES",
    "TuningResults",
    "default_grid",
    "make_scorer",
    "select_best",
    "stratified_folds",
    "tune",
]

#: The paper's grid for C: 2^-4, ..., 2^4.
PAPER_C_GRID = tuple(2.0 ** np.arange(-4, 5))
#: The paper's kernel widths: these quantiles of the pairwise training distances.
PAPER_WIDTH_QUANTILES = (0.1, 0.5, 0.9)
# Relative tolerance under which two scores count as tied (scores are means of
# costs over at most ~1e6 points, so real differences are far larger).
_TIE_TOLERANCE = 1e-12
# Failures of one grid point that are recorded (score = inf) instead of aborting.
_GRID_POINT_ERRORS = (SolverError, ValueError, np.linalg.LinAlgError)


@dataclass(frozen=True)
class TuningResults:
    """Outcome of :func:`tune`.

    Attributes
    ----------
    scores : pandas.DataFrame
        One row per grid point, in grid order: the parameters, ``score`` (the
        criterion on the tuning set or pooled over the CV folds), ``split<j>``
        fold scores (CV), ``fit_time`` (seconds, all folds), ``rank`` (1 = best,
        after tie-breaking), ``message`` (why a grid point failed, else "") and
        ``warning`` (warnings raised while fitting it, else "").
    best_params : dict
        The selected grid point.
    best_score : float
    best_index : int
        Row of ``scores`` that was selected.
    estimator : object or None
        The classifier refit on all of ``(X, y)`` with ``best_params`` and the
        plain ``kernel="rbf"`` (None when ``refit=False``).
    protocol : {"holdout", "cv"}
    scoring : str
        Name of the criterion.
    n_splits : int
        1 for the tuning-set protocol.
    folds : list of (train_index, test_index) or None
        The CV folds (None for the tuning-set protocol).
    """

    scores: pd.DataFrame
    best_params: dict
    best_score: float
    best_index: int
    estimator: object = None
    protocol: str = "holdout"
    scoring: str = "error"
    n_splits: int = 1
    folds: list = field(default=None, repr=False)

    def __repr__(self):
        return (f"TuningResults(protocol={self.protocol!r}, scoring={self.scoring!r}, "
                f"best_params={self.best_params}, best_score={self.best_score:.6g}, "
                f"grid_points={len(self.scores)})")


def stratified_folds(y, n_splits=5, random_state=None):
    """Stratified k-fold partition, deterministic for a given ``random_state``.

    scikit-learn's ``StratifiedKFold`` with shuffling: every fold has ``floor`` or
    ``ceil`` of ``n_c / k`` members of class ``c`` and fold sizes differ by at most one.

    Parameters
    ----------
    y : array-like of shape (n,)
        Class labels.
    n_splits : int, default=5
        Number of folds k >= 2; every class needs at least k members.
    random_state : int, numpy Generator or None

    Returns
    -------
    list of (train_index, test_index)
        k pairs of sorted integer arrays; the test parts partition ``range(n)``.

    Examples
    --------
    >>> folds = stratified_folds(["a"] * 4 + ["b"] * 2, n_splits=2, random_state=0)
    >>> [len(test) for _, test in folds]
    [3, 3]
    """
    n_splits = check_int(n_splits, "n_splits", 2)
    codes, levels = _factorize(y)
    counts = np.bincount(codes, minlength=len(levels))
    if counts.min() < n_splits:
        small = levels[int(np.argmin(counts))]
        raise ValueError(
            f"class {small!r} has only {counts.min()} observations, fewer than n_splits="
            f"{n_splits}; use n_splits <= {counts.min()} or the tuning-set protocol.")
    if isinstance(random_state, np.random.Generator):  # scikit-learn takes ints/RandomState
        random_state = int(random_state.integers(2**32 - 1))
    splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    return [(np.sort(train), np.sort(test))
            for train, test in splitter.split(np.zeros((codes.size, 1)), codes)]


def _factorize(y):
    values = y.array if isinstance(y, pd.Series) else y
    if isinstance(values, pd.Categorical):
        return values.codes.astype(int), list(values.categories)
    codes, uniques = pd.factorize(pd.Series(np.asarray(values, dtype=object)), sort=True)
    if np.any(codes < 0):
        raise ValueError("y has missing values; drop them before tuning.")
    return codes.astype(int), list(uniques)


def make_scorer(scoring="error", levels=None):
    """Turn a criterion specification into ``(name, score(y_true, y_pred))``.

    (Not scikit-learn's ``make_scorer``: its scorers are called as
    ``scorer(estimator, X, y)`` and predict themselves, while the paper's criteria are
    applied to predictions already made -- pooled out-of-fold predictions under CV,
    and one prediction per ``C`` along a kernel path.)

    Parameters
    ----------
    scoring : {"error", "mae"}, array-like or DataFrame of shape (K, K), or callable
        ``"error"``: error rate; ``"mae"``: mean absolute error in levels; a cost
        matrix ``cost[true, predicted]``: weighted error; a callable
        ``f(y_true, y_pred) -> float``: used as is (called with ``sample_weight=``
        when the tuning has case weights).  Smaller is better.  The returned
        ``score(y_true, y_pred, sample_weight=None)`` takes case weights.
    levels : sequence, optional
        The ordered levels (needed for ``"mae"`` and for an array of costs).

    Returns
    -------
    name : str
    score : callable

    Examples
    --------
    >>> name, score = make_scorer("error")
    >>> name, score([1, 2, 3], [1, 2, 2])
    ('error', 0.3333333333333333)
    """
    if callable(scoring):
        def custom(t, p, sample_weight=None):
            if sample_weight is None:
                return scoring(t, p)
            return scoring(t, p, sample_weight=sample_weight)

        return getattr(scoring, "__name__", "custom"), custom
    if isinstance(scoring, str):
        if scoring == "error":
            return "error", metrics.error_rate
        if scoring == "mae":
            return "mae", partial(metrics.mean_absolute_error, labels=levels)
        raise ValueError(f"The 'scoring' parameter must be 'error', 'mae', a (K, K) cost matrix "
                         f"or a callable. Got {scoring!r} instead.")
    cost = scoring if isinstance(scoring, pd.DataFrame) else np.asarray(scoring, dtype=float)
    if np.ndim(cost) != 2:
        raise ValueError(f"The 'scoring' parameter must be 'error', 'mae', a (K, K) cost matrix "
                         f"or a callable. Got an array of shape {np.shape(cost)} instead.")
    labels = None if isinstance(cost, pd.DataFrame) else levels
    return "weighted_error", partial(metrics.weighted_error, cost_matrix=cost, labels=labels)


def _resolve_factory(estimator):
    if isinstance(estimator, str):
        make_classifier(estimator)  # validates the name now, with compare's message
        return lambda **params: make_classifier(estimator, **params)
    if callable(estimator):
        return estimator
    raise TypeError(f"The 'estimator' parameter must be a method name for "
                    f"nordicstats.compare.make_classifier or a callable returning a classifier. "
                    f"Got {type(estimator).__name__} instead.")


def _accepted_params(factory):
    probe = factory()
    if hasattr(probe, "get_params"):
        return set(probe.get_params())
    return set(inspect.signature(type(probe)).parameters)


def default_grid(estimator, X, C=PAPER_C_GRID, quantiles=PAPER_WIDTH_QUANTILES, weights=None):
    """The paper's grid restricted to the parameters the classifier has.

    ``C`` over ``C`` (default 2^-4..2^4) when the classifier takes ``C``;
    ``gamma`` over :func:`~nordicstats.kernels.gamma_candidates` of ``X`` at
    ``quantiles`` when it takes ``gamma`` (case ``weights`` count as frequencies).
    A classifier with neither (ordered logit) gets the empty grid: a single fit.

    Returns
    -------
    dict of str -> list
    """
    accepted = _accepted_params(_resolve_factory(estimator))
    grid = {}
    if "C" in accepted:
        grid["C"] = [float(c) for c in C]
    if "gamma" in accepted:
        grid["gamma"] = [float(g) for g in gamma_candidates(np.asarray(X, float), quantiles,
                                                            weights)]
    return grid


def _check_grid(param_grid):
    if not isinstance(param_grid, dict):
        raise TypeError(f"The 'param_grid' parameter must be a dict of lists. "
                        f"Got {type(param_grid).__name__} instead.")
    grid = {}
    for name, values in param_grid.items():
        values = list(np.atleast_1d(values).tolist()) if not isinstance(values, list) else values
        if len(values) == 0:
            raise ValueError(f"param_grid[{name!r}] is empty; give at least one value.")
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"param_grid[{name!r}] has repeated values {values}.")
        grid[name] = values
    return grid


def _grid_points(grid):
    """Column names and grid points, ``C`` innermost so that one path serves the C grid.

    scikit-learn's ``ParameterGrid`` enumerates the other parameters (sorted by name).
    """
    names = sorted(grid, key=lambda name: (name != "gamma", name))
    others = {name: values for name, values in grid.items() if name != "C"}
    Cs = grid.get("C", [None])
    points = [{**point, **({} if C is None else {"C": C})}
              for point in ParameterGrid(others) for C in Cs]
    return names, [{name: point[name] for name in names} for point in points]


def select_best(scores, grid):
    """Index of the best grid point, ties broken deterministically.

    Among the rows whose ``score`` is within a relative 1e-12 of the minimum,
    prefer the smallest ``C``, then the ``gamma`` nearest the middle of the
    gamma grid, then the smaller ``gamma``, then earlier positions of any other
    parameter.

    Parameters
    ----------
    scores : pandas.DataFrame
        A ``score`` column and one column per parameter.
    grid : dict of str -> list

    Returns
    -------
    int
        Position (0-based) of the selected row.
    """
    values = scores["score"].to_numpy(dtype=float)
    if not np.any(np.isfinite(values)):
        first = scores["message"].iloc[0] if "message" in scores else ""
        raise ValueError(f"every grid point failed, so no parameters can be selected; the first "
                         f"failure was: {first}")
    best = np.nanmin(values[np.isfinite(values)])
    tied = np.flatnonzero(values <= best + _TIE_TOLERANCE * max(1.0, abs(best)))

    def key(row):
        parts = []
        for name in sorted(grid, key=lambda n: (n != "C", n != "gamma", n)):
            position = grid[name].index(scores[name].iloc[row])
            if name == "C":
                parts.append((float(scores[name].iloc[row]),))
            elif name == "gamma":
                middle = (len(grid[name]) - 1) / 2
                parts.append((abs(position - middle), float(scores[name].iloc[row])))
            else:
                parts.append((position,))
        return tuple(parts)

    return int(min(tied, key=key))


def _take(data, index):
    return data.iloc[index] if isinstance(data, (pd.Series, pd.DataFrame)) else \
        np.asarray(data)[index]


class _RefitAtEachPoint:
    """Generic path: build and fit the classifier from the data at every grid point."""

    def __init__(self, factory, params, X_fit, y_fit, X_eval, w_fit=None, warm_start=False):
        self.factory, self.params = factory, params
        self.X_fit, self.y_fit, self.X_eval, self.w_fit = X_fit, y_fit, X_eval, w_fit

    def __call__(self, C):
        extra = {} if C is None else {"C": C}
        model = self.factory(**self.params, **extra)
        model = (model.fit(self.X_fit, self.y_fit) if self.w_fit is None
                 else model.fit(self.X_fit, self.y_fit, sample_weight=self.w_fit))
        return model.predict(self.X_eval)


class _NordicPath:
    """NORDIC path: one model and two kernel matrices per width; each C re-solves the problem.

    The solves along the C grid are the solver layer's path
    (:class:`nordicstats.solvers.SolverPath`), which starts each from the previous
    solution where the solver can.  The predictions are those of
    ``NORDIC.fit().predict``: the same problem and solver, and
    f_k(x) = K(x, X) omega_k + b_k with the stored K(x, X).
    """

    def __init__(self, factory, params, X_fit, y_fit, X_eval, w_fit=None, warm_start=True):
        self.model = factory(**params).build(X_fit, y_fit, w_fit)
        self.gram_eval = self.model.kernel(self.model.exog_for(X_eval), self.model.exog)
        self.solutions = solvers.SolverPath(lambda C: self.model.build_problem(C=C),
                                            self.model.solver, warm_start,
                                            **self.model.solver_options)

    def __call__(self, C):
        result = self.solutions.solve(C)
        F = self.gram_eval @ result.dual_coef + result.intercept
        return self.model.response.labels(predict_codes(F))


def _uses_nordic_path(factory, grid):
    probe = factory()
    return (getattr(probe, "name", None) in NORDIC_METHODS and hasattr(probe, "build")
            and probe.get_params().get("kernel") == "rbf" and "gamma" in grid)


def _evaluate_grid(factory, points, evaluations, score, nordic_path, warm_start=True):
    """Score every grid point over the evaluation pairs (one for holdout, k for CV).

    Points come with all non-C parameters outermost, so a path (model and kernel
    matrices) is built once per setting of the other parameters and fold.
    """
    rows, paths, current, build_error = [], None, None, None
    path_class = _NordicPath if nordic_path else _RefitAtEachPoint
    for point in points:
        others = {k: v for k, v in point.items() if k != "C"}
        start, message, fold_scores, predictions = time.perf_counter(), "", [], []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if others != current:
                    current, paths, build_error = others, None, None
                    try:
                        paths = [path_class(factory, others, X_fit, y_fit, X_eval, w_fit,
                                            warm_start)
                                 for X_fit, y_fit, X_eval, _, w_fit, _ in evaluations]
                    except _GRID_POINT_ERRORS as exc:
                        build_error = exc
                if build_error is not None:
                    raise build_error
                for path, (_, _, _, y_eval, _, w_eval) in zip(paths, evaluations, strict=True):
                    predictions.append(path(point.get("C")))
                    fold_scores.append(float(score(y_eval, predictions[-1],
                                                   sample_weight=w_eval)))
            except _GRID_POINT_ERRORS as exc:
                message = f"{type(exc).__name__}: {exc}"
        rows.append({**point, "fold_scores": fold_scores, "predictions": predictions,
                     "fit_time": time.perf_counter() - start, "message": message,
                     "warning": "; ".join(sorted({f"{w.category.__name__}: {w.message}"
                                                  for w in caught}))})
    return rows


def tune(estimator, X, y, *, param_grid=None, X_tune=None, y_tune=None, cv=None,
         scoring="error", random_state=None, refit=True, warm_start=True, weights=None,
         weights_tune=None):
    """Choose tuning parameters on a tuning set (the paper) or by stratified k-fold CV.

    Parameters
    ----------
    estimator : str or callable
        A method name for :func:`nordicstats.compare.make_classifier`
        (``"nordic1"``, ``"bsvm"``, ``"svr"``, ...) or a factory
        ``f(**params) -> classifier`` with ``fit(X, y)`` and ``predict(X)``.
    X, y : training covariates (n, d) and ordinal labels (n,)
    param_grid : dict of str -> list, optional
        Default :func:`default_grid`: the paper's ``C`` and ``gamma`` grids (the
        widths from all of ``X``, also under CV).
    X_tune, y_tune : optional
        The tuning set (paper's protocol).  If omitted, k-fold CV is used.
    cv : int, optional
        Number of stratified folds (default 5 when there is no tuning set).
    scoring : str, cost matrix or callable, default="error"
        See :func:`make_scorer`; smaller is better.
    random_state : int or None
        Seeds the CV folds.
    refit : bool, default=True
        Refit on ``(X, y)`` with the selected parameters and ``kernel="rbf"``.
    warm_start : bool, default=True
        Along the C grid, start each NORDIC solve from the solution at the previous C
        where the solver can (:mod:`nordicstats.solvers.path`).  The answer is the same
        optimum to the solver's tolerance; the refit always starts cold.
    weights : array-like of shape (n,), optional
        Case weights of (X, y): every fit gets its training rows' weights
        (``sample_weight``, NORDIC's methods only) and every score weights its
        rows, so a cost-matrix ``scoring`` is the weighted cost the fit targets.
    weights_tune : array-like, optional
        Case weights of the tuning set (default: unit weights).

    Returns
    -------
    TuningResults

    Examples
    --------
    >>> from nordicstats.datasets import make_nonlinear
    >>> X, y = make_nonlinear(60, d=2, random_state=0)
    >>> res = tune("bsvm", X, y, param_grid={"C": [0.5, 1.0], "gamma": [0.1]}, cv=3,
    ...            random_state=0)
    >>> sorted(res.best_params)
    ['C', 'gamma']
    """
    factory = _resolve_factory(estimator)
    if (X_tune is None) != (y_tune is None):
        raise ValueError("give both X_tune and y_tune (tuning-set protocol) or neither (CV).")
    if X_tune is not None and cv is not None:
        raise ValueError(f"cv={cv!r} was given together with a tuning set; use one protocol.")
    levels = _factorize(y)[1]
    name, score = make_scorer(scoring, levels)
    if weights is not None:
        weights = check_case_weights(weights, len(y), owner="tune")
    if weights_tune is not None:
        weights_tune = check_case_weights(weights_tune, len(y_tune), owner="tune",
                                          name="weights_tune")
    grid = _check_grid(default_grid(estimator, X, weights=weights) if param_grid is None
                       else param_grid)
    names, points = _grid_points(grid)
    if X_tune is not None:
        protocol, folds = "holdout", None
        evaluations = [(X, y, X_tune, y_tune, weights, weights_tune)]
    else:
        protocol = "cv"
        folds = stratified_folds(y, 5 if cv is None else cv, random_state)
        evaluations = [(_take(X, tr), _take(y, tr), _take(X, te), _take(y, te),
                        None if weights is None else weights[tr],
                        None if weights is None else weights[te]) for tr, te in folds]
    rows = _evaluate_grid(factory, points, evaluations, score, _uses_nordic_path(factory, grid),
                          warm_start)
    scores = _score_table(rows, names, folds, y, partial(score, sample_weight=weights))
    best = select_best(scores, grid)
    scores["rank"] = _ranks(scores, best)
    failed = scores["message"].ne("").sum()
    if failed:
        warnings.warn(f"{failed} of {len(scores)} grid points failed and were skipped (score "
                      f"inf); first: {scores.loc[scores['message'].ne(''), 'message'].iloc[0]}",
                      RuntimeWarning, stacklevel=2)
    warned = scores["warning"].ne("").sum()
    if warned:
        warnings.warn(f"{warned} of {len(scores)} grid points raised warnings (see the 'warning' "
                      f"column); first: {scores.loc[scores['warning'].ne(''), 'warning'].iloc[0]}",
                      RuntimeWarning, stacklevel=2)
    best_params = {k: scores[k].iloc[best] for k in names}
    best_params = {k: (float(v) if isinstance(v, (float, np.floating)) else v)
                   for k, v in best_params.items()}
    fitted = None
    if refit:
        fitted = factory(**best_params)
        fitted = (fitted.fit(X, y) if weights is None
                  else fitted.fit(X, y, sample_weight=weights))
    return TuningResults(scores=scores, best_params=best_params,
                         best_score=float(scores["score"].iloc[best]), best_index=best,
                         estimator=fitted, protocol=protocol, scoring=name,
                         n_splits=len(evaluations), folds=folds)


def _score_table(rows, names, folds, y, score):
    records = []
    for row in rows:
        record = {k: row[k] for k in names}
        if row["message"]:
            record["score"] = np.inf
        elif folds is None:
            record["score"] = row["fold_scores"][0]
        else:  # pooled out-of-fold predictions, in the original row order
            record["score"] = _pooled_score(row["predictions"], folds, y, score)
        for j, value in enumerate(row["fold_scores"] if folds is not None else []):
            record[f"split{j}"] = value
        record["fit_time"] = row["fit_time"]
        record["message"] = row["message"]
        record["warning"] = row["warning"]
        records.append(record)
    return pd.DataFrame.from_records(records)


def _pooled_score(predictions, folds, y, score):
    pooled = np.empty(len(y), dtype=object)
    for (_, test), pred in zip(folds, predictions, strict=True):
        pooled[test] = np.asarray(pred, dtype=object)
    values = y.array if isinstance(y, pd.Series) else y
    if isinstance(values, pd.Categorical):
        pooled = pd.Categorical(pooled, categories=values.categories, ordered=values.ordered)
    return float(score(y, pooled))


def _ranks(scores, best):
    order = scores["score"].rank(method="min").to_numpy().astype(int)
    order[best] = 1
    return np.where((order == 1) & (np.arange(len(order)) != best), 2, order)
