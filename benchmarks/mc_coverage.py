"""Monte Carlo coverage of the Bahadur intervals and level of test_parallel for linear NORDIC-1.

Not a timed test: run ``python benchmarks/mc_coverage.py [--reps 200] [--sizes 250 500 1000 2000]``.

Designs (K = 3, d = 2, common covariance S = [[1, .4], [.4, 1]]):

* ``parallel``: classes N(-m, S), N(0, S), N(m, S), m = (1.5, 0.5), priors (.3, .4, .3).
  The reflection x -> -x maps class 1 to class 3, so the risk of boundary 2 at (b, w)
  equals the risk of boundary 1 at (-b, w): w_1* = w_2* and b_2* = -b_1* exactly.
  This is a true H0 for test_parallel (the computed w_k* are printed to confirm).
* ``overlap``: the same symmetric construction with means +-(.75, .25), 0 and priors
  (.45, .1, .45): heavily overlapping classes, so many points sit inside both margins and
  the cross-boundary covariance G_12 matters (it shrinks Var(w_1 - w_2) to ~0.4 of the
  block-diagonal value); also a true H0.
* ``shifted``: means (-1.5, 0), (0, .3), (1.2, 1.2), priors (.25, .45, .3): boundaries
  not parallel (power of test_parallel).

The truths beta_k* minimise the closed-form hinge risk of the meta-classes
{1..k} vs {k+1..K}, which are Gaussian mixtures (``nordicstats.theory.population_svm``).
Each replicate fits linear NORDIC-1 with the joint noncrossing constraints of the paper's
Section 5.2 (f_k(x_i) >= f_{k+1}(x_i)), C = 1 (``--method bsvm``: no constraints), and
computes the Bahadur covariance (Gaussian kernel, Hall-Sheather-rate bandwidth).  Fits go
through the nordicstats model (``--solver nordic``, default: solver="auto", the sparse
primal for linear problems) or an independent cvxpy/Clarabel primal (``--solver cvxpy``);
the two agree to ~1e-9 on these designs.  Targets: coverage 0.93-0.97 at n >= 500;
test_parallel level 4-6%.  When noncrossing constraints bind (the ``overlap`` design at
n <= 1000: intercepts only 0.47 apart) the test is conservative; the share of fits with
active constraints is printed (nordicstats warns in those fits).
With R replications a coverage estimate has binomial SD sqrt(.95 * .05 / R) (0.015 at R = 200).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from nordicstats.covariance import BahadurCovariance  # noqa: E402
from nordicstats.data import binary_signs  # noqa: E402
from nordicstats.exceptions import InferenceWarning  # noqa: E402
from nordicstats.hypotheses import parallel_restrictions, wald_test  # noqa: E402
from nordicstats.theory import population_svm  # noqa: E402

S = np.array([[1.0, 0.4], [0.4, 1.0]])
DESIGNS = {
    "parallel": ((0.3, 0.4, 0.3), np.array([[-1.5, -0.5], [0.0, 0.0], [1.5, 0.5]])),
    "overlap": ((0.45, 0.1, 0.45), np.array([[-0.75, -0.25], [0.0, 0.0], [0.75, 0.25]])),
    "shifted": ((0.25, 0.45, 0.3), np.array([[-1.5, 0.0], [0.0, 0.3], [1.2, 1.2]])),
}


def truths(priors, means):
    """beta_k* (1 + d, K-1) for every boundary from the closed-form mixture risk."""
    K = len(priors)
    cols = []
    for k in range(K - 1):
        comps = [(priors[c], means[c], S, 1.0 if c > k else -1.0) for c in range(K)]
        cols.append(population_svm(comps)["beta"])
    return np.column_stack(cols)


def draw(rng, n, priors, means):
    codes = rng.choice(len(priors), size=n, p=priors)
    X = rng.normal(size=(n, means.shape[1])) @ np.linalg.cholesky(S).T + means[codes]
    return X, codes


class CvxpyNordic1:
    """Linear NORDIC-1 primal (joint constraints) in cvxpy, compiled once per n (DPP).

    ``method="bsvm"`` drops the noncrossing constraints (K-1 separate SVMs).  After a
    call, ``active`` says whether any noncrossing multiplier is positive.
    """

    def __init__(self, n, d, K, C=1.0, method="nordic1"):
        import cvxpy as cp

        self.Xa = cp.Parameter((n, d + 1))
        self.Z = [cp.Parameter((n, d + 1)) for _ in range(K - 1)]
        self.beta = cp.Variable((d + 1, K - 1))
        hinge = sum(cp.sum(cp.pos(1 - self.Z[k] @ self.beta[:, k])) for k in range(K - 1))
        cons = [self.Xa @ (self.beta[:, k] - self.beta[:, k + 1]) >= 0 for k in range(K - 2)]
        self.cons = cons if method == "nordic1" else []
        self.active = False
        self.problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(self.beta[1:, :]) + C * hinge),
                                  self.cons)

    def __call__(self, X, signs):
        Xa = np.column_stack([np.ones(len(X)), X])
        self.Xa.value = Xa
        for k, Z in enumerate(self.Z):
            Z.value = Xa * signs[:, [k]]
        self.problem.solve(solver="CLARABEL")
        self.active = any(np.max(c.dual_value) > 1e-6 for c in self.cons)
        return np.asarray(self.beta.value)


class NordicFitter:
    """The package's own path: NORDIC(kernel="linear", method, noncrossing="joint").fit()."""

    def __init__(self, method="nordic1"):
        self.method, self.active = method, False

    def __call__(self, X, signs):
        from nordicstats.model import NORDIC

        codes = (signs > 0).sum(axis=1)
        res = NORDIC(codes, X, kernel="linear", method=self.method, noncrossing="joint").fit(
            cov_type="none")
        self.active = bool(res.solver_result.info.get("active_noncrossing", 0))
        return res.params.to_numpy()


def run(design, n, reps, solver, seed, method="nordic1"):
    priors, means = DESIGNS[design]
    beta = truths(priors, means)
    K, d = len(priors), means.shape[1]
    fit = CvxpyNordic1(n, d, K, method=method) if solver == "cvxpy" else NordicFitter(method)
    R = parallel_restrictions(K - 1, d + 1)
    rng = np.random.default_rng(seed)
    covered, reject, ses, ests, active = [], [], [], [], []
    for _ in range(reps):
        X, codes = draw(rng, n, priors, means)
        signs = binary_signs(codes, K)
        params = fit(X, signs)
        active.append(getattr(fit, "active", np.nan))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InferenceWarning)
            cov = BahadurCovariance(X, signs, params).cov
        se = np.sqrt(np.diag(cov)).reshape(K - 1, d + 1).T
        covered.append(np.abs(params - beta) <= stats.norm.ppf(0.975) * se)
        reject.append(wald_test(params.T.ravel(), cov, R).pvalue < 0.05)
        ses.append(se)
        ests.append(params)
    return {"beta": beta, "coverage": np.mean(covered, axis=0), "reject": np.mean(reject),
            "active": np.mean(active),
            "se_ratio": np.mean(ses, axis=0) / np.std(ests, axis=0, ddof=1)}


def report(design, n, out, reps):
    terms = ["Int", "x1", "x2"]
    cov = out["coverage"]
    cells = "  ".join(f"{t}@{k + 1}|{k + 2}={cov[j, k]:.3f}"
                      for k in range(cov.shape[1]) for j, t in enumerate(terms))
    ratio = out["se_ratio"]
    print(f"{design:9s} n={n:5d} reps={reps}  coverage: {cells}")
    print(f"{'':9s}          mean SE / MC SD: {np.array2string(ratio.T.ravel(), precision=3)}  "
          f"test_parallel rejection (5%): {out['reject']:.3f}  "
          f"constraints active in {out['active']:.0%} of fits")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    parser.add_argument("--solver", choices=["nordic", "cvxpy"], default="nordic",
                        help="nordicstats' own solver (auto) or an independent cvxpy primal")
    parser.add_argument("--method", choices=["nordic1", "bsvm"], default="nordic1",
                        help="NORDIC-1 (joint constraints) or separate SVMs")
    parser.add_argument("--seed", type=int, default=20261122)
    args = parser.parse_args(argv)
    print("OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1; 2-core machine shared with other jobs, "
          f"so runtimes are indicative only. solver={args.solver}, method={args.method}")
    start = time.perf_counter()
    for design in args.designs:
        beta = truths(*DESIGNS[design])
        print(f"\n{design}: beta_k* (rows Intercept, x1, x2; columns boundaries 1|2, 2|3)")
        print(np.array2string(beta, precision=10))
        print(f"  max |w_1* - w_2*| = {np.abs(beta[1:, 0] - beta[1:, 1]).max():.2e}")
        for n in args.sizes:
            out = run(design, n, args.reps, args.solver, args.seed + n, args.method)
            report(design, n, out, args.reps)
    print(f"\nruntime {time.perf_counter() - start:.1f} s; binomial SD of a coverage at "
          f"{args.reps} reps: {np.sqrt(0.95 * 0.05 / args.reps):.4f}; of a 5% level: "
          f"{np.sqrt(0.05 * 0.95 / args.reps):.4f}")


if __name__ == "__main__":
    main()
