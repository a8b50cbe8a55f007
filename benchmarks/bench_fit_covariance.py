"""What the default covariance adds to a linear fit: ``fit()`` against ``fit(cov_type="none")``.

``fit()`` computes the covariance that ``cov_type`` asks for when it builds the results
(the default, ``"auto"`` for a linear fit: the validity diagnostics, which need the
unconstrained BSVM fit, then the Bahadur sandwich, or the bootstrap for a boundary that
fails them).  This script times both on bench_scale's linear design (likert, d = 10,
K = 4, C = 1), alternating the two so that both see the same machine load, and prints
the ratio of the medians.  Target: the default within 2x of the fit alone at
n = 10^5.

    python benchmarks/bench_fit_covariance.py [--n 100000] [--repeats 3]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import make_design  # noqa: E402

from nordicstats import NORDIC  # noqa: E402


def timed_fit(model, cov_type):
    """(seconds, results) of ``model.fit(cov_type=cov_type)``, warnings recorded."""
    start = time.perf_counter()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        res = model.fit(cov_type=cov_type)
    return time.perf_counter() - start, res


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = make_design("likert", args.n, 4, 0, d=10)
    model = NORDIC(y, X, kernel="linear", C=1.0)
    timed_fit(model, "none")  # first fit: imports and compiled loops
    seconds = {"none": [], "default": []}
    for _ in range(args.repeats):
        seconds["none"].append(timed_fit(model, "none")[0])
        elapsed, res = timed_fit(model, None)
        seconds["default"].append(elapsed)
    sources = [c.estimator for c in res.covariance.sources]
    ratio = statistics.median(seconds["default"]) / statistics.median(seconds["none"])
    print(f"n = {args.n}, K = 4, d = 10: fit alone {statistics.median(seconds['none']):.2f} s, "
          f"fit() with cov_type={res.cov_type!r} ({', '.join(sources)}) "
          f"{statistics.median(seconds['default']):.2f} s (medians of {args.repeats})")
    print(f"ratio {ratio:.2f} [target 2x: {'met' if ratio <= 2 else 'MISSED'}]")


if __name__ == "__main__":
    main()
