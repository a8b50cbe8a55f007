"""Class probabilities of NORDIC against its competitors (docs/notes/probabilities.md).

Not a timed test: run ``nice python -m benchmarks.bench_probabilities [--reps 100]``;
it resumes from the rows already stored.

Designs (one replication draws training, tuning and test sets):

* ``nonlinear d=2`` and ``nonlinear d=10`` (sigma = 1) and ``donut d=10`` (sigma = 0.4):
  the paper's Section 6 designs, 100 training, 100 tuning and ``--test-size`` test points;
* ``balance``: the balance scale (Section 7), 208 training and 208 tuning rows, the other
  209 for testing (stratified);
* ``latent logistic``: the ordered logit is the true model, K = 4,
  Y = #{k : x'beta + e > zeta_k}, e standard logistic, x ~ N(0, I_3),
  beta = (1.5, -1, 0.5), zeta = (-2, 0, 2); also scored with the true probabilities;
* ``nonlinear d=2 n=500`` and ``latent logistic n=500``: 500 training and 500 tuning rows,
  to see how calibration improves with n (``--designs``).

Methods: NORDIC-1 (RBF, and linear) and BSVM (RBF), tuned by test error on the tuning set
over the paper's grid (C in 2^-4..2^4, widths at the 10/50/90% distance quantiles), then
refitted with ``probability=True`` (5 cross-fitting folds); every calibration map is fitted
on the same held-out decision values: ``logistic`` (shared slope, ordered offsets; the
default), ``platt`` (per boundary, projected), ``isotonic`` and ``pooled`` (shared slope
plus the row mean of the decision values); BSVM also with the raw
per-boundary Platt map (no projection: what a user of K-1 separate SVMs would do).
Competitors: the ordered logit (statsmodels ``OrderedModel``, as ``MASS::polr``) and
scikit-learn's ``SVC(probability=True)`` (one-vs-one with pairwise coupling), tuned on
the same grid.

Scores on the test set: log loss (probabilities clipped at 1e-15), Brier score
sum_j (p_j - 1{y = j})^2, ranked probability score
RPS = sum_k (P(Y <= k) - 1{y <= k})^2 / (K - 1), the share of test rows with a negative
class probability or a non-monotone cumulative probability ("invalid"), and the
reliability diagram: the (row, level) pairs are binned by predicted probability (10 equal
bins) and each bin's observed frequency is compared with its mean prediction.  Two checks:

* per fit (``fit_bins_within_2se``): a bin of one replication passes when the two differ
  by at most 2 binomial standard errors sqrt(pbar(1 - pbar)/n).  With 10,000 test points
  that SE is below the estimation error of any fitted model, so this measures estimation
  error, not calibration (the true probabilities pass, fitted ones mostly do not);
* calibration of the procedure (``procedure_calibration``, ``procedure_bins_within_2se``,
  ``probabilities_calibration.csv``): per bin, the gap "observed frequency minus mean
  prediction" of each replication, averaged over the replications, with the SE of that
  mean from the replications (it contains the binomial and the estimation variance); a
  bin passes when |mean gap| <= 2 SE.
Decisions from probabilities: on the donut (``DONUT_COSTS``) the weighted error of
NORDIC-1's class rule, of the cost-Bayes rule on its probabilities
(``predict(cost=DONUT_COSTS)``), and of NORDIC-1 trained with the cost (tuned on the
weighted error).

Two further modes (docs/notes/probabilities.md, "Why the gaps"):

* ``--add-maps pooled``: rows of calibration maps added after the study, for the stored
  replications (each SVM refitted at the C and width the study tuned, the same folds);
* ``--screen``: calibration variants of NORDIC-1 (fold-fit ensembles, maps fitted on fresh
  rows, 10 folds, flexible links, 0/1 targets, ``pooled``) at the stored C and width, rows
  in ``probabilities_screen.jsonl``, summary in ``probabilities_screen_summary.txt``.

A replication whose training set has a level with a single row cannot be cross-fitted
(``probability=True`` refuses it); it is skipped for every method and listed in the summary.

Results: ``benchmarks/results/probabilities.jsonl`` (one row per design, replication and
method), ``probabilities_summary.csv``, ``probabilities_summary.txt`` (means, paired
differences and the targets), ``probabilities_calibration.csv`` (the procedure's
calibration per bin) and ``probabilities_reliability.png``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import special, stats  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from nordicstats import NORDIC  # noqa: E402
from nordicstats.compare import OrderedLogit  # noqa: E402
from nordicstats.metrics import DONUT_COSTS, weighted_error  # noqa: E402
from nordicstats.probability import (  # noqa: E402
    CALIBRATION_METHODS,
    LINK_BASES,
    cross_fit_decision,
    cumulative_to_class,
    fit_calibration,
    fit_shared_link,
    rearrange,
)
from nordicstats.sklearn import NORDICClassifier  # noqa: E402
from nordicstats.tuning import PAPER_C_GRID, default_grid, tune  # noqa: E402
from studies.experiments import (  # noqa: E402
    Split,
    balance_scale_design,
    replication_seeds,
    simulation_design,
)

RESULTS = Path(__file__).parent / "results"
N_BINS = 10
CLIP = 1e-15
LATENT_BETA = np.array([1.5, -1.0, 0.5])
LATENT_ZETA = np.array([-2.0, 0.0, 2.0])


# --- designs -----------------------------------------------------------------------------------
def latent_logistic(n, rng):
    """(X, y, true class probabilities) of the latent-logistic design."""
    X = rng.normal(size=(n, LATENT_BETA.size))
    eta = X @ LATENT_BETA
    y = np.sum(eta[:, None] + rng.logistic(size=n)[:, None] > LATENT_ZETA[None, :], axis=1)
    upper = special.expit(eta[:, None] - LATENT_ZETA[None, :])  # P(Y > k | x)
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
    labels = pd.Series(pd.Categorical(y + 1, categories=[1, 2, 3, 4], ordered=True), name="y")
    return frame, labels, cumulative_to_class(upper)


def draw(design, seed, test_size):
    """(Split, true test probabilities or None) of one replication.

    A design name ending in ``n=<size>`` uses that many training and tuning rows (100
    otherwise, as in the paper).
    """
    n = int(design.split("n=")[1]) if "n=" in design else 100
    if design.startswith("latent logistic"):
        rng = np.random.default_rng(seed)
        parts = [latent_logistic(size, rng) for size in (n, n, test_size)]
        return Split(*parts[0][:2], *parts[1][:2], *parts[2][:2]), parts[2][2]
    if design == "balance":
        return balance_scale_design(208).sample(seed), None
    kind, d = design.split()[0], int(design.split("d=")[1].split()[0])
    sigma = 0.4 if kind == "donut" else 1.0
    return simulation_design(kind, d, sigma, n_train=n, n_tune=n,
                             n_test=test_size).sample(seed), None


DESIGNS = ("nonlinear d=2", "nonlinear d=10", "donut d=10", "balance", "latent logistic")
#: Larger training sets, to see calibration improve with n (``--designs`` selects them).
LARGE_DESIGNS = ("nonlinear d=2 n=500", "latent logistic n=500")


# --- scores ------------------------------------------------------------------------------------
def scores(proba, codes):
    """Log loss, Brier, RPS, invalid share and reliability-bin counts of class probabilities."""
    proba = np.asarray(proba, dtype=float)
    n, K = proba.shape
    onehot = np.eye(K)[codes]
    cum, cum_true = np.cumsum(proba, axis=1)[:, :-1], np.cumsum(onehot, axis=1)[:, :-1]
    invalid = (proba < 0).any(axis=1) | (np.diff(cum, axis=1) < 0).any(axis=1)
    picked = np.clip(proba[np.arange(n), codes], CLIP, None)
    p, o = proba.ravel(), onehot.ravel()
    bins = np.clip((p * N_BINS).astype(int), 0, N_BINS - 1)
    return {"log_loss": float(-np.mean(np.log(picked))),
            "brier": float(np.mean(np.sum((proba - onehot) ** 2, axis=1))),
            "rps": float(np.mean(np.sum((cum - cum_true) ** 2, axis=1)) / (K - 1)),
            "invalid": float(np.mean(invalid)),
            "error": float(np.mean(proba.argmax(axis=1) != codes)),
            "bin_n": np.bincount(bins, minlength=N_BINS).tolist(),
            "bin_pred": np.bincount(bins, weights=p, minlength=N_BINS).tolist(),
            "bin_obs": np.bincount(bins, weights=o, minlength=N_BINS).tolist()}


def procedure_calibration(table):
    """Calibration of each (design, method) *procedure*, per reliability bin.

    A procedure (fit + map, applied to a fresh training set) is calibrated when, for every
    bin B of predicted probability, E[1{Y = j} - p^_j(X) | p^_j(X) in B] = 0, the
    expectation taken over the test point *and* the training set.  Replication r gives
    the bin's gap g_rb = (obs_rb - pred_rb) / n_rb (observed frequency minus mean
    prediction over its n_rb (row, level) pairs); over the R_b replications with
    n_rb > 0,

        gap_b = mean_r g_rb,   se_b = sd_r(g_rb) / sqrt(R_b),   z_b = gap_b / se_b,

    and the bin passes when |z_b| <= 2.  se_b comes from the replications, so it contains
    the binomial variance of the test points and the estimation variance of the fit and
    the map.  Bins with data in fewer than 2 replications get no SE (NaN).

    Parameters
    ----------
    table : DataFrame
        Rows of the study with ``design``, ``method``, ``bin_n``, ``bin_pred``, ``bin_obs``.

    Returns
    -------
    DataFrame
        One row per (design, method, bin): ``bin``, ``reps`` (R_b), ``predicted`` (mean
        over replications of the bin's mean prediction), ``gap``, ``se``, ``z``,
        ``within_2se`` (NaN without an SE).
    """
    scored = table.dropna(subset=["bin_n"])
    out = []
    for (design, method), group in scored.groupby(["design", "method"], sort=False):
        n, pred, obs = (np.vstack(group[c].to_list()).astype(float)
                        for c in ("bin_n", "bin_pred", "bin_obs"))
        for b in range(n.shape[1]):
            used = n[:, b] > 0
            reps = int(used.sum())
            gaps = (obs[used, b] - pred[used, b]) / n[used, b]
            se = gaps.std(ddof=1) / np.sqrt(reps) if reps >= 2 else np.nan
            gap = gaps.mean() if reps else np.nan
            z = gap / se if se > 0 else np.nan
            out.append({"design": design, "method": method, "bin": b, "reps": reps,
                        "predicted": float(np.mean(pred[used, b] / n[used, b]))
                        if reps else np.nan,
                        "gap": gap, "se": se, "z": z,
                        "within_2se": float(abs(z) <= 2) if np.isfinite(z) else np.nan})
    return pd.DataFrame(out)


def bins_within_2se(n, pred, obs):
    """(bins with data, bins whose observed frequency is within 2 binomial SEs)."""
    n, pred, obs = (np.asarray(v, dtype=float) for v in (n, pred, obs))
    used = n > 0
    pbar, freq = pred[used] / n[used], obs[used] / n[used]
    se = np.sqrt(np.clip(pbar * (1 - pbar), 1e-12, None) / n[used])
    return int(used.sum()), int(np.sum(np.abs(freq - pbar) <= 2 * se))


def per_fit_share_at(group, test_size, full_size):
    """Expected share of per-fit bins within 2 binomial SEs with ``test_size`` test points.

    A test set of m <= M = ``full_size`` points is a subsample: bin b of a replication
    then holds n m / M of its n pairs, with binomial SE se_m = sqrt(pbar(1 - pbar) / (n m / M)),
    and its observed gap is the gap g measured on all M points plus sampling noise of
    variance se_m^2 - se_M^2.  The bin passes (|gap| <= 2 se_m) with probability

        Phi((2 se_m - g) / s) - Phi((-2 se_m - g) / s),   s = sqrt(se_m^2 - se_M^2),

    the indicator |g| <= 2 se_M at m = M (the check as run).  Averaged over the
    (replication, bin) pairs with data.
    """
    shares = []
    for n, pred, obs in zip(group["bin_n"], group["bin_pred"], group["bin_obs"], strict=True):
        n, pred, obs = (np.asarray(v, dtype=float) for v in (n, pred, obs))
        used = n > 0
        pbar, gap = pred[used] / n[used], (obs[used] - pred[used]) / n[used]
        var = np.clip(pbar * (1 - pbar), 1e-12, None)
        se_m, se_full = np.sqrt(var / (n[used] * test_size / full_size)), np.sqrt(var / n[used])
        if test_size >= full_size:
            shares.append((np.abs(gap) <= 2 * se_full).astype(float))
            continue
        s = np.sqrt(se_m**2 - se_full**2)
        shares.append(stats.norm.cdf((2 * se_m - gap) / s) - stats.norm.cdf((-2 * se_m - gap) / s))
    return float(np.mean(np.concatenate(shares)))


# --- methods -----------------------------------------------------------------------------------
def tuned(factory, split, grid):
    """Best parameters on the tuning set (test error)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tune(factory, split.X_train, split.y_train, param_grid=grid, X_tune=split.X_tune,
                   y_tune=split.y_tune, refit=False)
    return res.best_params


def svm_rows(split, method, kernel, seed, costs=None):
    """Rows of one SVM method: every calibration map on the same held-out decision values."""
    start = time.perf_counter()
    if kernel == "linear":
        grid = {"C": list(PAPER_C_GRID)}
        params = tuned(partial(NORDICClassifier, method=method, kernel="linear"), split, grid)
    else:
        params = tuned(method, split, default_grid(method, split.X_train))
    return map_rows(split, method, kernel, params, seed, CALIBRATION_METHODS, costs, start)


def svm_label(method, kernel):
    """``NORDIC-1``, ``BSVM``, ``NORDIC-1 linear``: the study's name of an SVM fit."""
    return {"nordic1": "NORDIC-1", "bsvm": "BSVM"}[method] + ("" if kernel == "rbf"
                                                              else " linear")


def map_rows(split, method, kernel, params, seed, maps, costs=None, start=None):
    """Rows of the maps ``maps`` on one fit with ``params``, all on the same held-out values."""
    start = time.perf_counter() if start is None else start
    model = NORDIC(split.y_train, split.X_train, method=method, kernel=kernel, **params)
    res = model.fit(cov_type="none", probability=True,
                    probability_kwds={"n_folds": 5, "random_state": seed})
    F = res.decision_function(split.X_test)
    codes = np.asarray(split.y_test.cat.codes)
    label = svm_label(method, kernel)
    common = {"C": params["C"], "gamma": params.get("gamma"),
              "crossing_test": res.crossing_rate(split.X_test),
              "fit_time": time.perf_counter() - start}
    rows = []
    for name in maps:
        cal = fit_calibration(res.calibration.held_out, model.response.codes, None, name)
        rows.append({"method": f"{label} + {name}", **common,
                     **scores(cal.class_probabilities(F), codes)})
    if method == "bsvm" and "platt" in maps:
        platt = fit_calibration(res.calibration.held_out, model.response.codes, None, "platt")
        raw = special.expit(F * platt.slope + platt.offset)  # no projection
        rows.append({"method": "BSVM + platt (raw)", **common,
                     **scores(cumulative_to_class(raw), codes)})
    if costs is not None:
        rows[0]["weighted_error_class"] = weighted_error(split.y_test, res.predict(split.X_test),
                                                         costs)
        rows[0]["weighted_error_cost_bayes"] = weighted_error(
            split.y_test, res.predict(split.X_test, cost=costs), costs)
    return rows


SVM_FITS = (("nordic1", "rbf"), ("bsvm", "rbf"), ("nordic1", "linear"))


def added_map_rows(design, rep, seed, test_size, maps, stored):
    """Rows of the maps ``maps`` for a stored replication: each SVM refitted with the C and
    width the study tuned (``stored``: its rows of this replication), the same folds."""
    data_seed, _ = replication_seeds(seed, rep)
    split, _ = draw(design, data_seed, test_size)
    rows = []
    for method, kernel in SVM_FITS:
        row = next(r for r in stored if r["method"].startswith(svm_label(method, kernel) + " + "))
        params = {"C": row["C"]} if kernel == "linear" else {"C": row["C"], "gamma": row["gamma"]}
        rows += map_rows(split, method, kernel, params, rep, maps)
    return [{"design": design, "rep": rep, **row} for row in rows]


def add_maps(args):
    """Append the rows of maps added after the study ran (``--add-maps``) to its rows."""
    stored = [json.loads(line) for line in args.out.read_text().splitlines()]
    by_rep = {}
    for row in stored:
        by_rep.setdefault((row["design"], row["rep"]), []).append(row)
    for (design, rep), rows in by_rep.items():
        have = {r["method"] for r in rows}
        maps = [m for m in args.add_maps if f"NORDIC-1 + {m}" not in have]
        if design not in args.designs or rep >= args.reps or not maps or "skipped" in have:
            continue
        start = time.perf_counter()
        new = added_map_rows(design, rep, args.seed, args.test_size, maps, rows)
        with args.out.open("a") as handle:
            for row in new:
                handle.write(json.dumps(row) + "\n")
        print(f"{design} rep {rep} maps {maps}: {time.perf_counter() - start:.1f} s", flush=True)


def cost_trained_row(split, costs):
    """NORDIC-1 trained with the cost and tuned on the weighted error (no probabilities)."""
    grid = default_grid("nordic1", split.X_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = tune(partial(NORDICClassifier, cost=costs),
                   split.X_train, split.y_train, param_grid=grid, X_tune=split.X_tune,
                   y_tune=split.y_tune, scoring=costs, refit=False)
    clf = NORDICClassifier(cost=costs, **res.best_params).fit(split.X_train, split.y_train)
    pred = pd.Categorical(clf.predict(split.X_test), categories=split.y_test.cat.categories,
                          ordered=True)
    return {"method": "NORDIC-1 cost-trained", **res.best_params,
            "weighted_error_class": weighted_error(split.y_test, pred, costs)}


def ologit_row(split):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = OrderedLogit(split.y_train, split.X_train).fit()
    proba = res.predict(split.X_test, which="proba").to_numpy()
    return {"method": "ordered logit", **scores(proba, np.asarray(split.y_test.cat.codes))}


def svc_row(split, seed):
    codes = np.asarray(split.y_train.cat.codes)
    grid = default_grid("bsvm", split.X_train)
    params = tune(SVC, split.X_train, codes, param_grid=grid,
                  X_tune=split.X_tune, y_tune=np.asarray(split.y_tune.cat.codes),
                  refit=False).best_params
    with warnings.catch_warnings():  # deprecated in scikit-learn 1.9, still the OvO reference
        warnings.simplefilter("ignore", FutureWarning)
        svc = SVC(probability=True, random_state=seed, **params).fit(split.X_train, codes)
    proba = np.zeros((len(split.y_test), len(split.y_train.cat.categories)))
    proba[:, svc.classes_] = svc.predict_proba(split.X_test)
    return {"method": "SVC one-vs-one", **params,
            **scores(proba, np.asarray(split.y_test.cat.codes))}


def replication(design, rep, seed, test_size):
    data_seed, _ = replication_seeds(seed, rep)
    split, truth = draw(design, data_seed, test_size)
    costs = DONUT_COSTS if design.startswith("donut") else None
    rows = [row for method, kernel in SVM_FITS
            for row in svm_rows(split, method, kernel, rep, costs if method == "nordic1"
                                and kernel == "rbf" else None)]
    rows += [ologit_row(split), svc_row(split, rep)]
    if costs is not None:
        rows.append(cost_trained_row(split, costs))
    if truth is not None:
        rows.append({"method": "truth", **scores(truth, np.asarray(split.y_test.cat.codes))})
    return [{"design": design, "rep": rep, **row} for row in rows]


# --- summary -----------------------------------------------------------------------------------
def summarize(rows):
    table = pd.DataFrame(rows)
    metrics_ = ["log_loss", "brier", "rps", "invalid", "error", "weighted_error_class",
                "weighted_error_cost_bayes"]
    present = [m for m in metrics_ if m in table]
    grouped = table.groupby(["design", "method"], sort=False)
    summary = grouped[present].mean()
    summary["reps"] = grouped.size()
    summary["fit_bins_within_2se"] = grouped.apply(_calibration_share, include_groups=False)
    procedure = procedure_calibration(table).groupby(["design", "method"], sort=False)
    summary["procedure_bins_within_2se"] = procedure["within_2se"].mean()
    return summary


def _calibration_share(group):
    """Per-fit check: share of (replication, bin) pairs within 2 binomial SEs."""
    if "bin_n" not in group or group["bin_n"].isna().all():
        return np.nan
    counts = [bins_within_2se(n, p, o) for n, p, o in
              zip(group["bin_n"], group["bin_pred"], group["bin_obs"], strict=True)
              if isinstance(n, list)]
    return sum(c[1] for c in counts) / max(1, sum(c[0] for c in counts))


def paired(table, design, a, b, metric="rps"):
    """Mean and SE of the per-replication difference a - b."""
    wide = table[table.design == design].pivot(index="rep", columns="method", values=metric)
    diff = (wide[a] - wide[b]).dropna()
    return diff.mean(), diff.std(ddof=1) / np.sqrt(diff.size), diff.size


#: Paired comparisons of the summary: (method, other method, metric).
PAIRED = (("NORDIC-1 + logistic", "BSVM + platt (raw)", "rps"),
          ("NORDIC-1 + pooled", "BSVM + platt (raw)", "rps"),
          ("NORDIC-1 + pooled", "NORDIC-1 + logistic", "rps"),
          ("NORDIC-1 + pooled", "NORDIC-1 + logistic", "log_loss"))


def targets_text(table, summary):
    lines = ["Targets (paired over replications: mean difference, SE, reps)"]
    methods = set(table.method)
    for design in dict.fromkeys(table.design):
        for a, b, metric in PAIRED:
            if {a, b} <= methods:
                m, se, r = paired(table, design, a, b, metric)
                lines.append(f"  {design}: {metric} {a} - {b} = {m:+.5f} (SE {se:.5f}, "
                             f"{r} reps)")
    lines += cost_lines(table)
    for design in [d for d in dict.fromkeys(table.design) if d.startswith("latent logistic")]:
        for label in ("NORDIC-1 linear + logistic", "NORDIC-1 + logistic",
                      "NORDIC-1 linear + pooled", "NORDIC-1 + pooled"):
            if (design, label) not in summary.index:
                continue
            ratio = (summary.loc[(design, label), "rps"]
                     / summary.loc[(design, "ordered logit"), "rps"])
            lines.append(f"  {design}: RPS {label} / ordered logit = {ratio:.4f}")
    return "\n".join(lines)


CALIBRATION_SHOWN = ("NORDIC-1 + logistic", "NORDIC-1 + pooled", "NORDIC-1 + platt",
                     "BSVM + logistic", "BSVM + pooled", "NORDIC-1 linear + pooled",
                     "BSVM + platt (raw)", "NORDIC-1 linear + logistic", "ordered logit",
                     "SVC one-vs-one", "truth")


def calibration_text(calibration):
    """The bins outside 2 replication SEs, per design and method (gap and z)."""
    lines = ["Calibration of the procedure: bins with |mean gap| > 2 SE over the replications "
             "(bin: observed - predicted (z))"]
    shown = calibration[calibration.method.isin(CALIBRATION_SHOWN)]
    for (design, method), part in shown.groupby(["design", "method"], sort=False):
        tested = part.dropna(subset=["within_2se"])
        failed = tested[tested.within_2se == 0]
        cells = " ".join(f"{int(r.bin)}: {r.gap:+.4f} ({r.z:+.1f})" for r in failed.itertuples())
        lines.append(f"  {design} | {method}: {len(tested) - len(failed)}/{len(tested)} pass"
                     + (f"; {cells}" if cells else ""))
    return lines


#: Test-set sizes at which the per-fit check's pass share is extrapolated.
PER_FIT_TEST_SIZES = (100, 300, 1000, 3000, 10_000)


def per_fit_lines(table, full_size):
    """The per-fit check's expected pass share at smaller test sets (:func:`per_fit_share_at`)."""
    lines = [f"Per-fit check: expected share of bins within 2 binomial SEs at "
             f"{', '.join(map(str, PER_FIT_TEST_SIZES))} test points"]
    shown = ("NORDIC-1 + logistic", "NORDIC-1 + pooled", "ordered logit", "SVC one-vs-one",
             "truth")
    simulated = table[(table.design != "balance") & table.method.isin(shown)]
    for (design, method), group in simulated.groupby(["design", "method"], sort=False):
        shares = [per_fit_share_at(group, size, full_size) for size in PER_FIT_TEST_SIZES]
        lines.append(f"  {design} | {method}: " + " ".join(f"{v:.2f}" for v in shares))
    return lines


def cost_lines(table):
    """Weighted error on the donut: cost-Bayes on probabilities vs the class rule and vs
    training with the cost (paired over replications)."""
    donut = table[table.design.str.startswith("donut")]
    if donut.empty or "weighted_error_cost_bayes" not in donut:
        return []
    nordic = donut[donut.method == "NORDIC-1 + logistic"].set_index("rep")
    trained = donut[donut.method == "NORDIC-1 cost-trained"].set_index("rep")
    bayes = nordic["weighted_error_cost_bayes"]
    lines = ["Weighted error on the donut (DONUT_COSTS), cost-Bayes rule on NORDIC-1's "
             "probabilities minus:"]
    for label, other in (("the class rule of the same fit", nordic["weighted_error_class"]),
                         ("NORDIC-1 trained with the cost", trained["weighted_error_class"])):
        diff = (bayes - other).dropna()
        se = diff.std(ddof=1) / np.sqrt(diff.size)
        lines.append(f"  {label}: {diff.mean():+.5f} (SE {se:.5f}, {diff.size} reps; means "
                     f"{bayes.mean():.4f} vs {other.mean():.4f})")
    return lines


def reliability_plot(table, calibration, path):
    """Top: observed frequency against mean prediction per bin, counts pooled over the
    replications.  Bottom: the procedure's gap per bin with 2 replication SEs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    designs = list(dict.fromkeys(table.design))
    shown = ["NORDIC-1 + logistic", "NORDIC-1 + pooled", "BSVM + platt (raw)", "ordered logit",
             "SVC one-vs-one"]
    fig, axes = plt.subplots(2, len(designs), figsize=(3.2 * len(designs), 6.4),
                             squeeze=False)
    for col, design in enumerate(designs):
        top, bottom = axes[0, col], axes[1, col]
        for method in shown:
            part = table[(table.design == design) & (table.method == method)]
            if part.empty:
                continue
            n, p, o = (np.sum(np.vstack(part[c].to_list()), axis=0)
                       for c in ("bin_n", "bin_pred", "bin_obs"))
            used = n > 0
            top.plot(p[used] / n[used], o[used] / n[used], marker="o", ms=3, label=method)
            gaps = calibration[(calibration.design == design) & (calibration.method == method)]
            bottom.errorbar(gaps.predicted, gaps.gap, yerr=2 * gaps.se, marker="o", ms=3,
                            capsize=2, lw=0.8)
        top.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
        top.set_ylim(-0.02, 1.02)
        bottom.axhline(0, color="grey", lw=0.8, ls="--")
        top.set_title(design, fontsize=9)
        bottom.set_xlabel("predicted probability")
    axes[0, 0].set_ylabel("observed frequency")
    axes[1, 0].set_ylabel("observed - predicted (+- 2 SE)")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# --- screening: why the calibration gaps --------------------------------------------------------
#: Shared-link maps compared by the screen (``--screen``): the package's ``logistic`` and
#: ``pooled`` and two flexible monotone links of the own decision value.
SCREEN_LINKS = ("logistic", "beta", "spline", "pooled")
#: Quantiles of the pooled sorted decision values at which the ``spline`` link bends.
SPLINE_QUANTILES = (0.25, 0.5, 0.75)


def beta_basis(S):
    """Beta calibration's link (Kull et al. 2017) on s = expit(f): a log s - b log(1 - s)
    = -a log(1 + e^-f) + b log(1 + e^f), slopes a as f -> -inf and b as f -> +inf."""
    return np.stack([-np.logaddexp(0.0, -S), np.logaddexp(0.0, S)], axis=2)


def spline_basis(S, knots):
    """Piecewise-linear increasing link: min(f - t_j, 0) and max(f - t_j, 0) per knot t_j."""
    shifted = S[:, :, None] - np.asarray(knots)[None, None, :]
    return np.concatenate([np.minimum(shifted, 0.0), np.maximum(shifted, 0.0)], axis=2)


def screen_map(F, codes, link, targets):
    """A shared-link calibration map of the screen, fitted on (F, codes)."""
    if link in LINK_BASES:
        return fit_calibration(F, codes, None, link, targets)
    basis = beta_basis if link == "beta" else partial(
        spline_basis, knots=np.quantile(rearrange(F), SPLINE_QUANTILES))
    return fit_shared_link(F, codes, basis, None, targets, link)


def stored_params(path, design, rep):
    """C and gamma of NORDIC-1 (RBF) tuned in replication ``rep`` of the stored study."""
    for row in map(json.loads, path.read_text().splitlines()):
        if (row["design"], row["rep"], row["method"]) == (design, rep, "NORDIC-1 + logistic"):
            return {"C": row["C"], "gamma": row["gamma"]}
    return None


def screen_replication(design, rep, seed, test_size, params):
    """Rows of the calibration variants of NORDIC-1 (RBF, the study's tuned C and width).

    Variants, all scored on the same test rows (the second half of the test set on the
    simulated designs, the whole test set on the balance scale):

    * ``<link> k=<folds> refit``: the map fitted on held-out values, applied to the full
      fit (the package's procedure); ``raw`` uses 0/1 targets instead of Platt's;
    * ``... ensemble``: the same map applied to each fold fit, cumulative probabilities
      averaged (the map meets the decision values it was fitted on);
    * ``... ensemble per-fold``: each fold fit with a map fitted on its own held-out fold
      (scikit-learn's ``CalibratedClassifierCV(ensemble=True)``);
    * ``... tuning-set map``: the full fit's map fitted on its values at the 100 fresh
      tuning rows (no fold/full mismatch, as many rows as the cross-fitting);
    * ``... oracle map``: fitted on the full fit's values at the first half of the test set
      (5,000 fresh rows: no mismatch and almost no estimation error of the map).
    """
    data_seed, _ = replication_seeds(seed, rep)
    split, _ = draw(design, data_seed, test_size)
    model = NORDIC(split.y_train, split.X_train, method="nordic1", kernel="rbf", **params)
    full = model.fit()
    codes, test_codes = model.response.codes, np.asarray(split.y_test.cat.codes)
    X_test = np.asarray(split.X_test, dtype=float)
    half = 0 if design == "balance" else X_test.shape[0] // 2
    F_test = full.decision_function(X_test[half:])
    fresh = {"tuning-set map": (full.decision_function(split.X_tune),
                                np.asarray(split.y_tune.cat.codes))}
    if half:
        fresh["oracle map"] = (full.decision_function(X_test[:half]), test_codes[:half])
    rows = []

    def add(name, cumulative, **extra):
        rows.append({"method": name, **params, **extra,
                     **scores(cumulative_to_class(cumulative), test_codes[half:])})

    for n_folds in (5, 10):
        folds = []

        def refit(train, test, folds=folds):
            fold = model._on_rows(train).fit(cov_type="none")
            held = fold.decision_function(model.exog[test])
            folds.append((test, held, fold.decision_function(X_test[half:])))
            return held

        held_out = cross_fit_decision(refit, codes, model.levels, n_folds, rep)
        scale = np.mean([np.std(G) for *_, G in folds]) / np.std(F_test)
        for link in SCREEN_LINKS:
            for platt in (True, False):
                targets = "platt" if platt else "indicator"
                cal = screen_map(held_out, codes, link, targets)
                name = f"{link}{'' if platt else ' raw'} k={n_folds}"
                add(f"{name} refit", cal.cumulative(F_test), fold_to_full_scale=scale)
                add(f"{name} ensemble",
                    np.mean([cal.cumulative(G) for *_, G in folds], axis=0))
                if n_folds == 5 and link == "logistic" and platt:
                    per_fold = [fit_calibration(held, codes[test], None, link).cumulative(G)
                                for test, held, G in folds]
                    add(f"{name} ensemble per-fold", np.mean(per_fold, axis=0))
                if n_folds == 5:
                    for label, (F_fresh, y_fresh) in fresh.items():
                        cal = screen_map(F_fresh, y_fresh, link, targets)
                        add(f"{link}{'' if platt else ' raw'} {label}",
                            cal.cumulative(F_test))
    return [{"design": design, "rep": rep, **row} for row in rows]


def screen(args):
    """Run the screen (``--screen``): rows to ``probabilities_screen.jsonl``."""
    out = args.out.with_name("probabilities_screen.jsonl")
    done = set()
    if out.exists():
        done = {(r["design"], r["rep"]) for r in map(json.loads, out.read_text().splitlines())}
    for rep in range(args.reps):
        for design in args.designs:
            params = stored_params(args.out, design, rep)
            if (design, rep) in done or params is None:
                continue
            start = time.perf_counter()
            rows = screen_replication(design, rep, args.seed, args.test_size, params)
            with out.open("a") as handle:
                for row in rows:
                    handle.write(json.dumps(row) + "\n")
            print(f"screen {design} rep {rep}: {time.perf_counter() - start:.1f} s", flush=True)
    table = pd.DataFrame([json.loads(line) for line in out.read_text().splitlines()])
    text = screen_summary(table).to_string() + "\n" + "\n".join(gap_by_c_lines(table))
    out.with_name("probabilities_screen_summary.txt").write_text(text + "\n")
    print(text)


def gap_by_c_lines(table, method="logistic k=5 refit"):
    """(d): the largest |gap_b| of ``method`` over the replications tuned to C <= 1 and C > 1."""
    lines = [f"Largest |gap| of {method} by the tuned C (replications)"]
    part = table[table.method == method]
    for design, rows in part.groupby("design", sort=False):
        cells = []
        for label, chosen in (("C <= 1", rows[rows.C <= 1]), ("C > 1", rows[rows.C > 1])):
            if len(chosen) >= 5:
                gap = procedure_calibration(chosen).gap.abs().max()
                cells.append(f"{label}: {gap:.3f} ({len(chosen)})")
        lines.append(f"  {design}: " + ", ".join(cells))
    return lines


def screen_summary(table):
    """Per (design, variant): bins within 2 replication SEs, largest |gap|, RPS, log loss."""
    calibration = procedure_calibration(table).groupby(["design", "method"], sort=False)
    summary = pd.DataFrame({
        "bins_within_2se": calibration.within_2se.sum().astype(int),
        "largest_gap": calibration.gap.apply(lambda gap: gap.abs().max()).round(4)})
    scores_ = table.groupby(["design", "method"], sort=False)[["rps", "log_loss"]].mean()
    summary = summary.join(scores_.round(4))
    summary["reps"] = table.groupby(["design", "method"], sort=False).size()
    return summary


# --- driver ------------------------------------------------------------------------------------
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--test-size", type=int, default=10_000)
    parser.add_argument("--designs", nargs="*", default=list(DESIGNS))
    parser.add_argument("--out", type=Path, default=RESULTS / "probabilities.jsonl")
    parser.add_argument("--screen", action="store_true",
                        help="run the screen of calibration variants instead of the study")
    parser.add_argument("--add-maps", nargs="*", default=[],
                        help="append rows of these calibration maps to stored replications")
    args = parser.parse_args(argv)
    if args.screen:
        return screen(args)
    if args.add_maps:
        add_maps(args)
    done = set()
    if args.out.exists():
        done = {(r["design"], r["rep"]) for r in map(json.loads, args.out.read_text().splitlines())}
    for rep in range(args.reps):
        for design in args.designs:
            if (design, rep) in done:
                continue
            start = time.perf_counter()
            try:
                rows = replication(design, rep, args.seed, args.test_size)
            except ValueError as exc:  # a level with one training row: no cross-fitting
                if "has only 1 row" not in str(exc):
                    raise
                rows = [{"design": design, "rep": rep, "method": "skipped", "message": str(exc)}]
            with args.out.open("a") as handle:
                for row in rows:
                    handle.write(json.dumps(row) + "\n")
            print(f"{design} rep {rep}: {time.perf_counter() - start:.1f} s", flush=True)
    rows = [json.loads(line) for line in args.out.read_text().splitlines()]
    skipped = [(r["design"], r["rep"]) for r in rows if r["method"] == "skipped"]
    rows = [r for r in rows if r["method"] != "skipped"]
    table = pd.DataFrame(rows)
    summary = summarize(rows)
    summary.to_csv(args.out.with_name("probabilities_summary.csv"), float_format="%.6g")
    calibration = procedure_calibration(table)
    calibration.to_csv(args.out.with_name("probabilities_calibration.csv"), index=False,
                       float_format="%.8g")
    text = (f"{summary.round(4).to_string()}\n\n{targets_text(table, summary)}\n"
            + "\n".join(calibration_text(calibration)) + "\n"
            + "\n".join(per_fit_lines(table, args.test_size)) + "\n"
            f"Skipped replications (a level with one training row): {skipped}\n")
    args.out.with_name("probabilities_summary.txt").write_text(text)
    reliability_plot(table, calibration, args.out.with_name("probabilities_reliability.png"))
    print(text)


if __name__ == "__main__":
    main()
