"""The paper's claims (Sections 6.1, 6.2 and 7), tested cell by cell and pooled by replication.

Every sentence of the three sections that states a result is a :class:`Claim`: the
sentence quoted, the test that reads it, the metric and the cells (designs) it is
tested in.  In one replication every method sees the same data, and every design of a
study shares the replication's seed (common random numbers; the balance-scale splits
of one replication are drawn from one seed at every n), so a claim is measured by
**paired differences over replications**: per cell, ``D_r`` is the claim's difference in
replication r (e.g. ``error(A) - error(B)``), with mean ``Dbar`` and standard error
``sd(D) / sqrt(R)``.

Tests (``ClaimTest.kind``):

* ``"smaller"`` / ``"larger"`` (A is better / worse than B): *holds* when
  ``Dbar + 2 SE < 0`` (resp. ``Dbar - 2 SE > 0``), *does not hold* when the interval
  ``Dbar +- 2 SE`` lies on the other side of 0, *within noise* otherwise;
* ``"equivalent"`` (A and B are "comparable", "about the same", "about 25%"): two
  one-sided tests (TOST) at level 5% each with margin ``delta``; *holds* when
  ``-delta < Dbar - 1.645 SE`` and ``Dbar + 1.645 SE < delta`` (the 90% interval lies
  inside the margin), *does not hold* when the 90% interval lies outside it,
  *inconclusive* otherwise.  The margin at which the claim would start to hold,
  ``|Dbar| + 1.645 SE``, is reported beside it;
* ``"noninferior"`` (A is "among the best"): one-sided test at 5% that
  ``D < delta``;
* ``"all"`` (a fact of the data or the protocol): holds when every ``D_r <= 0``.

The strongest competitor B of a claim about the paper's methods is the method with the
best mean of the cell among the paper's methods (never the ordered logit, which the
paper did not run); the ordered logit is reported beside (``A - OLR``).  A **pooled**
verdict averages the cells' differences within each replication first,
``Dbar_r = mean over cells of D_r``, and takes the SE over replications, so the
dependence between cells of one replication is accounted for; the summary says when
a pooled verdict that holds hides a cell where the claim does not hold.  Equivalence
between methods is not pooled (differences of opposite sign cancel in a pooled mean,
so a pooled TOST could pass while every cell fails); it is counted over the cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nordicstats.datasets import load_balance_scale

__all__ = ["ClaimTest", "Claim", "verdict", "derived_metrics", "evaluate", "summarize_claim",
           "Z", "Z_TOST", "ERROR_MARGIN", "CLASS_MARGIN", "SHARE_MARGIN", "NOT_MEASURED"]

Z = 2.0  # standard errors of a directional verdict
Z_TOST = 1.645  # one-sided 5% quantile of each of the two one-sided tests
#: Equivalence margin of an error rate (plain or weighted): 2 percentage points.
ERROR_MARGIN = 0.02
#: Equivalence margin of a per-class accuracy (share of a class classified correctly).
CLASS_MARGIN = 0.05
#: Equivalence margin of a class's share of the test set: 0.25 percentage points.
SHARE_MARGIN = 0.0025
NOT_MEASURED = "not yet measured"
NOT_TESTED = "not tested"


@dataclass(frozen=True)
class ClaimTest:
    """How a mean difference and its SE are read: ``kind`` and, for margins, ``margin``."""

    kind: str  # "smaller", "larger", "equivalent", "noninferior", "all", "none"
    margin: float = 0.0

    def describe(self):
        """The test in a few words, for the report's tables."""
        if self.kind in ("smaller", "larger"):
            return f"D {'<' if self.kind == 'smaller' else '>'} 0 (2 SE)"
        if self.kind == "equivalent":
            return f"TOST, |D| < {self.margin:g}"
        if self.kind == "noninferior":
            return f"one-sided, D < {self.margin:g}"
        return "every D_r <= 0" if self.kind == "all" else ""


def verdict(mean, se, test):
    """The verdict of ``test`` on a mean difference ``mean`` with standard error ``se``.

    Examples
    --------
    >>> verdict(-0.03, 0.01, ClaimTest("smaller"))
    'holds'
    >>> verdict(0.001, 0.002, ClaimTest("equivalent", 0.02))
    'holds'
    """
    if test.kind == "none":
        return NOT_TESTED
    if test.kind == "all":  # ``mean`` is the largest D_r: every replication must pass
        return NOT_MEASURED if not np.isfinite(mean) else (
            "holds" if mean <= 0 else "does not hold")
    if not (np.isfinite(mean) and np.isfinite(se)):
        return NOT_MEASURED
    if test.kind in ("smaller", "larger"):
        signed = -mean if test.kind == "smaller" else mean
        if signed - Z * se > 0:
            return "holds"
        return "does not hold" if signed + Z * se < 0 else "within noise"
    low, high = mean - Z_TOST * se, mean + Z_TOST * se
    if test.kind == "noninferior":
        return "holds" if high < test.margin else (
            "does not hold" if low > test.margin else "inconclusive")
    if -test.margin < low and high < test.margin:
        return "holds"
    outside = low > test.margin or high < -test.margin
    return "does not hold" if outside else "inconclusive"


@dataclass(frozen=True)
class Claim:
    """One test of one sentence of the paper.

    Attributes
    ----------
    key : str
        Short id (``"6.1a"``) used in the per-cell table.
    section : str
    sentence : str
        The sentence, quoted from the paper.
    reading : str
        What is tested, in words (the comparison, the cells, the margin's meaning).
    metric : str
        Column of :func:`derived_metrics` the differences are taken of.
    test : ClaimTest
    cells : tuple of (label, tuple of design names)
        One design per cell, or two for a claim about a change between designs.
    difference : callable or None
        ``difference(frames) -> (Series of D_r by replication, comparison text,
        subject method or None)`` with ``frames`` one wide table (replications x
        methods) per design of the cell.  None: the sentence is not tested.
    pooled : bool
        Also give the verdict pooled over the cells by replication.
    beside : str or None
        A method reported beside the strongest competitor (``subject - beside``).
    rank_among : tuple of str
        Report the subject's rank (by the cell mean, 1 = smallest) among these methods.
    """

    key: str
    section: str
    sentence: str
    reading: str
    metric: str = "error"
    test: ClaimTest = field(default_factory=lambda: ClaimTest("none"))
    cells: tuple = ()
    difference: object = None
    pooled: bool = True
    beside: str | None = None
    rank_among: tuple = ()


def _shares(table):
    """Per row: the confusion counts (reps, true, pred) and their row shares."""
    counts = np.array(table["confusion"].tolist(), dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = counts / counts.sum(axis=2, keepdims=True)
    return counts, shares


def derived_metrics(table):
    """``table`` with the confusion-based metrics the claims use.

    ``P(k -> l)``: share of the test points of class k classified to class l;
    ``share of class k``: class k's share of the test set;
    ``P(ends -> middle)``: share of the test points of the first and last class
    classified to the middle class (three classes).
    """
    if table.empty or "confusion" not in table:
        return table
    levels = [str(v) for v in table["levels"].iloc[0]]
    counts, shares = _shares(table)
    columns = {}
    for i, true in enumerate(levels):
        columns[f"share of class {true}"] = counts[:, i].sum(axis=1) / counts.sum(axis=(1, 2))
        for j, pred in enumerate(levels):
            columns[f"P({true} -> {pred})"] = shares[:, i, j]
    if len(levels) == 3:
        ends = counts[:, [0, 2], :]
        columns["P(ends -> middle)"] = ends[:, :, 1].sum(axis=1) / ends.sum(axis=(1, 2))
    return table.assign(**columns)


def _mean_se(diff):
    diff = diff.dropna()
    if diff.size < 2:
        return (float(diff.mean()) if diff.size else np.nan), np.nan, int(diff.size)
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(diff.size)), int(diff.size)


def _cell_row(claim, label, frames):
    diff, comparison, subject = claim.difference(frames)
    mean, se, pairs = _mean_se(diff)
    if claim.test.kind == "all":
        mean, se = float(diff.max()) if diff.size else np.nan, 0.0
    row = {"id": claim.key, "cell": label, "metric": claim.metric, "comparison": comparison,
           "difference": mean, "se": se, "pairs": pairs, "test": claim.test.describe(),
           "verdict": verdict(mean, se, claim.test)}
    if claim.test.kind in ("equivalent", "noninferior") and np.isfinite(se):
        row["margin needed"] = abs(mean) + Z_TOST * se
    if claim.beside and subject and claim.beside in frames[0]:
        beside_mean, beside_se, _ = _mean_se(frames[0][subject] - frames[0][claim.beside])
        row[f"subject - {claim.beside}"] = f"{beside_mean:+.4f} ({beside_se:.4f})"
    if claim.rank_among and subject:
        means = frames[0].reindex(columns=list(claim.rank_among)).mean().dropna()
        row["rank"] = f"{int((means < means[subject]).sum()) + 1} of {means.size}"
    return row, diff


def evaluate(claim, wide):
    """Per-cell rows and the pooled row of ``claim``.

    ``wide`` maps a metric to its table indexed by ``(design, rep)`` with one column
    per method.  Returns ``(cells, pooled)``: a list of row dicts, and a row dict (or
    None when the claim is not pooled or has fewer than two measured cells).
    """
    if claim.difference is None:
        return [], None
    frame = wide.get(claim.metric)
    rows, diffs = [], {}
    designs = set() if frame is None else set(frame.index.get_level_values("design"))
    for label, names in claim.cells:
        if not set(names) <= designs:
            rows.append({"id": claim.key, "cell": label, "metric": claim.metric,
                         "test": claim.test.describe(), "verdict": NOT_MEASURED})
            continue
        row, diff = _cell_row(claim, label, [frame.xs(n, level="design") for n in names])
        rows.append(row)
        diffs[label] = diff
    if not claim.pooled or len(diffs) < 2:
        return rows, None
    per_rep = pd.DataFrame(diffs).dropna().mean(axis=1)
    mean, se, pairs = _mean_se(per_rep)
    return rows, {"difference": mean, "se": se, "pairs": pairs,
                  "verdict": verdict(mean, se, claim.test)}


def summarize_claim(claim, cells, pooled):
    """One row of the claims table: the sentence, the test and the verdicts."""
    counts = pd.Series([row["verdict"] for row in cells]).value_counts()
    failing = [row["cell"] for row in cells if row["verdict"] == "does not hold"]
    cell_text = ", ".join(f"{int(v)} {k}" for k, v in counts.items()) if cells else "-"
    row = {"id": claim.key, "section": claim.section, "sentence": f"\"{claim.sentence}\"",
           "tested as": claim.reading, "cells": cell_text}
    if claim.difference is None:
        return {**row, "pooled by replication": "-", "verdict": NOT_TESTED,
                "cells where it fails": "-"}
    if pooled is None:
        overall = (cells[0]["verdict"] if len(cells) == 1 else
                   "holds in every cell" if counts.get("holds", 0) == len(cells) else
                   f"holds in {int(counts.get('holds', 0))} of {len(cells)} cells")
        pooled_text = "-"
    else:
        overall = pooled["verdict"]
        pooled_text = f"{pooled['difference']:+.4f} ({pooled['se']:.4f}), {pooled['pairs']} reps"
        if overall == "holds" and failing:
            overall = "holds pooled; HIDES cells where it does not hold"
    return {**row, "pooled by replication": pooled_text, "verdict": overall,
            "cells where it fails": "; ".join(failing) or "none"}


# --- differences: frames (one wide table per design of the cell) -> (D_r, text, subject) ---

def _pick(frame, methods, best):
    means = frame.reindex(columns=list(methods)).mean().dropna()
    if means.empty:
        return None
    return means.idxmin() if best == "min" else means.idxmax()


def _empty(text):
    return pd.Series(dtype=float), text, None


def versus(a, candidates, best="min"):
    """``a`` minus the strongest of ``candidates`` in the cell (smallest or largest mean)."""
    def difference(frames):
        frame = frames[0]
        b = _pick(frame, [m for m in candidates if m != a], best)
        if b is None or a not in frame:
            return _empty(f"{a} - ?")
        return frame[a] - frame[b], f"{a} - {b}", a
    return difference


def best_versus_best(group, others, best="min"):
    """The best of ``group`` minus the best of ``others`` (each chosen by the cell mean)."""
    def difference(frames):
        frame = frames[0]
        a, b = _pick(frame, group, best), _pick(frame, others, best)
        if a is None or b is None:
            return _empty("? - ?")
        return frame[a] - frame[b], f"{a} - {b}", a
    return difference


def extreme_pair(methods):
    """The largest-mean minus the smallest-mean method of ``methods`` (for equivalence)."""
    def difference(frames):
        frame = frames[0]
        high, low = _pick(frame, methods, "max"), _pick(frame, methods, "min")
        if high is None:
            return _empty("? - ?")
        return frame[high] - frame[low], f"{high} - {low}", None
    return difference


def farthest(a, candidates):
    """``a`` minus the candidate whose cell mean is farthest from ``a``'s (for equivalence)."""
    def difference(frames):
        frame = frames[0]
        present = [m for m in candidates if m in frame]
        if a not in frame or not present:
            return _empty(f"{a} - ?")
        b = (frame[present].mean() - frame[a].mean()).abs().idxmax()
        return frame[a] - frame[b], f"{a} - {b}", a
    return difference


def against(a, value):
    """``a``'s metric minus a constant (a share or a threshold the paper states)."""
    def difference(frames):
        frame = frames[0]
        if a not in frame:
            return _empty(f"{a} - {value:g}")
        return frame[a] - value, f"{a} - {value:g}", a
    return difference


def change(inner):
    """``inner`` in the cell's second design minus ``inner`` in its first (paired by rep)."""
    def difference(frames):
        before, text_before, subject = inner(frames[:1])
        after, text_after, _ = inner(frames[1:])
        return after - before, f"[{text_after}] - [{text_before}]", subject
    return difference


# --- cells ---

def grid_cells(table, sigmas=None, dims=None):
    """Cells ``(label, (design,))`` of a simulation study, by sigma then d."""
    designs = table[["design", "sigma", "d"]].drop_duplicates().sort_values(["sigma", "d"])
    keep = [(sigmas is None or any(np.isclose(s, sigmas))) and (dims is None or d in dims)
            for s, d in zip(designs["sigma"], designs["d"], strict=True)]
    return tuple((f"sigma={s:g}, d={d}", (name,)) for name, s, d
                 in designs[keep].itertuples(index=False))


def _design(table, sigma, d):
    match = table[np.isclose(table["sigma"], sigma) & (table["d"] == d)]["design"]
    return None if match.empty else match.iloc[0]


def sigma_change_cells(table, low, high):
    """Cells ``(label, (design at sigma=low, design at sigma=high))``, one per d."""
    cells = []
    for d in sorted(table["d"].unique()):
        pair = (_design(table, low, d), _design(table, high, d))
        if None not in pair:
            cells.append((f"d={d}: sigma {high:g} vs {low:g}", pair))
    return tuple(cells)


def dimension_change_cell(table, sigma):
    """The cell ``(label, (design at the smallest d, design at the largest d))`` at sigma."""
    dims = sorted(table.loc[np.isclose(table["sigma"], sigma), "d"].unique())
    if len(dims) < 2:
        return ()
    pair = (_design(table, sigma, dims[0]), _design(table, sigma, dims[-1]))
    return ((f"sigma={sigma:g}: d {dims[-1]} vs {dims[0]}", pair),)


def size_cells(table):
    """Cells ``(label, (design,))`` of the balance scale, by n."""
    designs = table[["design", "n"]].drop_duplicates().sort_values("n")
    return tuple((name, (name,)) for name in designs["design"])


def _ends(dims, k=2):
    """The ``k`` smallest and the ``k`` largest of ``dims``."""
    dims = sorted(int(d) for d in dims)
    return dims[:k], dims[-k:]


def _join(values):
    return ", ".join(str(v) for v in values)


# --- the claims of each section ---

NORDIC = ("NORDIC-0", "NORDIC-1", "NORDIC-2")
NON_NORDIC = ("BSVM", "DR", "CK")
SECTION6 = (*NORDIC, *NON_NORDIC)  # the paper's methods in Section 6
SECTION7 = (*SECTION6, "SVR")  # the paper's methods in Section 7 (the ordered logit is not)


def _cost_claims(keys, section, quote, cells, dr_seconds="CPU seconds"):
    """The two claims on computing cost of a Section 6 study: DR the costliest method and
    CK the cheapest, in every cell (keys: the DR claim's, then the CK claim's)."""
    dr_key, ck_key = keys
    return [
        Claim(dr_key, section, quote, f"DR takes more {dr_seconds} than the costliest other "
              "method, every cell", "cpu_time", ClaimTest("larger"), cells,
              versus("DR", SECTION6, best="max")),
        Claim(ck_key, section, quote, "CK takes fewer CPU seconds than the cheapest other "
              "method, every cell", "cpu_time", ClaimTest("smaller"), cells,
              versus("CK", SECTION6)),
    ]


def nonlinear_claims(table):
    """Section 6.1 (and the caption of its figure)."""
    small, large = _ends(table["d"].unique())
    cells_small, cells_large = grid_cells(table, dims=small), grid_cells(table, dims=large)
    every, growth = grid_cells(table), sigma_change_cells(table, 0.5, 1.5)
    first = ("The NORDIC-0 and NORDIC-1 are the better classifiers in terms of classification "
             "performance when the dimensions are small.")
    cost = "The DR method is the most computational costly and the CK method is the most " \
           "efficient one."
    return [
        *[Claim(f"6.1{key}", "6.1", first, f"{m} has a smaller error than the best of NORDIC-2, "
                f"BSVM, DR, CK at the two smallest d ({_join(small)})", "error",
                ClaimTest("smaller"), cells_small, versus(m, ("NORDIC-2", *NON_NORDIC)))
          for key, m in (("a", "NORDIC-0"), ("b", "NORDIC-1"))],
        Claim("6.1c", "6.1", "For higher dimensions, the NORDIC-2 method is better than the "
              "other methods.", f"NORDIC-2 has a smaller error than the best other method at "
              f"the two largest d ({_join(large)})", "error", ClaimTest("smaller"),
              cells_large, versus("NORDIC-2", SECTION6)),
        *_cost_claims(("6.1d", "6.1e"), "6.1", cost, every,
                      dr_seconds="CPU seconds (tuning + refit + test)"),
        Claim("6.1f", "6.1", "The reason that NORDIC works here is probably due to the "
              "perturbation that is added to this data set.", "the best NORDIC's error minus "
              "the best non-NORDIC's falls (NORDIC gains) from sigma = 0.5 to 1.5, per d",
              "error", ClaimTest("smaller"), growth, change(best_versus_best(NORDIC, NON_NORDIC))),
        Claim("6.1g", "6.1", "A NORDIC method, with the help of the noncrossing constraints, can "
              "borrow strength from different classes and become more robust to perturbation.",
              "the best NORDIC's error minus BSVM's (the same binary SVMs without the "
              "constraints) falls from sigma = 0.5 to 1.5, per d", "error", ClaimTest("smaller"),
              growth, change(best_versus_best(NORDIC, ("BSVM",)))),
        Claim("6.1h", "6.1 (figure caption)", "In general, a NORDIC method is better than a "
              "non-NORDIC method for this example.", "the best NORDIC has a smaller error than "
              "the best of BSVM, DR, CK, every cell", "error", ClaimTest("smaller"), every,
              best_versus_best(NORDIC, NON_NORDIC)),
        Claim("6.1i", "6.1 (protocol)", "We generate 100 data points in the training set, 100 "
              "in the tuning set and 10000 in the test set.", "every row's training, tuning "
              "and test sizes are 100, 100, 10,000 (summed absolute gap <= 0)", "protocol gap",
              ClaimTest("all"), every, against("BSVM", 0.0), pooled=False),
    ]


def donut_claims(table):
    """Section 6.2 (and the caption of its error figure)."""
    every = grid_cells(table)
    at04 = grid_cells(table, sigmas=[0.4])
    low = grid_cells(table, sigmas=[0.2, 0.4])
    _, large = _ends(table["d"].unique())
    counts = "On average, there are only 6.25% Class 2 points and 18.75% Class 3 points."
    others = ("NORDIC-0", "NORDIC-1", *NON_NORDIC)
    weighted = ("It is obvious that expect for NORDIC-2, which is the best in this case, all "
                "other methods are more or less the same in terms of the weighted error.")
    comparably = ("They perform comparably to the other methods (they may have a very small "
                  "advantage over CK and DR methods when the perturbation is small, for "
                  "example, when sigma = 0.2 and 0.4.)")
    class1 = ("There are, on average, 7496.2 observations from Class 1, and almost all the "
              "methods classify them correctly.")
    class2 = "Class 2 (with only 626.5 observations) is clearly a very difficult class."
    class3 = ("For Class 3, NORDIC-2 shows improved accuracy, especially with much fewer "
              "misclassifications into Class 1 (shown in the upper-left plot).")
    timing = ("The computational time results are similar to what we have seen for the last "
              "example and are not reported here.")
    share = ClaimTest("equivalent", SHARE_MARGIN)
    return [
        Claim("6.2a", "6.2", "It appears that many times the DR method is the best.",
              "DR has a smaller error than the best other method; counted over the cells",
              "error", ClaimTest("smaller"), every, versus("DR", SECTION6), pooled=False),
        *[Claim(f"6.2{key}", "6.2", counts, f"class {k}'s share of the test set equals "
                f"{value:.2%} within {SHARE_MARGIN:.2%} (TOST)", f"share of class {k}", share,
                every, against("NORDIC-2", value))
          for key, k, value in (("b", 2, 0.0625), ("c", 3, 0.1875))],
        Claim("6.2d", "6.2 (figure caption)", "The NORDIC-2 is the best classifiers in terms of "
              "classification performance.", "NORDIC-2 has a smaller error than the best "
              "other method", "error", ClaimTest("smaller"), every, versus("NORDIC-2", SECTION6)),
        Claim("6.2e", "6.2", weighted, "NORDIC-2 has a smaller weighted error than the best "
              "other method", "weighted_error", ClaimTest("smaller"), every,
              versus("NORDIC-2", SECTION6)),
        Claim("6.2f", "6.2", weighted, f"the five others are equivalent within "
              f"{ERROR_MARGIN:g} (TOST on the worst minus the best of them)", "weighted_error",
              ClaimTest("equivalent", ERROR_MARGIN), every, extreme_pair(others), pooled=False),
        Claim("6.2g", "6.2", "Interestingly, the NORDIC-0 and NORDIC-1 methods do not perform "
              "as well as their sibling NORDIC-2.", "NORDIC-2 has a smaller weighted error than "
              "the better of NORDIC-0 and NORDIC-1", "weighted_error", ClaimTest("smaller"), every,
              versus("NORDIC-2", ("NORDIC-0", "NORDIC-1"))),
        *[Claim(f"6.2{key}", "6.2", comparably, f"{m} is equivalent within {ERROR_MARGIN:g} "
                f"to the farthest of BSVM, DR, CK (TOST), weighted error", "weighted_error",
                ClaimTest("equivalent", ERROR_MARGIN), every, farthest(m, NON_NORDIC), pooled=False)
          for key, m in (("h", "NORDIC-0"), ("i", "NORDIC-1"))],
        *[Claim(f"6.2{key}", "6.2", comparably, f"{m} has a smaller weighted error than the "
                f"better of CK and DR at sigma = 0.2 and 0.4", "weighted_error",
                ClaimTest("smaller"), low, versus(m, ("CK", "DR")))
          for key, m in (("j", "NORDIC-0"), ("k", "NORDIC-1"))],
        Claim("6.2l", "6.2", "Recall that NORDIC-0 and NORDIC-1 imposes stronger constraints "
              "which aim for the monotonicity of the discriminant function f_k(x) itself, as "
              "opposed to its sign.", "a fact about the methods (Sections 3-4), not a result"),
        Claim("6.2m", "6.2", "In contrast, the constraint from NORDIC-2 is much lighter, which "
              "may have left enough \"degrees of freedom\" to optimize the generalization "
              "performance.", "an explanation; the rows hold no measure of degrees of freedom"),
        Claim("6.2n", "6.2", "Hence, it is perceivable that a Class 2 observation is very "
              "difficult to be correctly classified.", "tested with 6.2r (class 2 accuracy)"),
        Claim("6.2n2", "6.2", "Note that Class 2 is sandwiched by Class 1 and Class 3 from both "
              "outside and inside, and the high density region for Class 2 is very thin due to "
              "the construction.", "a property of the design (the generator draws it), not a "
              "result"),
        Claim("6.2n3", "6.2", "However, recall that in this data set the three classes are "
              "highly imbalanced in terms of their sample size.", "tested with 6.2b, 6.2c and "
              "6.2p (the classes' shares of the test set)"),
        Claim("6.2o", "6.2", "The noncrossing constraints here may be of some help because the "
              "boundary between Classes 1 and 2 may boost the estimation of the boundary "
              "between Classes 2 and 3, and vice versa.", "the best NORDIC has a smaller "
              "weighted error than BSVM (the same SVMs without the constraints)",
              "weighted_error", ClaimTest("smaller"), every, best_versus_best(NORDIC, ("BSVM",))),
        Claim("6.2p", "6.2", class1, f"class 1's share of the test set equals 74.96% within "
              f"{SHARE_MARGIN:.2%} (TOST)", "share of class 1", share, every,
              against("NORDIC-2", 0.74962)),
        Claim("6.2q", "6.2", class1, "the weakest method classifies more than 95% of class 1 "
              "correctly, sigma = 0.4", "P(1 -> 1)", ClaimTest("larger"), at04,
              versus_threshold_weakest(SECTION6, 0.95)),
        Claim("6.2r", "6.2", class2, "even the best method classifies less than half of class "
              "2 correctly, sigma = 0.4", "P(2 -> 2)", ClaimTest("smaller"), at04,
              versus_threshold_best(SECTION6, 0.5)),
        Claim("6.2s", "6.2", class2, f"class 2's share of the test set equals 6.265% within "
              f"{SHARE_MARGIN:.2%} (TOST)", "share of class 2", share, every,
              against("NORDIC-2", 0.06265)),
        Claim("6.2t", "6.2", "Even our NORDIC-2 has a poor classification accuracy of 25%.",
              f"NORDIC-2's class 2 accuracy equals 25% within {CLASS_MARGIN:g} (TOST), "
              "sigma = 0.4", "P(2 -> 2)", ClaimTest("equivalent", CLASS_MARGIN), at04,
              against("NORDIC-2", 0.25)),
        Claim("6.2u", "6.2", "That said, NORDIC-2 shows more advantages for higher dimensional "
              "cases.", "NORDIC-2's class 2 accuracy exceeds the best other method's, sigma = "
              f"0.4, the two largest d ({_join(large)})", "P(2 -> 2)", ClaimTest("larger"),
              grid_cells(table, sigmas=[0.4], dims=large), versus("NORDIC-2", SECTION6, "max")),
        Claim("6.2v", "6.2", "That said, NORDIC-2 shows more advantages for higher dimensional "
              "cases.", "NORDIC-2's class 2 advantage over the best other method grows from "
              "the smallest to the largest d, sigma = 0.4", "P(2 -> 2)", ClaimTest("larger"),
              dimension_change_cell(table, 0.4), change(versus("NORDIC-2", SECTION6, "max"))),
        Claim("6.2w", "6.2", class3, "NORDIC-2's class 3 accuracy exceeds the best other "
              "method's, sigma = 0.4", "P(3 -> 3)", ClaimTest("larger"), at04,
              versus("NORDIC-2", SECTION6, "max")),
        Claim("6.2x", "6.2", class3, "NORDIC-2 classifies a smaller share of class 3 into "
              "class 1 than the best other method, sigma = 0.4", "P(3 -> 1)", ClaimTest("smaller"),
              at04, versus("NORDIC-2", SECTION6)),
        *_cost_claims(("6.2y", "6.2z"), "6.2", timing, every),
    ]


def versus_threshold_weakest(methods, value):
    """The weakest (smallest-mean) of ``methods`` minus a threshold."""
    def difference(frames):
        weakest = _pick(frames[0], methods, "min")
        return against(weakest, value)(frames) if weakest else _empty(f"? - {value:g}")
    return difference


def versus_threshold_best(methods, value):
    """The best (largest-mean) of ``methods`` minus a threshold."""
    def difference(frames):
        best = _pick(frames[0], methods, "max")
        return against(best, value)(frames) if best else _empty(f"? - {value:g}")
    return difference


#: The balance-scale class counts the paper states (Section 7).
BALANCE_COUNTS = {"L": 288, "B": 49, "R": 288}


def proportional_deviation(table):
    """Per row: the largest |test count - proportional count| over the classes.

    Proportional counts are ``n_test * N_k / N`` with the paper's class counts N_k; a
    stratified split is as close to them as integers allow when the deviation is < 1.
    """
    counts, _ = _shares(table)
    test = counts.sum(axis=2)  # (rows, classes): test points of each true class
    levels = [str(v) for v in table["levels"].iloc[0]]
    totals = np.array([BALANCE_COUNTS[level] for level in levels], dtype=float)
    expected = test.sum(axis=1, keepdims=True) * totals / totals.sum()
    return np.abs(test - expected).max(axis=1)


def data_counts_difference(frames):
    """Largest |class count of the stored data set - the paper's count| (frames unused)."""
    counts = load_balance_scale()["balance"].astype(str).value_counts()
    gap = max(abs(int(counts.get(k, 0)) - v) for k, v in BALANCE_COUNTS.items())
    return pd.Series([float(gap)]), "data - paper (largest class gap)", None


def rule_violations(frames):
    """Rows of the stored data set whose class is not the paper's rule (frames unused).

    The rule: L when left weight x left distance exceeds right weight x right distance,
    R when it is smaller, B when they are equal.
    """
    data = load_balance_scale()
    torque = (data["left_weight"] * data["left_distance"]
              - data["right_weight"] * data["right_distance"])
    rule = np.where(torque > 0, "L", np.where(torque < 0, "R", "B"))
    wrong = int((data["balance"].astype(str).to_numpy() != rule).sum())
    return pd.Series([float(wrong)]), "rows whose class breaks the rule", None


def balance_claims(table):
    """Section 7."""
    cells = size_cells(table)
    others = {m: tuple(x for x in SECTION7 if x != m) for m in SECTION7}
    eight = (*SECTION7, "OLR")
    among = "All three NORDIC methods are among the best, with NORDIC-2 having a significant " \
            "advantage."
    comparable = "The other two NORDIC methods are comparable to the DR method especially " \
                 "for small sample cases."
    svr_b = ("It can be seen that the poor performance of the SVR method is probably because "
             "it classifies much more instances to Class B, and this may be due to the "
             "arbitrary choice of the cut-off values 1.5 and 2.5.")
    same = "Note that for Classes L and R, all methods (except for SVR) perform more or less " \
           "the same."
    return [
        Claim("7a", "7", "There are 625 instances in the data, with 288 tip to the left (L), 49 "
              "balanced (B), and 288 tip to the right (R).", "the stored data set's class "
              "counts equal the paper's", "weighted_error", ClaimTest("all"),
              (("data set", cells[0][1]),) if cells else (), data_counts_difference,
              pooled=False),
        Claim("7b", "7", "The proportions of the three classes are preserved when the "
              "partitioning is conducted.", "every test set's class counts are within 1 of "
              "proportional (largest |count - proportional| - 1 <= 0 in every split)",
              "proportional deviation", ClaimTest("all"), cells, against("BSVM", 1.0),
              pooled=False),
        Claim("7c", "7", "A naive coding of 1, 2 and 3 for these three classes followed by a "
              "regression method will prove to be suboptimal.", "SVR has a larger weighted "
              "error than the best of the paper's ordinal methods", "weighted_error",
              ClaimTest("larger"), cells, versus("SVR", SECTION6)),
        *[Claim(f"7{key}", "7", among, f"{m}'s weighted error is within {ERROR_MARGIN:g} of "
                "the best other paper method (non-inferiority, one-sided 5%); rank among the "
                "eight beside", "weighted_error", ClaimTest("noninferior", ERROR_MARGIN), cells,
                versus(m, others[m]), beside="OLR", rank_among=eight)
          for key, m in (("d", "NORDIC-0"), ("e", "NORDIC-1"), ("f", "NORDIC-2"))],
        Claim("7g", "7", among, "NORDIC-2 has a smaller weighted error than the best other "
              "paper method (the ordered logit beside)", "weighted_error", ClaimTest("smaller"),
              cells, versus("NORDIC-2", others["NORDIC-2"]), beside="OLR"),
        *[Claim(f"7{key}", "7", comparable, f"{m} is equivalent to DR within {ERROR_MARGIN:g} "
                "(TOST), weighted error", "weighted_error", ClaimTest("equivalent", ERROR_MARGIN),
                cells, versus(m, ("DR",)), pooled=False)
          for key, m in (("h", "NORDIC-0"), ("i", "NORDIC-1"))],
        Claim("7j", "7", "The SVR is the worst classifier in this experiment.", "SVR has a "
              "larger weighted error than the worst other paper method (the ordered logit "
              "beside)", "weighted_error", ClaimTest("larger"), cells,
              versus("SVR", SECTION6, "max"), beside="OLR"),
        Claim("7k", "7", svr_b, "SVR classifies a larger share of the L and R test points to B "
              "than any other paper method", "P(ends -> middle)", ClaimTest("larger"), cells,
              versus("SVR", SECTION6, "max"), beside="OLR"),
        Claim("7l", "7", svr_b, "the cut-off part: not tested (it would need an SVR with tuned "
              "cut-offs); SVR with e1071's scaling is measured under Deviations"),
        Claim("7m", "7", "However, one may have no better way to choose the cut-offs except "
              "through another layer of tuning parameter selection.", "an opinion, not a "
              "result"),
        Claim("7n", "7", "On the other hand, NORDIC-2 stands out as the best classifier due "
              "to its best performance on Class B among the other methods (except for SVR.)",
              "NORDIC-2 classifies a larger share of class B correctly than the best other "
              "paper method except SVR (the ordered logit beside)", "P(B -> B)",
              ClaimTest("larger"), cells, versus("NORDIC-2", SECTION6, "max"), beside="OLR"),
        *[Claim(f"7{key}", "7", same, f"the class {k} accuracies of the six paper methods "
                f"other than SVR are equivalent within {CLASS_MARGIN:g} (TOST on the best "
                "minus the worst)", f"P({k} -> {k})", ClaimTest("equivalent", CLASS_MARGIN), cells,
                extreme_pair(SECTION6), pooled=False)
          for key, k in (("o", "L"), ("p", "R"))],
        Claim("7r", "7 (data)", "The correct way to find the class is the greater of "
              "(left-distance * left-weight) and (right-distance * right-weight). If they are "
              "equal, it is balanced.", "no row of the stored data set breaks the rule",
              "weighted_error", ClaimTest("all"), (("data set", cells[0][1]),) if cells else (),
              rule_violations, pooled=False),
        Claim("7q", "7 (protocol)", "We randomly select n points from the data set for "
              "training, n for tuning, and the remaining (625-2n) are for testing.", "every "
              "row's training, tuning and test sizes are n, n, 625 - 2n (summed absolute gap "
              "<= 0)", "protocol gap", ClaimTest("all"), cells, against("BSVM", 0.0),
              pooled=False),
    ]


CLAIMS = {"nonlinear": nonlinear_claims, "donut": donut_claims, "balance": balance_claims}


def protocol_gap(kind, table):
    """Per row: summed |size - the paper's size| of the training, tuning and test sets.

    The paper's sizes: 100, 100 and 10,000 (Section 6); n, n and 625 - 2n (Section 7).
    """
    if kind == "balance":
        n = table["n"].to_numpy()
        sizes = (n, n, 625 - 2 * n)
    else:
        sizes = (100, 100, 10000)
    columns = ("n_train", "n_tune", "n_test")
    if not set(columns) <= set(table):
        return np.full(len(table), np.nan)
    return sum(np.abs(table[c].to_numpy() - s) for c, s in zip(columns, sizes, strict=True))


def study_claims(kind, table):
    """The claims table and the per-cell table of a study (``kind``) from its ok rows.

    Returns
    -------
    summary : pandas.DataFrame
        One row per claim test (:func:`summarize_claim`).
    cells : pandas.DataFrame
        One row per claim test and cell (the paired difference, its SE, the verdict).
    """
    table = derived_metrics(table).assign(**{"protocol gap": protocol_gap(kind, table)})
    if kind == "balance":
        table = table.assign(**{"proportional deviation": proportional_deviation(table)})
    claims = CLAIMS[kind](table)
    wide = {metric: table.pivot_table(index=["design", "rep"], columns="method", values=metric)
            for metric in {c.metric for c in claims if c.difference is not None}
            if metric in table}
    summary, cells = [], []
    for claim in claims:
        rows, pooled = evaluate(claim, wide)
        cells += rows
        summary.append(summarize_claim(claim, rows, pooled))
    return pd.DataFrame(summary), pd.DataFrame(cells)
