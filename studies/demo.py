"""Demo: every method on the built-in balance-scale data.

Run ``python -m studies.demo`` (or ``bash scripts/run_demo.sh``).  It splits
the 625 balance-scale rows (paper, Section 7) into a stratified training set and
a test set, prints the summary of a linear NORDIC-1 fit (coefficients with
Bahadur standard errors) and of an RBF NORDIC-1 fit, then fits BSVM, NORDIC-0/1/2
and the paper's competitors with the same C and width and prints a comparison
table: test error, weighted error (cost 2 for L<->R, 1 otherwise), mean absolute
error, the share of test points classified B, and the boundary-crossing rate.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import time
import warnings

import numpy as np
import pandas as pd

from nordicstats.compare import make_classifier
from nordicstats.datasets import load_balance_scale, stratified_split
from nordicstats.kernels import gamma_candidates
from nordicstats.metrics import BALANCE_COSTS, error_rate, mean_absolute_error, weighted_error
from nordicstats.model import NORDIC

FEATURES = ["left_weight", "left_distance", "right_weight", "right_distance"]
METHODS = ["bsvm", "nordic0", "nordic1", "nordic2", "svr", "ologit", "dr", "ck"]


def comparison_table(train, test, C=1.0, gamma=None, methods=METHODS):
    """Fit each method on ``train`` and score it on ``test``.

    Returns
    -------
    pandas.DataFrame
        One row per method: error, weighted error, MAE, share predicted B,
        crossing rate on the test set (NaN where the method has no K-1
        boundaries) and fit seconds.
    """
    Xtr, ytr = train[FEATURES], train["balance"]
    Xte, yte = test[FEATURES], test["balance"]
    gamma = float(gamma_candidates(Xtr.to_numpy(), (0.5,))[0]) if gamma is None else gamma
    rows = []
    for name in methods:
        if name == "nordic2" and importlib.util.find_spec("pyscipopt") is None:
            continue
        params = {} if name == "ologit" else {"C": C, "gamma": gamma}
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = make_classifier(name, **params).fit(Xtr, ytr)
        seconds = time.perf_counter() - start
        pred = pd.Categorical(np.asarray(clf.predict(Xte)), categories=ytr.cat.categories,
                              ordered=True)
        crossing = getattr(getattr(clf, "results_", None), "crossing_rate", None)
        rows.append({
            "method": name,
            "error": error_rate(yte, pred),
            "weighted error": weighted_error(yte, pred, BALANCE_COSTS),
            "MAE": mean_absolute_error(yte, pred),
            "share B": float(np.mean(np.asarray(pred) == "B")),
            "crossing rate": crossing(Xte) if callable(crossing) else np.nan,
            "seconds": seconds,
        })
    return pd.DataFrame(rows).set_index("method")


def main(argv=None):
    """Run the demo and print its tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-train", type=int, default=125,
                        help="training rows (the paper uses 52, 79, 125, 208)")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)

    data = load_balance_scale()
    train_idx, test_idx = stratified_split(data["balance"], [args.n_train],
                                           random_state=args.seed)
    train, test = data.iloc[train_idx], data.iloc[test_idx]
    print(f"Balance-scale data: {len(data)} rows, classes "
          f"{data['balance'].value_counts().reindex(['L', 'B', 'R']).to_dict()}; "
          f"{len(train)} for training, {len(test)} for testing.\n")
    stamp = dt.datetime(2026, 1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linear = NORDIC(train["balance"], train[FEATURES], kernel="linear", C=args.C)
        print(linear.fit(fitted_at=stamp).summary())
        print()
        rbf = NORDIC(train["balance"], train[FEATURES], kernel="rbf", C=args.C)
        print(rbf.fit(fitted_at=stamp).summary())
    print("\nComparison on the test set (same C, median-distance RBF width):")
    table = comparison_table(train, test, C=args.C)
    with pd.option_context("display.float_format", "{:.4f}".format, "display.width", 120):
        print(table)
    return table


if __name__ == "__main__":
    main()
