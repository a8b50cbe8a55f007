"""Generate tests/results/inference_summary.txt, the golden text of a linear NORDIC summary.

Run from the repository root:  python tests/results/make_inference_summary.py
The fit is deterministic (seeded data, quadprog); the values that change from run to run,
the time stamp, the solver's wall-clock time and its certificate (round-off at the 1e-10
level, which the summary prints to two digits), are frozen here, not edited out.
tests/test_inference.py::test_summary_golden_text rebuilds the same results with
:func:`build_results` and compares the text.
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib
import warnings

import numpy as np
import pandas as pd

GOLDEN = pathlib.Path(__file__).with_name("inference_summary.txt")
FITTED_AT = datetime.datetime(2026, 1, 2, 3, 4, 5)


def build_results():
    """Linear NORDIC-1 on 400 seeded rows, three ordered levels, default covariance ("auto").

    400 rows: every boundary has >= 100 rows on each side, so the validity diagnostics pass
    and both boundaries use the Bahadur sandwich (at 120 rows they are bootstrapped).
    """
    from nordicstats import NORDIC, NORDICResults
    from nordicstats.exceptions import InferenceWarning

    rng = np.random.default_rng(20261122)
    X = pd.DataFrame(rng.normal(size=(400, 2)), columns=["age", "dose"])
    latent = 1.2 * X["age"] - 0.8 * X["dose"] + rng.logistic(size=400) * 0.6
    y = pd.Categorical(np.digitize(latent, [-0.6, 0.6]), ordered=True).rename_categories(
        ["low", "mid", "high"])
    model = NORDIC(pd.Series(y, name="severity"), X, kernel="linear", method="nordic1",
                   solver="primal")  # pinned: the golden text must not follow "auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        res = model.fit(cov_type="none")
        solver_result = res.solver_result
        certificate = dataclasses.replace(solver_result.certificate, gap=1e-10,
                                          primal_violation=0.0, dual_violation=1e-15)
        frozen = dataclasses.replace(solver_result, time=0.5, kkt_residual=1e-10, gap=1e-10,
                                     max_violation=1e-15, certificate=certificate)
        return NORDICResults(model, frozen, cov_type="auto", fitted_at=FITTED_AT)


if __name__ == "__main__":
    GOLDEN.write_text(str(build_results().summary()) + "\n")
    print(f"wrote {GOLDEN}")
