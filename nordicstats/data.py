"""Ordinal response coding and covariate checks.

The K ordered levels of the response are coded 0, ..., K-1.  Boundary k
(0-based) separates the meta-class ``levels[:k+1]`` from ``levels[k+1:]``; its
binary label is the paper's dummy label (Section 2.2)

    y_i^(k) = -1 if y_i <= k,  +1 if y_i > k,

so a positive decision value f_k(x) > 0 says "above boundary k".  Boundary k is
named ``"a|b"`` after the two adjacent levels, R's convention (``MASS::polr``,
``ordinal::clm``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "OrdinalResponse",
    "encode_ordinal",
    "binary_signs",
    "boundary_names",
    "check_exog",
    "check_consistent_length",
    "design_from_formula",
    "design_for_new_data",
    "weights_from_data",
]


@dataclass(frozen=True)
class OrdinalResponse:
    """An ordinal response coded as integers with its level labels.

    Attributes
    ----------
    codes : ndarray of int, shape (n,)
        Level index of every observation, 0 = lowest level.
    levels : tuple
        The K level labels, lowest first, as the user gave them.
    order_source : {"categorical", "explicit", "sorted"}
        Where the order came from: an ordered ``pandas.Categorical``, the
        ``order=`` argument, or sorting the distinct labels (shown in summaries
        so that an accidental alphabetical order is visible).
    name : str
        Name of the response (series name or ``"y"``).
    """

    codes: np.ndarray
    levels: tuple
    order_source: str
    name: str = "y"

    @property
    def n_levels(self):
        """Number of ordered levels K."""
        return len(self.levels)

    @property
    def counts(self):
        """Observations per level, as an ``int`` array of length K."""
        return np.bincount(self.codes, minlength=self.n_levels)

    def labels(self, codes):
        """Map integer codes back to the user's labels.

        Returns a ``pandas.Categorical`` with the same ordered levels.
        """
        return pd.Categorical.from_codes(np.asarray(codes, dtype=int), categories=list(self.levels),
                                         ordered=True)


def encode_ordinal(y, order=None, name=None):
    """Code an ordinal response as 0..K-1 and check that it can be fitted.

    Parameters
    ----------
    y : array-like of shape (n,)
        Response.  An ordered ``pandas.Categorical`` (or a Series of one) gives
        the order of its categories, including levels not observed, which are
        an error.  Any other labels need ``order=`` or are sorted.
    order : sequence, optional
        The levels from lowest to highest.  Every observed label must appear.
    name : str, optional
        Name used in summaries; defaults to the Series name or ``"y"``.

    Returns
    -------
    OrdinalResponse

    Raises
    ------
    ValueError
        Missing values, fewer than two levels, an empty level, labels missing
        from ``order``, or an unordered categorical without ``order``.

    Examples
    --------
    >>> r = encode_ordinal(["lo", "hi", "mid", "hi"], order=["lo", "mid", "hi"])
    >>> r.codes.tolist(), r.levels
    ([0, 2, 1, 2], ('lo', 'mid', 'hi'))
    """
    if name is None:
        name = getattr(y, "name", None) or "y"
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise ValueError(
                f"endog must be one column; got a DataFrame with {y.shape[1]} columns.")
        y = y.iloc[:, 0]
    values = y.array if isinstance(y, pd.Series) else y
    if isinstance(values, pd.Categorical) and order is None:
        if not values.ordered:
            raise ValueError(
                "endog is an unordered pandas Categorical, so the order of its levels is not "
                f"known (categories: {list(values.categories)}). Make it ordered "
                "(pd.Categorical(y, categories=[...], ordered=True)) or pass order=[...]."
            )
        if values.isna().any():
            raise ValueError(_missing_message(np.flatnonzero(values.isna())))
        levels = tuple(values.categories)
        return _finish(np.asarray(values.codes, dtype=int), levels, "categorical", str(name))
    arr = np.asarray(values.astype(object) if isinstance(values, pd.Categorical) else values,
                     dtype=object)
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else None
        if arr is None:
            raise ValueError(f"endog must be one-dimensional; got shape {np.shape(values)}.")
    missing = pd.isna(arr)
    if missing.any():
        raise ValueError(_missing_message(np.flatnonzero(missing)))
    if order is None:
        try:
            levels = tuple(sorted(set(arr.tolist())))
        except TypeError as exc:
            raise ValueError(
                "endog labels of mixed types cannot be sorted into an order; pass order=[...]."
            ) from exc
        source = "sorted"
    else:
        levels = tuple(order)
        if len(set(levels)) != len(levels):
            raise ValueError(f"order has repeated levels: {list(order)}. List each level once.")
        source = "explicit"
    index = {level: code for code, level in enumerate(levels)}
    unknown = sorted({str(v) for v in arr.tolist() if v not in index})
    if unknown:
        raise ValueError(
            f"endog has labels {unknown} that are not in order={list(levels)}. "
            "Add them to order in their place."
        )
    codes = np.fromiter((index[v] for v in arr.tolist()), dtype=int, count=arr.size)
    return _finish(codes, levels, source, str(name))


def _missing_message(positions):
    shown = positions[:5].tolist()
    return (
        f"endog has {positions.size} missing value(s) (first at positions {shown}). "
        "Drop those rows (for formulas, missing='drop') or impute them before fitting."
    )


def _finish(codes, levels, source, name):
    response = OrdinalResponse(codes=codes, levels=levels, order_source=source, name=name)
    counts = response.counts
    if response.n_levels < 2 or np.count_nonzero(counts) < 2:
        raise ValueError(
            f"endog has only one class ({[levels[i] for i in np.flatnonzero(counts)]}); "
            "ordinal classification needs at least two (three or more for the noncrossing "
            "constraints to matter)."
        )
    empty = [levels[k] for k in np.flatnonzero(counts == 0)]
    if empty:
        raise ValueError(
            f"level(s) {empty} of endog have no observations, so the boundaries next to them "
            "cannot be estimated. Drop the unused levels (e.g. y.cat.remove_unused_categories()) "
            "or merge them with a neighbour."
        )
    return response


def binary_signs(codes, n_levels):
    """Dummy labels y_i^(k) for the K-1 boundaries (paper, Section 2.2).

    Parameters
    ----------
    codes : ndarray of int, shape (n,)
        Level codes 0..K-1.
    n_levels : int
        K.

    Returns
    -------
    ndarray of float, shape (n, K-1)
        ``+1`` where ``codes > k`` and ``-1`` otherwise.

    Examples
    --------
    >>> binary_signs(np.array([0, 1, 2]), 3).tolist()
    [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0]]
    """
    k = np.arange(n_levels - 1)
    return np.where(np.asarray(codes)[:, None] > k[None, :], 1.0, -1.0)


def boundary_names(levels):
    """Names ``"a|b"`` of the K-1 boundaries between adjacent levels.

    Examples
    --------
    >>> boundary_names(["L", "B", "R"])
    ['L|B', 'B|R']
    """
    return [f"{lo}|{hi}" for lo, hi in zip(levels[:-1], levels[1:])]


def check_exog(X, name="exog", allow_missing=False):
    """Return covariates as a finite 2-D float array, with their column names.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Covariates; a 1-D array is one covariate.
    name : str
        Parameter name used in error messages.
    allow_missing : bool, default=False
        Let NaN through (new data for prediction: such rows get a missing prediction).

    Returns
    -------
    values : ndarray of float, shape (n, d)
    columns : list of str
        DataFrame column names, or ``x1..xd``.

    Raises
    ------
    ValueError
        Empty input, non-numeric columns, NaN or infinite values.
    """
    if isinstance(X, pd.Series):
        X = X.to_frame()
    columns = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
    try:
        values = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be numeric; it holds values that cannot be converted to float ({exc}). "
            "Encode categorical covariates as dummies first (the formula interface does this)."
        ) from exc
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n, d); got shape {values.shape}.")
    if values.shape[0] == 0 or values.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {values.shape}); it needs rows and columns.")
    bad = ~np.isfinite(values) & ~(allow_missing & np.isnan(values))
    if bad.any():
        rows = np.flatnonzero(bad.any(axis=1))
        raise ValueError(
            f"{name} has {bad.sum()} NaN or infinite value(s) in {rows.size} row(s) "
            f"(first rows {rows[:5].tolist()}). Drop or impute them before fitting."
        )
    if columns is None:
        columns = [f"x{j + 1}" for j in range(values.shape[1])]
    return values, columns


def check_consistent_length(n_endog, n_exog):
    """Raise a clear error when endog and exog have different numbers of rows."""
    if n_endog != n_exog:
        raise ValueError(
            f"endog has {n_endog} observations but exog has {n_exog} rows; "
            "they must describe the same observations."
        )


def design_from_formula(formula, data, subset=None, missing="drop"):
    """Response and covariates of ``"response ~ terms"`` evaluated on a DataFrame.

    The response must be a column of ``data``; the right-hand side is expanded
    by patsy (dummies, interactions, transforms) and its intercept column
    dropped, because the ordinal models carry their own intercepts/thresholds.

    Parameters
    ----------
    formula : str
    data : pandas.DataFrame
    subset : array-like of bool or index labels, optional
        Rows to use.
    missing : {"drop", "raise"}, default="drop"
        Rows with a missing response or covariate are dropped or raise.

    Returns
    -------
    endog : pandas.Series
    exog : pandas.DataFrame
    design_info : patsy.DesignInfo
        To build the same columns from new data.
    n_dropped : int
        Rows removed for missing values.
    """
    import patsy

    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame; got {type(data).__name__}.")
    if missing not in ("drop", "raise"):
        raise ValueError(f"missing must be 'drop' or 'raise'; got {missing!r}.")
    lhs, sep, rhs = str(formula).partition("~")
    response = lhs.strip()
    if not sep or response not in data.columns:
        raise ValueError(
            f"formula {formula!r} must read 'response ~ terms' with the response a column of "
            f"data (columns: {list(data.columns)})."
        )
    if subset is not None:
        data = data.loc[subset]
    n_rows = len(data)
    if missing == "raise" and data[response].isna().any():
        raise ValueError(f"the response column {response!r} has missing values; "
                         "use missing='drop' or remove them.")
    data = data[data[response].notna()]
    na_action = patsy.NAAction(NA_types=["None", "NaN"]) if missing == "drop" else \
        patsy.NAAction(on_NA="raise")
    try:
        design = patsy.dmatrix(rhs, data, NA_action=na_action, return_type="dataframe")
    except patsy.PatsyError as exc:
        raise ValueError(f"could not build the design matrix for {formula!r}: {exc}") from exc
    exog = design.drop(columns=["Intercept"], errors="ignore")
    return data.loc[exog.index, response], exog, design.design_info, n_rows - len(exog)


def weights_from_data(data, weights, subset=None, missing="drop"):
    """Case weights given with a formula: a column of ``data`` or one value per row.

    Applies ``subset`` and the missing-value rule to the weights, so that
    :func:`design_from_formula` can then run on the rows that remain.

    Parameters
    ----------
    data : pandas.DataFrame
    weights : str or array-like of shape (len(data),)
        A column name of ``data`` or the weights themselves.
    subset : array-like of bool or index labels, optional
    missing : {"drop", "raise"}, default="drop"

    Returns
    -------
    data : pandas.DataFrame
        The rows in ``subset`` with a weight.
    weights : pandas.Series
        Their weights, indexed like ``data`` (align to the design's rows with ``.loc``).
    n_dropped : int
        Rows removed for a missing weight.
    """
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame; got {type(data).__name__}.")
    if isinstance(weights, str):
        if weights not in data.columns:
            raise ValueError(f"The 'weights' parameter names no column of data: {weights!r} "
                             f"(columns: {list(data.columns)}).")
        column = pd.to_numeric(data[weights], errors="coerce")
        if column.isna().sum() > data[weights].isna().sum():
            raise ValueError(f"The 'weights' column {weights!r} must be numeric. "
                             f"Got dtype {data[weights].dtype} instead.")
    else:
        values = np.asarray(weights)
        if values.ndim != 1 or values.size != len(data):
            raise ValueError(f"The 'weights' parameter must have one weight per row of data "
                             f"(length {len(data)}). Got shape {values.shape} instead.")
        column = pd.Series(values, index=data.index, dtype=float)
    if subset is not None:
        data, column = data.loc[subset], column.loc[subset]
    gone = column.isna()
    if gone.any() and missing == "raise":
        raise ValueError("the weights have missing values; use missing='drop' or remove them.")
    return data[~gone], column[~gone], int(gone.sum())


def design_for_new_data(design_info, data):
    """Covariates of new rows built with a fitted formula's design, one row per row of ``data``.

    Rows with a missing value in a variable the formula uses come back as rows of NaN
    (patsy drops them; they are put back in place), so that predictions keep the index.

    Parameters
    ----------
    design_info : patsy.DesignInfo
        From :func:`design_from_formula`.
    data : pandas.DataFrame

    Returns
    -------
    pandas.DataFrame
        Without the intercept column, indexed 0..m-1.

    Raises
    ------
    ValueError
        The data do not fit the formula (a missing column, an unseen category).
    """
    import patsy

    frame = data.reset_index(drop=True)
    try:
        (design,) = patsy.build_design_matrices([design_info], frame, return_type="dataframe")
    except patsy.PatsyError as exc:
        raise ValueError(f"new data do not fit the model formula: {exc}") from exc
    return design.drop(columns=["Intercept"], errors="ignore").reindex(range(len(frame)))
