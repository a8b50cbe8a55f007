"""The report's "Deviations from the paper": each deviation and its measured effect.

Where an effect can be measured it is measured on rows that pair with the main
studies' rows (same seeds, so replication r of a variant draws the same data as
replication r of the main study):

* the donut's noise read as a variance (``donut_variance`` rows);
* the donut tuned by its weighted error (``donut_weighted_tuning`` rows), and the balance
  scale tuned by the plain error (``balance_error_tuning`` rows);
* SVR run as ``e1071::svm`` does by default, with scaling (``balance_svr_scaled`` rows);
* ties of the tuning criterion broken to the largest instead of the smallest C
  (``deviation_ties.csv``, from ``python -m benchmarks.paper_studies ties``);
* refits not certified optimal: the claims recomputed without their replications.

The effect on a claim is shown as the per-cell verdicts of the same claim test on the
main rows (restricted to the variant's designs and replications) and on the variant's
rows, side by side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nordicstats.datasets import load_balance_scale
from studies.replication_claims import BALANCE_COUNTS, study_claims

__all__ = ["compare_verdicts", "deviation_lines"]


def _text(mean, se):
    return "" if pd.isna(mean) else f"{mean:+.4f} ({se:.4f})"


def compare_verdicts(kind, base, variant, ids=None):
    """Per-cell verdicts of the same claim tests on ``base`` and on ``variant`` rows.

    Returns a DataFrame with ``id``, ``cell``, the difference (SE) and verdict on each
    table, and ``changed`` (the verdicts differ).
    """
    _, here = study_claims(kind, base)
    _, other = study_claims(kind, variant)
    merged = here.merge(other, on=["id", "cell"], suffixes=(" here", " variant"))
    if ids is not None:
        merged = merged[merged["id"].isin(ids)]
    out = pd.DataFrame({"id": merged["id"], "cell": merged["cell"],
                        "comparison here": merged["comparison here"]})
    for side in ("here", "variant"):
        out[f"D {side}"] = [_text(m, s) for m, s in zip(merged[f"difference {side}"],
                                                        merged[f"se {side}"], strict=True)]
        out[f"verdict {side}"] = merged[f"verdict {side}"].to_numpy()
    out["changed"] = np.where(out["verdict here"] != out["verdict variant"], "yes", "")
    return out.reset_index(drop=True)


def _matching(base, variant):
    """``base`` rows of the variant's (d, sigma) designs and replications."""
    pairs = {(int(d), round(float(s), 6))
             for d, s in zip(variant["d"], variant["sigma"], strict=True)}
    keep = [(int(d), round(float(s), 6)) in pairs and r in set(variant["rep"])
            for d, s, r in zip(base["d"], base["sigma"], base["rep"], strict=True)]
    return base[keep]


def _span(texts):
    """``"a to b"`` over ``"+0.0123 (0.0045)"`` texts: the smallest and largest mean."""
    means = sorted(float(t.split()[0]) for t in texts)
    return f"{means[0]:+.4f} to {means[-1]:+.4f}"


def _changes(frame):
    return f"{int((frame['changed'] == 'yes').sum())} of {len(frame)} cell verdicts change"


def _paired_change(base, variant, metric, key=("design", "rep", "method")):
    """Per method: mean (SE) of ``variant - base`` of ``metric``, paired by design and rep."""
    merged = base.merge(variant[list(key) + [metric]], on=list(key),
                        suffixes=(" here", " variant"))
    diff = (merged[f"{metric} variant"] - merged[f"{metric} here"]).groupby(
        [merged["method"], merged["rep"]]).mean()  # cells pooled within a replication
    stats = diff.groupby(level="method").agg(["mean", "std", "count"])
    return pd.DataFrame({"method": stats.index, "pairs": stats["count"].to_numpy(),
                         f"change of {metric}": [_text(m, s / np.sqrt(n)) for m, s, n in zip(
                             stats["mean"], stats["std"], stats["count"], strict=True)]})


def _variance_lines(donut, variant):
    variant = variant.assign(sigma=np.round(variant["sigma"] ** 2, 6))
    base = _matching(donut, variant)
    table = compare_verdicts("donut", base, variant, ids=["6.2a", "6.2d", "6.2e", "6.2t"])
    return ["The donut's noise.  The paper adds N_d(0, sigma I), whose covariance sigma I "
            "means a standard deviation sqrt(sigma); here sigma is the standard deviation "
            f"(the usual reading of the figure's noise levels).  Measured: the donut rerun "
            f"with sd = sqrt(sigma) at d in {sorted(set(variant['d']))} "
            f"({variant['rep'].nunique()} replications, the main study's seeds); cells are "
            "labelled by sigma as the paper writes it, and \"here\" is the main study's rows "
            "of the same designs and replications.  (The literal reading of sigma = 0.4, sd "
            "0.63, is close to the main study's sigma = 0.6.)  " + _changes(table) + ".", "",
            table.to_markdown(index=False), ""], f"{_changes(table)} (6.2a, d, e, t)"


def _tuning_lines(donut, variant):
    base = _matching(donut, variant)
    table = compare_verdicts("donut", base, variant, ids=["6.2a", "6.2e", "6.2f", "6.2g"])
    change = _paired_change(base, variant, "weighted_error")
    return ["Tuning criterion.  The paper does not say by which criterion the tuning set "
            "chooses C and the width; here the simulations are tuned by the plain error and "
            "the balance scale by the weighted error it is scored by.  Measured on the "
            "donut: the same designs tuned by the weighted error "
            f"({variant['rep'].nunique()} replications; \"here\" is the main study's rows of "
            "the same designs and replications).  " + _changes(table) + "; each "
            "method's weighted error changes by (tuned by weighted error - tuned by error, "
            "pooled over the cells within a replication):", "",
            change.to_markdown(index=False), "", table.to_markdown(index=False), ""], (
        f"donut: {_changes(table)} (6.2a, e, f, g); every method's weighted error changes "
        f"by {_span(change.iloc[:, 2])}")


def _balance_tuning_lines(balance, variant):
    base = balance[balance["rep"].isin(set(variant["rep"]))
                   & balance["method"].isin(set(variant["method"]))]
    ids = ["7c", "7f", "7g", "7h", "7i", "7n"]
    table = compare_verdicts("balance", base, variant, ids=ids)
    change = _paired_change(base, variant, "weighted_error")
    return ["On the balance scale the other arm: the same splits tuned by the plain error "
            f"({variant['rep'].nunique()} per n; the ordered logit, with nothing to tune, left "
            "out; \"here\" is the main rows of the same splits and methods).  "
            + _changes(table) + "; each method's weighted error changes by (tuned by error - "
            "tuned by weighted error, pooled over n within a split):", "",
            change.to_markdown(index=False), "", table.to_markdown(index=False), ""], (
        f"balance: {_changes(table)} ({', '.join(ids)}); weighted error changes by "
        f"{_span(change.iloc[:, 2])}")


def _largest_gap(rows):
    """The pair of methods whose shifts (``diff``, paired by rep) differ most, as text."""
    shifts = rows.pivot_table(index="rep", columns="method", values="diff")
    pairs = [(shifts[a] - shifts[b], f"{a} - {b}") for i, a in enumerate(shifts)
             for b in shifts.columns[i + 1:]]
    gap, name = max(pairs, key=lambda pair: abs(pair[0].mean()))
    return f"{name} {_text(gap.mean(), gap.std(ddof=1) / np.sqrt(gap.size))}"


def _ties_lines(ties, balance):
    merged = ties.merge(balance[["design", "method", "rep", "weighted_error"]],
                        on=["design", "method", "rep"], how="left")
    same = int(np.isclose(merged["weighted_error"], merged["weighted_error_smallest"]).sum())
    diff = merged["weighted_error_largest"] - merged["weighted_error_smallest"]
    grouped = merged.assign(diff=diff, tie=merged["tied"] > 1).groupby(["design", "method"],
                                                                       sort=False)
    table = grouped.agg(splits=("rep", "size"), tied_share=("tie", "mean"),
                        tied_points=("tied", "mean"), mean=("diff", "mean"),
                        sd=("diff", "std")).reset_index()
    table["largest C - smallest C"] = [_text(m, s / np.sqrt(n)) for m, s, n in zip(
        table.pop("mean"), table.pop("sd"), table["splits"], strict=True)]
    between = [f"{design}: {_largest_gap(part)}" for design, part
               in merged.assign(diff=diff).groupby("design", sort=False)]
    return ["Ties.  The paper does not say how ties of the tuning criterion are broken; here "
            "the smallest C wins (then the middle width).  Measured on the balance scale, "
            "where tuning sets of n points tie often: each split tuned once and refit with "
            "the smallest and with the largest tied C.  The smallest-C refits reproduce "
            f"{same} of {len(merged)} stored rows exactly.  \"tied_share\": splits with more "
            "than one best grid point; \"tied_points\": mean number of best grid points.  "
            "A comparison between two of these methods moves by at most (the largest "
            "paired difference of two methods' shifts): "
            + "; ".join(between) + ".", "",
            table.to_markdown(index=False, floatfmt=".3f"), ""], (
        f"ties in {table['tied_share'].min():.0%}-{table['tied_share'].max():.0%} of splits; "
        f"largest C changes the weighted error by {_span(table['largest C - smallest C'])}; "
        "comparisons between methods move by at most: " + "; ".join(between))


def _svr_lines(balance, scaled):
    variant = pd.concat([balance[balance["method"] != "SVR"],
                         scaled.assign(method="SVR")], ignore_index=True)
    variant = variant[variant["rep"].isin(set(scaled["rep"]))]
    base = balance[balance["rep"].isin(set(scaled["rep"]))]
    table = compare_verdicts("balance", base, variant, ids=["7c", "7j", "7k"])
    change = _paired_change(base[base["method"] == "SVR"], scaled.assign(method="SVR"),
                            "weighted_error")
    return ["SVR's scaling.  e1071's svm() standardises the covariates and the response by "
            "default; here SVR is fitted to the data as given.  Measured: SVR with e1071's "
            "scaling (and the widths from the standardised covariates) on the same splits "
            f"({scaled['rep'].nunique()} per n); its weighted error changes by "
            f"{change.iloc[0, 2]} (scaled - unscaled, pooled over n within a split).  "
            "Claims about SVR with the scaled SVR in its place: " + _changes(table) + ".",
            "", table.to_markdown(index=False), ""], (
        f"weighted error {change.iloc[0, 2]}; {_changes(table)} (7c, j, k)")


def _certificate_lines(name, table):
    status = table.get("solver_status")
    if status is None:
        return [], f"{name}: no certificates recorded"
    bad = table[status.notna() & (status != "optimal")]
    if bad.empty:
        return [f"Refits not certified ({name}): none.", ""], f"{name}: none"
    drop = set(zip(bad["design"], bad["rep"], strict=True))
    keep = [(d, r) not in drop for d, r in zip(table["design"], table["rep"], strict=True)]
    compared = compare_verdicts(name, table, table[keep])
    changed = compared[compared["changed"] == "yes"]
    lines = [f"Refits not certified ({name}): {len(bad)} refit(s) stopped without a certificate "
             f"of optimality ({', '.join(sorted(set(bad['solver_status'])))}; the rows keep "
             "them).  Measured: every claim recomputed without the replications of those "
             f"designs: {_changes(compared)}.", ""]
    if len(changed):
        lines += [changed.to_markdown(index=False), ""]
    return lines, f"{name}: {len(bad)} uncertified, {_changes(compared)}"


def _data_lines():
    data = load_balance_scale()
    counts = data["balance"].astype(str).value_counts()
    distinct = len(data.drop(columns="balance").drop_duplicates())
    stated = ", ".join(f"{k} {int(counts.get(k, 0))} (paper {v})"
                       for k, v in BALANCE_COUNTS.items())
    return ["Balance-scale data.  The data set is generated from the rule the paper states "
            "(the side with the larger weight x distance tips; equal is balanced) over the "
            f"5^4 attribute grid, not read from the UCI file: {len(data)} rows, {distinct} "
            f"distinct attribute combinations, classes {stated}.  The UCI file is the same "
            "625 combinations, so the distribution is the same; only the row order (and so "
            "which rows a seed draws into a split) can differ.", ""]


#: (deviation, the paper, here, effect when it cannot be measured or is not yet measured)
SUMMARY = {
    "dimensions": ("Donut dimensions", "\"d range from 10 to 75\"", "d in {10, 25, 40, 55, 75}",
                   "not measurable (the paper's grid is not given); every claim is tested at "
                   "every d"),
    "noise": ("Donut noise", "N_d(0, sigma I): variance sigma", "standard deviation sigma",
              "not yet measured"),
    "tuning": ("Tuning criterion", "not stated", "error (simulations); weighted error "
               "(balance)", "not yet measured"),
    "ties": ("Ties of the criterion", "not stated", "smallest C, then the middle width",
             "not yet measured"),
    "svr": ("SVR scaling", "e1071 svm() (scales by default)", "no scaling",
            "not yet measured"),
    "data": ("Balance-scale data", "UCI file", "generated from the rule",
             "none on the distribution (the same 625 rows; counts and rule checked, 7a, 7r)"),
    "certificates": ("Certificates", "not discussed", "refits not certified optimal are kept",
                     "not yet measured"),
    "implementation": ("Implementation", "the authors' R code", "this package (Python)",
                       "timing claims (6.1d-e, 6.2y-z) are about this implementation"),
}


def deviation_lines(tables, deviations, ties=None):
    """The "Deviations from the paper" section: a summary table, then each measurement.

    ``tables``: the main studies' ok rows by name; ``deviations``: the deviation
    studies' ok rows by name (missing ones are reported as not yet measured);
    ``ties``: the tie-breaking rows or None.
    """
    effects, measured_effects = {key: row[3] for key, row in SUMMARY.items()}, {}
    donut, balance = tables.get("donut"), tables.get("balance")
    measured = [
        ("noise", "The donut's noise", _variance_lines, donut,
         deviations.get("donut_variance")),
        ("tuning", "Tuning criterion", _tuning_lines, donut,
         deviations.get("donut_weighted_tuning")),
        ("tuning", "Tuning criterion (balance scale)", _balance_tuning_lines, balance,
         deviations.get("balance_error_tuning")),
        ("ties", "Ties", _ties_lines, ties, balance),
        ("svr", "SVR's scaling", _svr_lines, balance, deviations.get("balance_svr_scaled")),
    ]
    details = []
    for key, title, build, first, second in measured:
        if first is None or second is None or first.empty or second.empty:
            details += [f"{title}: not yet measured.", ""]
            continue
        lines, effect = build(first, second)
        measured_effects.setdefault(key, []).append(effect)
        details += lines
    details += _data_lines()
    certified = []
    for name in ("nonlinear", "donut", "balance"):
        if tables.get(name) is not None:
            lines, effect = _certificate_lines(name, tables[name])
            details += lines
            certified.append(effect)
    if certified:
        measured_effects["certificates"] = certified
    effects.update({key: "; ".join(parts) for key, parts in measured_effects.items()})
    summary = pd.DataFrame([(*row[:3], effects[key]) for key, row in SUMMARY.items()],
                           columns=["deviation", "the paper", "here", "measured effect"])
    return ["## Deviations from the paper", "", summary.to_markdown(index=False), "",
            *details]
