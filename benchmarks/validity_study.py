"""Validity study of the standard errors of linear NORDIC-1: Bahadur, bootstrap, auto.

Not a timed test.  ``python benchmarks/validity_study.py --designs logit4 --n 1500
--reps 100 --boot-reps 20`` appends one JSON line per replicate to
``benchmarks/results/validity/<design>_n<n>.jsonl``; ``--summarise`` turns every stored
file into ``benchmarks/results/validity_summary.csv`` (SE / Monte Carlo SD and coverage
of 95% intervals per boundary and coefficient and estimator), ``validity_compact.csv``
(ranges per boundary) and ``validity_table.md`` (the table of the docs page).
``--recheck R`` recomputes the first R stored replicates of the given designs and sizes
with the current code (same seeds) and prints the largest differences, plus those of the
package's own ``cov_type="auto"`` against the study's per-boundary assembly of the stored
numbers.
``--rediagnose`` recomputes the stored replicates' diagnostics with the current code
(data from the seeds, the stored fits, no refits), for a new or changed diagnostic.
``--fill-boot intervals`` (or ``se``) adds the naive bootstrap (same seeds) to the stored
replicates whose ``cov_type="auto"`` intervals (or standard errors) need it, so that auto
is summarised over every data set.

Each replicate draws a data set, fits NORDIC-1 (joint noncrossing, C = 1) and BSVM
(same C) with the sparse primal solver, computes the Bahadur sandwich of the NORDIC fit
and of the BSVM fit, the per-boundary diagnostics of :mod:`nordicstats.diagnostics`, and
for the first ``--boot-reps`` replicates the naive case-resampling bootstrap (n out of
n) and the m-out-of-n bootstrap (m = n^0.8, covariance times m / n), ``--n-boot``
resamples each.  The population target of each coefficient is approximated by the mean
of ``TARGET_FITS`` independent NORDIC-1 fits at n = ``--target-n`` (200,000 by default;
``--targets`` computes or extends them) -- under noncrossing and unbounded covariates
the constrained target itself drifts slowly with n, which is part of what the study
measures.

Designs (all with X ~ N(0, I) unless said otherwise):

* ``logit4``: latent logistic z = x'(1, -.5, .25) + logistic, cuts -1, .5, 2 (K = 4,
  d = 3, class shares ~ 29/29/25/17%): boundary 2|3's BSVM is the constant classifier.
* ``probit3``: latent probit, d = 2, beta = (1, -.5), cuts at the tertiles of z (K = 3,
  balanced).
* ``logit5rare``: latent logistic, d = 5, beta = (1, -.5, .25, .5, 0), K = 5 with a
  rare top class (~4%).
* ``mixed``: latent logistic, one N(0,1) covariate and two binary factors.
* ``housing``: factor-only: the 24 covariate patterns of MASS::housing with their
  frequencies and Sat drawn from R's polr fit (logit link), K = 3.
* ``gauss_parallel``, ``gauss_shifted``: the Gaussian-mixture designs of
  ``benchmarks/mc_coverage.py`` (K = 3, d = 2).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from nordicstats import NORDIC  # noqa: E402
from nordicstats.auto_covariance import choose_estimator  # noqa: E402
from nordicstats.bootstrap import BootstrapCovariance, bootstrap_replicates  # noqa: E402
from nordicstats.covariance import BahadurCovariance, FitArrays, diagnose  # noqa: E402
from nordicstats.diagnostics import (  # noqa: E402
    THRESHOLDS,
    BoundaryDiagnostic,
    failed_checks,
    is_constraint_determined,
    is_lattice,
)
from nordicstats.hypotheses import parallel_restrictions, wald_test  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
OUT = RESULTS / "validity"

# MASS::housing: Infl (Low, Medium, High) x Type (Tower, Apartment, Atrium, Terrace) x
# Cont (Low, High) cell totals over Sat, in R's row order (Infl fastest).
HOUSING_CELLS = np.array([
    70, 68, 37, 94, 55, 77, 79, 80, 36, 109, 44, 47, 26, 31, 28, 44, 37, 22, 57, 56, 47, 40,
    39, 21,
])
# polr(Sat ~ Infl + Type + Cont, weights = Freq, data = housing): coefficients, cutpoints.
HOUSING_BETA = np.array([0.5663937, 1.2888191, -0.5723501, -0.3661866, -1.0910149,
                         0.3602841])
HOUSING_CUTS = np.array([-0.4961353, 0.6907083])


def housing_patterns():
    """The 24 dummy-coded covariate rows (InflMedium, InflHigh, TypeApartment, TypeAtrium,
    TypeTerrace, ContHigh) in R's expand.grid order."""
    rows = []
    for cont in range(2):
        for typ in range(4):
            for infl in range(3):
                rows.append([infl == 1, infl == 2, typ == 1, typ == 2, typ == 3, cont == 1])
    return np.array(rows, dtype=float)


def latent(n, rng, beta, cuts, noise="logistic", X=None):
    """Ordinal response cut from z = x'beta + noise."""
    X = rng.normal(size=(n, len(beta))) if X is None else X
    eps = rng.logistic(size=n) if noise == "logistic" else rng.normal(size=n)
    return np.searchsorted(cuts, X @ beta + eps), X


def gauss(n, rng, priors, means, S):
    codes = rng.choice(len(priors), size=n, p=priors)
    L = np.linalg.cholesky(S)
    return codes, means[codes] + rng.normal(size=(n, S.shape[0])) @ L.T


_S = np.array([[1.0, 0.4], [0.4, 1.0]])
_PROBIT_BETA = np.array([1.0, -0.5])
_PROBIT_SD = np.sqrt(1.0 + _PROBIT_BETA @ _PROBIT_BETA)
DESIGNS = {
    "logit4": partial(latent, beta=np.array([1.0, -0.5, 0.25]), cuts=np.array([-1, 0.5, 2.0])),
    "probit3": partial(latent, beta=_PROBIT_BETA, noise="normal",
                       cuts=_PROBIT_SD * np.array([-0.4307, 0.4307])),
    "logit5rare": partial(latent, beta=np.array([1.0, -0.5, 0.25, 0.5, 0.0]),
                          cuts=np.array([-1.5, -0.3, 0.9, 3.3])),
    "gauss_parallel": partial(gauss, priors=(0.3, 0.4, 0.3), S=_S,
                              means=np.array([[-1.5, -0.5], [0.0, 0.0], [1.5, 0.5]])),
    "gauss_shifted": partial(gauss, priors=(0.25, 0.45, 0.3), S=_S,
                             means=np.array([[-1.5, 0.0], [0.0, 0.3], [1.2, 1.2]])),
}


def _mixed(n, rng):
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 2, size=(n, 2))])
    return latent(n, rng, np.array([1.0, 0.8, -0.6]), np.array([-0.5, 1.0]), X=X)


def _housing(n, rng):
    X = housing_patterns()[rng.choice(24, size=n, p=HOUSING_CELLS / HOUSING_CELLS.sum())]
    return latent(n, rng, HOUSING_BETA, HOUSING_CUTS, X=X)


DESIGNS["mixed"] = _mixed
DESIGNS["housing"] = _housing


BAHADUR_KWDS = {"bandwidth": "hall-sheather", "kernel": "gaussian", "constant": 1.0}


def fit(codes, X, method="nordic1"):
    return NORDIC(codes, X, kernel="linear", C=1.0, method=method,
                  solver="primal").fit(cov_type="none")


def one_replicate(design, n, seed, n_boot, boot):
    """Everything measured on one simulated data set (a JSON-able dict)."""
    rng = np.random.default_rng(seed)
    codes, X = DESIGNS[design](n, rng)
    K = int(codes.max()) + 1
    if np.unique(codes).size < K:
        return None
    res, uns = fit(codes, X), fit(codes, X, "bsvm")
    params, params_u = res.params.to_numpy(), uns.params.to_numpy()
    bah, diagnostics = _sandwich_and_diagnostics(X, codes, params, params_u)
    p = params.shape[0]
    out = {"design": design, "n": n, "seed": seed, "K": K, "params": params.tolist(),
           "params_bsvm": params_u.tolist(),
           "se_bahadur": np.sqrt(np.diag(bah.cov)).reshape(-1, p).T.tolist(),
           "cov_bahadur": bah.cov.tolist(), "diagnostics": diagnostics}
    if boot:
        for name, m in (("boot", None), ("moon", int(round(n ** 0.8)))):
            cov = _bootstrap_cov(X, codes, seed, n_boot, m)
            out[f"se_{name}"] = np.sqrt(np.diag(cov)).reshape(-1, p).T.tolist()
            out[f"cov_{name}"] = cov.tolist()
    out["parallel"] = {name: _parallel_p(params, np.array(out[f"cov_{name}"]))
                       for name in ("bahadur", "boot", "moon") if f"cov_{name}" in out}
    for name in ("bahadur", "boot", "moon"):  # stored results keep the SEs, not the matrices
        out.pop(f"cov_{name}", None)
    return out


def _sandwich_and_diagnostics(X, codes, params, params_u):
    """Bahadur sandwich of the NORDIC fit and the stored form of its diagnostics."""
    names = tuple(f"{k}|{k + 1}" for k in range(params.shape[1]))
    arrays = FitArrays(X, codes, params, names, params_unconstrained=params_u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bah = BahadurCovariance(X, arrays.signs, params)
        diags = diagnose(arrays, bah, BAHADUR_KWDS)
    return bah, [{"measures": d.measures, "reasons": list(d.reasons)} for d in diags]


def _rediagnosed(row):
    """The stored row with its diagnostics recomputed by the current code (data from the
    seed, the stored fits; no refit)."""
    codes, X = DESIGNS[row["design"]](row["n"], np.random.default_rng(row["seed"]))
    bah, diagnostics = _sandwich_and_diagnostics(X, codes, np.array(row["params"]),
                                                 np.array(row["params_bsvm"]))
    with np.errstate(invalid="ignore"):
        se = np.sqrt(np.diag(bah.cov)).reshape(-1, len(row["params"])).T
    stored = np.array(row["se_bahadur"], dtype=float)
    both = np.isfinite(se) & np.isfinite(stored)
    new = dict(row, diagnostics=diagnostics)
    if not any(is_lattice(m) for m in _measures(new)):  # on a lattice H is near-singular
        assert np.allclose(se[both], stored[both], rtol=1e-6), row["seed"]  # same sandwich
    return new


def rediagnose(design, n, n_jobs=1):
    """Recompute the diagnostics of every stored replicate with the current code, so that
    a new diagnostic measure is summarised over the stored data sets.  Returns the number
    of boundaries whose stored verdict (failing or not) changed."""
    from joblib import Parallel, delayed

    path = OUT / f"{design}_n{n}.jsonl"
    rows = [json.loads(line) for line in path.open()]
    new = Parallel(n_jobs=n_jobs)(delayed(_rediagnosed)(row) for row in rows)
    changed = sum(bool(a["reasons"]) != bool(b["reasons"])
                  for old, row in zip(rows, new, strict=True)
                  for a, b in zip(old["diagnostics"], row["diagnostics"], strict=True))
    _write_rows(path, new)
    return changed


def _write_rows(path, rows):
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.replace(path)


def _bootstrap_cov(X, codes, seed, n_boot, m=None):
    """Covariance of NORDIC-1 from ``n_boot`` case resamples of size m (default n),
    scaled by m / n (the m-out-of-n bootstrap; plain n-out-of-n when m is None)."""
    n = codes.size
    refit = NORDIC(codes, X, kernel="linear", C=1.0, method="nordic1",
                   solver="primal").refit_params
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reps, failed = bootstrap_replicates(refit, codes, n_boot=n_boot, random_state=seed,
                                            disable=True, size=m)
    return BootstrapCovariance(reps, failed).cov * ((m or n) / n)


def _needs_bootstrap(row, intervals=True):
    """Per boundary: do auto's intervals (or, ``intervals=False``, its standard errors)
    come from the bootstrap?  Failing diagnostics, not a lattice design and, for
    intervals, not set by the constraints."""
    return [fails and not _withheld(m, intervals)
            for fails, m in zip(_failing(row), _measures(row), strict=True)]


def _filled(row, n_boot):
    rng = np.random.default_rng(row["seed"])
    codes, X = DESIGNS[row["design"]](row["n"], rng)
    t0 = time.time()
    cov = _bootstrap_cov(X, codes, row["seed"], n_boot)
    params = np.array(row["params"])
    row = dict(row, se_boot=np.sqrt(np.diag(cov)).reshape(-1, params.shape[0]).T.tolist())
    row["parallel"] = dict(row["parallel"], boot=_parallel_p(params, cov))
    row["seconds_fill"] = time.time() - t0
    return row


def fill_bootstrap(design, n, n_boot, n_jobs=1, intervals=True):
    """Add the naive bootstrap to the stored replicates whose ``cov_type="auto"`` intervals
    (or, ``intervals=False``, standard errors) need it and that lack it (same seeds), so
    that auto is summarised over every data set.

    Returns the number of rows filled.
    """
    from joblib import Parallel, delayed

    path = OUT / f"{design}_n{n}.jsonl"
    rows = [json.loads(line) for line in path.open()]
    todo = [i for i, r in enumerate(rows)
            if "se_boot" not in r and any(_needs_bootstrap(r, intervals))]
    filled = Parallel(n_jobs=n_jobs)(delayed(_filled)(rows[i], n_boot) for i in todo)
    for i, row in zip(todo, filled, strict=True):
        rows[i] = row
    _write_rows(path, rows)
    return len(todo)


def _parallel_p(params, cov):
    R = parallel_restrictions(params.shape[1], params.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(wald_test(params.T.ravel(), cov, R).pvalue)


#: Independent fits at ``--target-n`` averaged into the population target.  One fit at
#: n = 200,000 has sampling error too: its SD is sqrt(n / 200,000) of the estimate's, 0.16
#: at n = 5,000, and a second and third fit of logit4 moved the x1 slope of 0|1 by -0.012
#: and -0.020 (0.4 SD at n = 1,500) -- enough to show up as "bias".
TARGET_FITS = 5


def _auto_parallel(row, n_boot):
    """p-value, degrees of freedom and compared boundaries of ``test_parallel`` under the
    package's own ``cov_type="auto"`` (bootstrap with ``n_boot`` resamples and the row's
    seed) on the stored replicate's data set."""
    codes, X = DESIGNS[row["design"]](row["n"], np.random.default_rng(row["seed"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fit(codes, X).get_robustcov_results(
            "auto", {"n_boot": n_boot, "random_state": row["seed"], "disable": True})
        test = res.test_parallel()
    return {"design": row["design"], "n": row["n"], "seed": row["seed"],
            "pvalue": float(test.pvalue), "df": int(test.df),
            "compared": ", ".join(res.boundary_names[k] for k in res._parallel_subset()),
            "sources": ", ".join(_source_text(c.estimator, c.intervals)
                                 for c in res.cov_sources.itertuples())}


def _source_text(estimator, intervals):
    """One boundary's covariance source as ``validity_parallel_auto.csv`` stores it."""
    return estimator + ("" if intervals or estimator == "none" else " (no intervals)")


def _sources(row):
    """Per boundary, where auto's covariance comes from, decided by the package's own
    rule (:func:`nordicstats.auto_covariance.choose_estimator`) on the stored diagnostics."""
    slopes = np.array(row["params"])[1:]
    diagnostics = [BoundaryDiagnostic(k, m, failed_checks(m, THRESHOLDS))
                   for k, m in enumerate(_measures(row))]
    choices = [choose_estimator(diag, slopes[:, diag.boundary]) for diag in diagnostics]
    return ", ".join(_source_text(c.estimator, c.intervals) for c in choices)


def auto_parallel_rejections(design, n, count, n_boot, n_jobs=1, level=0.05):
    """Rejection rate at ``level`` of ``test_parallel`` with ``cov_type="auto"`` on the first
    ``count`` stored replicates (same seeds): the test as a user runs it, among the
    boundaries whose intervals auto reports.  Appends one row per replicate to
    ``results/validity_parallel_auto.csv`` (replicates already there are not rerun).

    Returns (share rejecting, number of replicates with a p-value).
    """
    from joblib import Parallel, delayed

    path = RESULTS / "validity_parallel_auto.csv"
    stored = pd.read_csv(path) if path.exists() else pd.DataFrame(
        columns=["design", "n", "seed", "pvalue", "df", "compared", "sources"])
    rows = [json.loads(line) for line in (OUT / f"{design}_n{n}.jsonl").open()][:count]
    # a stored p-value whose covariance sources the current diagnostics would not choose
    # is stale (the rules changed since): dropped and recomputed
    implied = {row["seed"]: _sources(row) for row in rows}
    stale = ((stored.design == design) & (stored.n == n)
             & (stored.sources != stored.seed.map(implied).fillna(stored.sources)))
    stored = stored.loc[~stale]
    done = set(stored.loc[(stored.design == design) & (stored.n == n), "seed"])
    new = Parallel(n_jobs=n_jobs)(delayed(_auto_parallel)(row, n_boot) for row in rows
                                  if row["seed"] not in done)
    if new:
        stored = pd.concat([stored, pd.DataFrame(new)], ignore_index=True)
        stored.to_csv(path, index=False, float_format="%.6g")
    seeds = {row["seed"] for row in rows}
    p = stored.loc[(stored.design == design) & (stored.n == n) & stored.seed.isin(seeds),
                   "pvalue"].to_numpy(dtype=float)
    p = p[np.isfinite(p)]
    return float(np.mean(p < level)), p.size


def target(design, n_target, seed=12345, fits=TARGET_FITS):
    """Mean of ``fits`` NORDIC-1 fits at a very large n (independent data sets, seeds
    seed, seed + 1, ...): the population target, cached in the results with every fit
    and the standard error of the mean (``se``); a cache with fewer fits is extended."""
    path = OUT / f"target_{design}.json"
    stored = json.loads(path.read_text()) if path.exists() else {"fits": []}
    done = stored.get("fits") or [stored["params"]]  # a cache from before: one fit
    if len(done) >= fits:
        return np.array(stored["params"])
    done = [np.array(p) for p in done]
    for r in range(len(done), fits):
        codes, X = DESIGNS[design](n_target, np.random.default_rng(seed + r))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the certificate is in the fit; n is huge
            done.append(fit(codes, X).params.to_numpy())
    stack = np.array(done)
    params = stack.mean(axis=0)
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"n": n_target, "seeds": [seed + r for r in range(fits)],
                                "params": params.tolist(),
                                "se": (stack.std(axis=0, ddof=1) / np.sqrt(fits)).tolist(),
                                "fits": stack.tolist()}))
    return params


def run(design, n, reps, boot_reps, n_boot, n_target):
    OUT.mkdir(parents=True, exist_ok=True)
    target(design, n_target)
    path = OUT / f"{design}_n{n}.jsonl"
    done = {json.loads(line)["seed"] for line in path.open()} if path.exists() else set()
    for r in range(reps):
        seed = 1000 * n + r
        if seed in done:
            continue
        t0 = time.time()
        row = one_replicate(design, n, seed, n_boot, r < boot_reps)
        if row is None:
            continue
        row["seconds"] = time.time() - t0
        with path.open("a") as f:
            f.write(json.dumps(row) + "\n")


# --- summary ---------------------------------------------------------------------------------
def _measures(row):
    """Per boundary: the stored diagnostic measures with n and d, as the rules read them."""
    d = len(row["params"]) - 1
    return [{"n": row["n"], "d": d, **diag["measures"]} for diag in row["diagnostics"]]


def _withheld(m, intervals):
    """Does auto withhold this boundary's standard errors (lattice) or, with
    ``intervals``, its intervals (constraint-determined)?"""
    return is_lattice(m) or (intervals and is_constraint_determined(m))


def _failing(row):
    """Per boundary: do the diagnostics fail, with the current THRESHOLDS (recomputed from
    the stored measures, so the thresholds can be tuned without rerunning)."""
    return [bool(failed_checks(m, THRESHOLDS)) for m in _measures(row)]


def _auto_se(row, source="boot", intervals=False):
    """SE of cov_type='auto': Bahadur where the diagnostics pass, bootstrap where they fail.

    NaN where auto withholds standard errors (lattice designs) and, with
    ``intervals=True``, also where it withholds intervals (constraint-determined
    boundaries).  A failing boundary of a row without bootstrap SEs is NaN too; see
    :func:`_auto_rows` for which rows a summary may use.
    """
    se = np.array(row["se_bahadur"])
    for k, (fails, m) in enumerate(zip(_failing(row), _measures(row), strict=True)):
        if _withheld(m, intervals):
            se[:, k] = np.nan
        elif fails:
            se[:, k] = np.array(row[f"se_{source}"])[:, k] if f"se_{source}" in row else np.nan
    return se


def _auto_rows(rows, k, intervals):
    """Rows over which auto's boundary k is summarised: all rows when every row that
    needs the bootstrap for it has it (see :func:`fill_bootstrap`), else the rows with
    the bootstrap (no selection on the diagnostics' outcome)."""
    missing = [_needs_bootstrap(row, intervals)[k] and "se_boot" not in row for row in rows]
    if not any(missing):
        return list(range(len(rows)))
    return [i for i, row in enumerate(rows) if _planned_bootstrap(row)]


def _planned_bootstrap(row):
    """The row is one of the first ``--boot-reps`` replicates, bootstrapped whatever its
    diagnostics said (rows added by :func:`fill_bootstrap` were selected by them)."""
    return "se_boot" in row and "seconds_fill" not in row


def summarise_file(path):
    rows = [json.loads(line) for line in open(path)]
    design, n = rows[0]["design"], rows[0]["n"]
    stored_target = json.loads((OUT / f"target_{design}.json").read_text())
    truth = np.array(stored_target["params"])
    truth_se = np.array(stored_target.get("se", np.full(truth.shape, np.nan)))
    est = np.array([r["params"] for r in rows])
    sd = est.std(axis=0, ddof=1)
    out = []
    estimators = {"bahadur": [np.array(r["se_bahadur"]) for r in rows]}
    boot_rows = [r for r in rows if _planned_bootstrap(r)]
    for name in ("boot", "moon"):
        if boot_rows:
            estimators[name] = [np.array(r[f"se_{name}"]) for r in boot_rows]
    est_boot = np.array([r["params"] for r in boot_rows]) if boot_rows else None
    flagged = np.array([_failing(r) for r in rows])
    for name, ses in estimators.items():
        ses = np.array(ses)
        e = est if name == "bahadur" else est_boot
        for k in range(truth.shape[1]):
            for j in range(truth.shape[0]):
                out.append(_cell(design, n, name, k, j, e[:, j, k], ses[:, j, k], ses[:, j, k],
                                 truth[j, k], sd[j, k], flagged[:, k].mean()))
    # auto: standard errors (ratio) and intervals (coverage) may come from different rows
    for k in range(truth.shape[1]):
        se_rows, ci_rows = _auto_rows(rows, k, False), _auto_rows(rows, k, True)
        se = np.array([_auto_se(rows[i]) for i in se_rows])
        ci = np.array([_auto_se(rows[i], intervals=True) for i in ci_rows])
        for j in range(truth.shape[0]):
            cell = _cell(design, n, "auto", k, j, est[ci_rows, j, k], se[:, j, k], ci[:, j, k],
                         truth[j, k], sd[j, k], flagged[:, k].mean())
            cell["reps"], cell["reps_intervals"] = len(se_rows), len(ci_rows)
            out.append(cell)
    for cell in out:  # how far the approximated target may be off, in units of the SD
        cell["target_se_over_sd"] = truth_se[cell["coef"], cell["boundary"]] / cell["mc_sd"]
    return out


def _cell(design, n, name, k, j, estimates, se, se_intervals, truth, sd, flagged):
    """One summary row: SE / SD from ``se``, coverage of the intervals from ``se_intervals``
    (NaN: withheld) around ``estimates``."""
    ok, ok_ci = np.isfinite(se), np.isfinite(se_intervals)
    cover = np.abs(estimates - truth) <= 1.959964 * se_intervals
    return {"design": design, "n": n, "estimator": name, "boundary": k, "coef": j,
            "reps": len(se), "reps_intervals": len(se_intervals), "truth": truth, "mc_sd": sd,
            "bias_over_sd": (estimates.mean() - truth) / sd,
            "median_se": np.median(se[ok]) if ok.any() else np.nan,
            "ratio": np.median(se[ok]) / sd if ok.any() else np.nan,
            "share_withheld": 1 - ok.mean(), "share_no_interval": 1 - ok_ci.mean(),
            "coverage": cover[ok_ci].mean() if ok_ci.any() else np.nan,
            "share_flagged": flagged}


def summarise():
    rows = []
    for path in sorted(glob.glob(str(OUT / "*_n*.jsonl"))):
        rows += summarise_file(path)
    frame = pd.DataFrame(rows)
    frame.to_csv(RESULTS / "validity_summary.csv", index=False, float_format="%.4g")
    return frame


def _span(lo, hi):
    """A range of two ratios as the docs print it ("--" when undefined)."""
    if not np.isfinite(lo):
        return "--"
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}"


def markdown_table(compact):
    """The results table of ``docs/notes/inference-validity.md`` from the compact summary:
    per design, n and boundary, SE / SD and coverage (ranges over the coefficients) of
    Bahadur, bootstrap and auto, with the number of data sets behind each (for auto's
    coverage, those where it reports intervals)."""
    c = compact.reset_index()
    columns = ["design", "boundary", "Bahadur SE/SD", "Bahadur coverage",
               "bootstrap SE/SD (data sets)", "auto SE/SD (data sets)",
               "auto coverage (data sets with intervals)", "auto: share without intervals",
               "share flagged"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for (design, n, k), g in c.groupby(["design", "n", "boundary"], sort=True):
        e = g.set_index("estimator")
        bah, boot, auto = e.loc["bahadur"], e.loc["boot"], e.loc["auto"]
        lines.append(
            f"| {design.replace('_', chr(92) + '_')} n={n} | {k} "
            f"| {_span(bah.ratio_min, bah.ratio_max)} | {_span(bah.cover_min, bah.cover_max)} "
            f"| {_span(boot.ratio_min, boot.ratio_max)} ({boot.reps}) "
            f"| {_span(auto.ratio_min, auto.ratio_max)} ({auto.reps}) "
            f"| {_span(auto.cover_min, auto.cover_max)} "
            f"({round(auto.reps_ci * (1 - auto.no_interval))}) "
            f"| {auto.no_interval:.2f} | {auto.flagged:.2f} |")
    return "\n".join(lines) + "\n"


def recheck(design, n, count, n_boot):
    """Recompute the first ``count`` stored replicates (same seeds) with the current code.

    Returns the largest |difference| of the estimates, the Bahadur and bootstrap SEs
    (relative), the flagged boundaries that changed, and the largest relative difference
    between the package's ``cov_type="auto"`` SEs and :func:`_auto_se` of the stored row.
    """
    stored = [json.loads(line) for line in (OUT / f"{design}_n{n}.jsonl").open()][:count]
    worst = {"params": 0.0, "se_bahadur": 0.0, "se_boot": 0.0, "se_moon": 0.0,
             "auto_vs_stored": 0.0, "flag_changes": 0}
    for row in stored:
        new = one_replicate(design, n, row["seed"], n_boot, "se_boot" in row)
        worst["params"] = max(worst["params"], float(np.max(np.abs(
            np.subtract(new["params"], row["params"])))))
        for key in ("se_bahadur", "se_boot", "se_moon"):
            if key in row:
                a, b = np.array(new[key]), np.array(row[key])
                ok = np.isfinite(a) & np.isfinite(b)
                worst[key] = max(worst[key], float(np.max(np.abs(a[ok] / b[ok] - 1), initial=0)))
        worst["flag_changes"] += int(np.sum(np.array(_failing(new)) != np.array(_failing(row))))
        if "se_boot" in row:
            rng = np.random.default_rng(row["seed"])
            codes, X = DESIGNS[design](n, rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = NORDIC(codes, X, kernel="linear", C=1.0, solver="primal").fit(
                    cov_type="auto", cov_kwds={"n_boot": n_boot, "random_state": row["seed"],
                                               "disable": True})
                auto = res.bse.to_numpy()
            ref = _auto_se(row)
            ok = np.isfinite(auto) & np.isfinite(ref)
            assert np.array_equal(np.isfinite(auto), np.isfinite(ref)), (auto, ref)
            worst["auto_vs_stored"] = max(worst["auto_vs_stored"], float(np.max(
                np.abs(auto[ok] / ref[ok] - 1), initial=0)))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=["logit4"])
    parser.add_argument("--n", nargs="+", type=int, default=[1500])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--boot-reps", type=int, default=20)
    parser.add_argument("--n-boot", type=int, default=100)
    parser.add_argument("--target-n", type=int, default=200_000)
    parser.add_argument("--summarise", action="store_true")
    parser.add_argument("--recheck", type=int, default=0, metavar="R")
    parser.add_argument("--fill-boot", choices=["intervals", "se"],
                        help="add the bootstrap to stored rows whose auto intervals (or "
                             "standard errors) need it")
    parser.add_argument("--rediagnose", action="store_true",
                        help="recompute the stored replicates' diagnostics with the current "
                             "code (no refits)")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--targets", action="store_true",
                        help="compute (or extend to --target-fits fits) the population targets")
    parser.add_argument("--target-fits", type=int, default=TARGET_FITS)
    parser.add_argument("--parallel-auto", type=int, default=0, metavar="R",
                        help="rejection rate of test_parallel under cov_type='auto' on the "
                             "first R stored replicates")
    args = parser.parse_args()
    if args.parallel_auto:
        for design, n in [(d, n) for d in args.designs for n in args.n
                          if (OUT / f"{d}_n{n}.jsonl").exists()]:
            share, reps = auto_parallel_rejections(design, n, args.parallel_auto, args.n_boot,
                                                   args.n_jobs)
            print(f"{design} n={n}: rejects {share:.3f} at 5% ({reps} replicates)", flush=True)
        return
    if args.targets:
        for design in args.designs:
            t0 = time.time()
            target(design, args.target_n, fits=args.target_fits)
            print(f"{design}: target from {args.target_fits} fits ({time.time() - t0:.0f} s)",
                  flush=True)
        return
    stored = [(design, n) for design in args.designs for n in args.n
              if (OUT / f"{design}_n{n}.jsonl").exists()]
    if args.fill_boot or args.recheck or args.rediagnose:
        for design, n in stored:
            t0 = time.time()
            if args.rediagnose:
                done = f"{rediagnose(design, n, args.n_jobs)} verdicts changed"
            elif args.fill_boot:
                count = fill_bootstrap(design, n, args.n_boot, args.n_jobs,
                                       intervals=args.fill_boot == "intervals")
                done = f"{count} rows filled"
            else:
                done = recheck(design, n, args.recheck, args.n_boot)
            print(f"{design} n={n}: {done} ({time.time() - t0:.0f} s)", flush=True)
        return
    if args.summarise:
        frame = summarise()
        compact = frame.groupby(["design", "n", "estimator", "boundary"], sort=False).agg(
            reps=("reps", "first"), reps_ci=("reps_intervals", "first"),
            ratio_min=("ratio", "min"), ratio_max=("ratio", "max"),
            cover_min=("coverage", "min"), cover_max=("coverage", "max"),
            bias_max=("bias_over_sd", lambda b: np.abs(b).max()),
            withheld=("share_withheld", "max"), no_interval=("share_no_interval", "max"),
            flagged=("share_flagged", "first"))
        compact.to_csv(RESULTS / "validity_compact.csv", float_format="%.3g")
        (RESULTS / "validity_table.md").write_text(markdown_table(compact))
        with pd.option_context("display.width", 200, "display.max_rows", 1000):
            print(compact.round(3).to_string())
        return
    for design in args.designs:
        for n in args.n:
            t0 = time.time()
            run(design, n, args.reps, args.boot_reps, args.n_boot, args.target_n)
            print(f"{design} n={n}: {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
