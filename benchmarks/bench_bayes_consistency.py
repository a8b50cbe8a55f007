"""Does NORDIC's test risk approach the ordinal Bayes risk as n grows?  (paper, Section 5.1)

Generalized Fisher consistency of the hinge loss says that NORDIC's K-1 decision
functions recover the signs of P(Y > k | x) - 1/2, i.e. the ordinal Bayes rule
(the conditional median).  This script fits NORDIC on growing training sets of
the paper's simulated designs (Section 6) and compares, on a large test set,

* the mean absolute error with the minimal absolute risk (the median rule's risk),
* the 0-1 error with the 0-1 error of the median rule,
* the conditional excess absolute risk mean_i [R(phi_hat(x_i)) - R(median(x_i))]
  computed from the exact eta(x) of :mod:`nordicstats.theory.designs`
  (much less noisy than the difference of two error rates).

The Bayes quantities come from :func:`nordicstats.theory.bayes_error`
(Monte Carlo, fixed seed) and from eta on the test points themselves.
This is not a timed test: fits use the default solver and print their time.

Usage::

    python benchmarks/bench_bayes_consistency.py --design donut --sizes 50 100 200 --reps 2
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from nordicstats import NORDIC  # noqa: E402
from nordicstats.datasets import make_donut, make_nonlinear  # noqa: E402
from nordicstats.theory import (  # noqa: E402
    bayes_error,
    bayes_rule_ordinal,
    conditional_risk,
    design_probabilities,
)

_MAKERS = {"nonlinear": make_nonlinear, "donut": make_donut}


def one_fit(design, n, d, sigma, C, method, seed, X_test, eta_test, y_test):
    """Fit on a fresh training sample and score it on the shared test set."""
    X, y = _MAKERS[design](n, d=d, sigma=sigma, random_state=seed)
    start = time.perf_counter()
    res = NORDIC(y, X, method=method, C=C).fit()
    seconds = time.perf_counter() - start
    pred = np.asarray(pd.Categorical(res.predict(X_test)).codes)
    truth = np.asarray(y_test.cat.codes)
    median = bayes_rule_ordinal(eta_test)
    return {
        "n": n, "seed": seed, "fit_seconds": seconds,
        "error_01": float(np.mean(pred != truth)),
        "mae": float(np.mean(np.abs(pred - truth))),
        "excess_abs": float(np.mean(conditional_risk(eta_test, pred, "absolute")
                                    - conditional_risk(eta_test, median, "absolute"))),
        "excess_01_vs_median": float(np.mean(conditional_risk(eta_test, pred, "zero_one")
                                             - conditional_risk(eta_test, median, "zero_one"))),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", choices=sorted(_MAKERS), default="donut")
    parser.add_argument("--sigma", type=float, default=None,
                        help="noise standard deviation (default: 0.4 donut, 1.0 nonlinear)")
    parser.add_argument("--d", type=int, default=2, help="number of covariates (paper: >= 10)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--n-test", type=int, default=5000)
    parser.add_argument("--C", type=float, default=1.0,
                        help="hinge weight; fixed, so the per-observation penalty 1/(C n) "
                             "shrinks as n grows")
    parser.add_argument("--method", default="nordic1")
    args = parser.parse_args(argv)
    sigma = args.sigma if args.sigma is not None else {"donut": 0.4, "nonlinear": 1.0}[args.design]

    print(f"design={args.design} sigma={sigma} (noise sd) d={args.d} method={args.method} "
          f"C={args.C}; OMP/OPENBLAS threads = 1 on a machine shared with other jobs")
    ordinal01 = bayes_error(args.design, sigma, loss="zero_one", rule="ordinal", n=200_000)
    mode01 = bayes_error(args.design, sigma, loss="zero_one", n=200_000)
    abs_risk = bayes_error(args.design, sigma, loss="absolute", n=200_000)
    print(f"Bayes (Monte Carlo, n=200000, seed 0): min absolute risk {abs_risk.error:.4f} "
          f"(se {abs_risk.se:.4f}); 0-1 error of the median rule {ordinal01.error:.4f}; "
          f"min 0-1 error (mode) {mode01.error:.4f}")

    X_test, y_test = _MAKERS[args.design](args.n_test, d=args.d, sigma=sigma,
                                          random_state=12345)
    eta_test = design_probabilities(args.design, X_test, sigma)
    median, codes = bayes_rule_ordinal(eta_test), np.asarray(y_test.cat.codes)
    print(f"test set n={args.n_test}: median rule MAE {np.mean(np.abs(median - codes)):.4f}, "
          f"0-1 error {np.mean(median != codes):.4f}")

    rows = [one_fit(args.design, n, args.d, sigma, args.C, args.method, 1000 * rep + n,
                    X_test, eta_test, y_test)
            for n in args.sizes for rep in range(args.reps)]
    table = pd.DataFrame(rows).groupby("n").mean(numeric_only=True).drop(columns="seed")
    table["mae / min abs risk"] = table["mae"] / abs_risk.error
    table["error_01 / median-rule 0-1"] = table["error_01"] / ordinal01.error
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.precision", 4):
        print(table)
    return table


if __name__ == "__main__":
    main()
