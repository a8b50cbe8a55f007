"""Summary tables of NORDIC and its competitors, built on statsmodels' ``Summary``.

:func:`make_summary` is the one builder: a two-column header, then the tables, then
the notes.  :func:`build_summary` collects the pieces of a NORDIC fit for it; the
competitors' ``CompetitorResults.summary`` collect theirs.
"""

from __future__ import annotations

import warnings

import numpy as np
from statsmodels.iolib.summary import Summary, summary_params
from statsmodels.iolib.table import SimpleTable
from statsmodels.iolib.tableformatting import fmt_2cols, fmt_params

from nordicstats.exceptions import InferenceWarning
from nordicstats.solvers.problem import METHOD_NAMES
from nordicstats.weighting import describe_weighting

__all__ = ["make_summary", "build_summary", "sources_text", "NORDICSummary"]


class NORDICSummary(Summary):
    """statsmodels ``Summary`` whose LaTeX output keeps each table separate.

    ``Summary.as_latex`` merges all tables into one tabular, which needs equal
    column counts; a NORDIC summary has tables of different widths (header,
    classes, boundaries, one coefficient block per boundary), so each table is
    rendered with its own ``as_latex_tabular`` as statsmodels recommends.
    """

    def as_latex(self):
        """All tables as consecutive LaTeX tabulars, then the notes."""
        latex = "\n\n".join(table.as_latex_tabular() for table in self.tables)
        if self.extra_txt is not None:
            latex += "\n\n" + self.extra_txt.replace("\n", " \\newline\n ")
        return latex


def make_summary(title, left, right, tables=(), notes=(), summary_class=Summary):
    """Assemble a statsmodels ``Summary``: a two-column header, tables, then notes.

    Parameters
    ----------
    title : str
        Title above the header.
    left, right : list of (str, object)
        Header entries (label, value); the shorter column is padded with blanks.
    tables : sequence of pandas.DataFrame or SimpleTable
        A DataFrame becomes a numeric table (row labels as stubs, numbers by
        :func:`format_cell`); a ``SimpleTable`` is added as it is.
    notes : sequence of str
        Lines printed below the tables.
    summary_class : type, default=statsmodels ``Summary``
        The summary to fill (:class:`NORDICSummary` keeps LaTeX tables apart).

    Returns
    -------
    statsmodels.iolib.summary.Summary

    Examples
    --------
    >>> import pandas as pd
    >>> summary = make_summary("Fit", [("Method:", "SVR")], [("n:", 5)],
    ...                        [pd.DataFrame({"coef": [0.5]}, index=["x1"])], ["A note."])
    >>> print(summary)
                                        Fit
    ===========================================================================
    Method:                           SVR n:                                  5
    =====================
                     coef
    ---------------------
    x1             0.5000
    =====================
    <BLANKLINE>
    A note.
    """
    rows = max(len(left), len(right))
    left = left + [("", "")] * (rows - len(left))
    right = right + [("", "")] * (rows - len(right))
    header = SimpleTable([[str(v)] for _, v in left], stubs=[k for k, _ in left], title=title,
                         txt_fmt=fmt_2cols)
    header.extend_right(SimpleTable([[str(v)] for _, v in right], stubs=[k for k, _ in right],
                                    txt_fmt=fmt_2cols))
    summary = summary_class()
    summary.tables.append(header)
    for table in tables:
        summary.tables.append(table if isinstance(table, SimpleTable) else _numeric_table(table))
    if notes:
        summary.add_extra_txt(list(notes))
    return summary


def _numeric_table(frame):
    cells = [[format_cell(v) for v in row] for row in frame.to_numpy()]
    return SimpleTable(cells, headers=[str(c) for c in frame.columns],
                       stubs=[str(i) for i in frame.index], txt_fmt=fmt_params)


def format_cell(value):
    """A table cell: floats with 4 decimals (4 significant digits from 1e4 on), else ``str``."""
    if isinstance(value, (float, np.floating)):
        return f"{value:.4f}" if abs(value) < 1e4 else f"{value:.4g}"
    return str(value)


def format_gap(value):
    """A relative gap: 3 significant digits, ``"n/a"`` when missing or not finite."""
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.3g}"


_ORDER_SOURCE = {
    "categorical": "ordered categorical",
    "explicit": "order= argument",
    "sorted": "sorted labels (pass order= to change)",
}


def build_summary(results, alpha=0.05):
    """Header, classes, boundaries and solver diagnostics of a :class:`NORDICResults`."""
    model, solver_result = results.model, results.solver_result
    left = [
        ("Dep. Variable:", model.endog_names),
        ("Model:", "NORDIC"),
        ("Method:", METHOD_NAMES[model.method]),
        ("Kernel:", model.kernel.describe()),
        ("C:", f"{model.C:.4g}"),
        ("Date:", results.fitted_at.strftime("%a, %d %b %Y")),
        ("Time:", results.fitted_at.strftime("%H:%M:%S")),
    ]
    right = [
        ("No. Observations:", str(results.nobs)),
        ("No. Classes:", str(len(model.levels))),
        ("Level order:", _ORDER_SOURCE[model.response.order_source]),
        ("Solver:", solver_result.solver),
        ("Status:", solver_result.status),
        ("Objective:", f"{solver_result.objective:.6g}"),
        ("Solver time (s):", f"{solver_result.time:.3g}"),
    ]
    if model.method == "nordic1":
        left.append(("Noncrossing form:", model.noncrossing))
    if model.method == "nordic2":
        left.append(("Penalty:", model.penalty))
        right.append(("MIP gap:", format_gap(solver_result.gap)))
    if getattr(model, "n_dropped", 0):
        left.append(("Rows dropped (NA):", str(model.n_dropped)))
    if getattr(model, "n_zero_weight", 0):
        left.append(("Rows of weight 0:", str(model.n_zero_weight)))
    weighting, _ = _weighting(model)
    if weighting:
        left.append(("Weighting:", weighting))
    right.extend(header_rows(results))  # inference: Cov. Type, Bandwidth
    if len(left) != len(right):
        short = left if len(left) < len(right) else right
        short.extend([(" ", " ")] * abs(len(left) - len(right)))
    # statsmodels' ``summary_top`` layout: right-hand labels indented by two, 21 wide
    right = [(f"{'  ' + label:<21}", value) for label, value in right]
    tables = [_class_table(results), _boundary_table(results),
              *_coefficient_tables(results, alpha)]
    return make_summary("NORDIC Ordinal Classification", left, right, tables, _notes(results),
                        summary_class=NORDICSummary)


def _class_table(results):
    """Rows per level and their share; with case weights also the weighted count, and the
    share is the weighted one (the weights are frequencies)."""
    model = results.model
    counts = model.response.counts
    weights = getattr(model, "weights", None)
    if weights is None:
        data = [[str(level), str(int(c)), f"{c / counts.sum():.3f}"]
                for level, c in zip(results.levels, counts, strict=True)]
        return SimpleTable(data, headers=["level", "count", "share"],
                           title="Classes (lowest first)")
    totals = np.bincount(model.response.codes, weights=weights, minlength=counts.size)
    data = [[str(level), str(int(c)), f"{t:.6g}", f"{t / totals.sum():.3f}"]
            for level, c, t in zip(results.levels, counts, totals, strict=True)]
    return SimpleTable(data, headers=["level", "rows", "weighted", "share"],
                       title="Classes (lowest first; share of the weighted total)")


def _boundary_table(results):
    solver_result = results.solver_result
    rows = []
    for k, name in enumerate(results.boundary_names):
        rows.append([name, f"{solver_result.intercept[k]:.4f}", str(int(results.n_support.iloc[k]))
                     if np.isfinite(results.n_support.iloc[k]) else "n/a"])
    return SimpleTable(rows, headers=["boundary", "intercept", "support vectors"],
                       title="Boundaries")


def _coefficient_tables(results, alpha):
    """Per-boundary coefficient blocks for linear fits (with inference when available)."""
    if not results.model.kernel.is_linear:
        return []
    if results.covariance is not None:  # inference: one block per boundary
        return coefficient_tables(results, alpha)
    params = results.params
    rows = [[term] + [f"{v:.4f}" for v in params.loc[term]] for term in params.index]
    return [SimpleTable(rows, headers=["term", *params.columns],
                        title="Linear boundary coefficients (b_k, w_k)")]


def _notes(results):
    solver_result = results.solver_result
    price = results.price_of_noncrossing
    certificate = getattr(solver_result, "certificate", None)
    primal = solver_result.max_violation if certificate is None else certificate.primal_violation
    lines = [
        f"Training crossing rate: {results.crossing_rate():.4f}; largest noncrossing-constraint "
        f"violation {primal:.2g}.",
    ]
    active = solver_result.info.get("active_noncrossing")
    if active is not None and results.model.method != "bsvm":
        lines.append(f"Active noncrossing constraints at the solution: {active}.")
    if price:
        increase = price["objective_increase"]
        # differences below the solvers' 1e-8 relative accuracy are reported as zero
        negligible = abs(increase) <= 1e-8 * abs(solver_result.objective)
        shown = "+0 within solver tolerance" if negligible else f"+{increase:.4g}"
        lines.append(
            f"Price of noncrossing: objective {solver_result.objective:.6g} vs BSVM "
            f"{price['bsvm_objective']:.6g} ({shown}); the separate "
            f"SVMs cross on {100 * price['bsvm_crossing_rate']:.1f}% of training rows."
        )
    lines.append(_certificate_line(solver_result))
    if solver_result.status != "optimal":
        lines.append(f"WARNING: the solver stopped with status '{solver_result.status}' "
                     f"({solver_result.message}); the relative gap is "
                     f"{format_gap(solver_result.gap)}.")
    if len(results.levels) == 2:
        lines.append("K = 2: a single boundary, i.e. an ordinary SVM; noncrossing is void.")
    note = _weighting(results.model)[1]
    if note:
        lines.append(note)
    lines.extend(summary_notes(results))  # inference
    if results.model.kernel.is_linear and results.covariance is None:
        lines.append("No standard errors: fitted with cov_type='none'; fit(cov_type='auto') "
                     "or get_robustcov_results('auto') computes them.")
    return lines


def _certificate_line(solver_result):
    """The optimality certificate (gap and largest violation) of any solver's answer."""
    certificate = getattr(solver_result, "certificate", None)
    if certificate is None:  # results pickled before certificates existed
        return (f"Certificate: relative gap {format_gap(solver_result.gap)}, largest violation "
                f"{solver_result.max_violation:.2g}.")
    return f"Certificate: {certificate.describe()}."


def _weighting(model):
    return describe_weighting(getattr(model, "weights", None), getattr(model, "cost", None),
                              model.levels)


# --- inference pieces of the summary ---------------------------------------------------------
def coefficient_tables(results, alpha=0.05):
    """One statsmodels parameter table per boundary (coef, std err, z, P>|z|, interval)."""
    terms = list(results.params.index)
    ci = results.conf_int(alpha).to_numpy()
    tables = []
    for k, name in enumerate(results.boundary_names):
        rows = slice(k * len(terms), (k + 1) * len(terms))
        cols = (results.params.iloc[:, k], results.bse.iloc[:, k], results.tvalues.iloc[:, k],
                results.pvalues.iloc[:, k])
        parts = (results, *[c.to_numpy() for c in cols], ci[rows])
        title = f"Boundary {name}{_source_title(results, k)}"
        tables.append(summary_params(parts, yname=f"boundary {name}", xname=terms, alpha=alpha,
                                     use_t=False, title=title))
    return tables


def _source_title(results, k):
    """" (std err: bootstrap)" after a boundary's title when "auto" chose per boundary."""
    cov = results.covariance
    if cov.cov_type != "auto":
        return ""
    return f" (std err: {_source_label(cov.sources[k], withheld='none')})"


def _source_label(choice, withheld="none (withheld)"):
    """"Bahadur", "bootstrap", "bootstrap, no intervals" or ``withheld``."""
    if choice.estimator == "bootstrap" and not choice.intervals:
        return "bootstrap, no intervals"
    return {"bahadur": "Bahadur", "bootstrap": "bootstrap", "none": withheld}[choice.estimator]


def header_rows(results):
    """("Cov. Type:", ...) and ("Bandwidth:", ...) rows for the summary header."""
    cov = results.covariance
    if cov is None:
        return []
    rows = [("Cov. Type:", cov.cov_type)]
    if cov.bandwidths is not None:
        rows.append(("Bandwidth:", ", ".join(f"{h:.4g}" for h in cov.bandwidths)))
    if cov.cov_type == "bootstrap" or any(c.estimator == "bootstrap" for c in cov.sources):
        rows.append(("Replicates:", str(cov.cov_kwds["n_boot"])))
    return rows


def summary_notes(results):
    """Covariance description, the parallel-boundaries test and the inference warnings."""
    cov = results.covariance
    if cov is None:
        return []
    lines = [f"Covariance: {cov.description}."]
    if cov.cov_type != "bootstrap":
        lines.append(f"Standard errors by boundary: {sources_text(results)}.")
    if len(results.boundary_names) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InferenceWarning)
            test = results.test_parallel()
        keep = results._parallel_subset()
        among = ("" if len(keep) == len(results.boundary_names) else
                 f" among {', '.join(results.boundary_names[k] for k in keep)}")
        lines.append(f"Parallel boundaries{among} (H0: w_1 = ... = w_K-1): chi2({test.df}) = "
                     f"{test.statistic:.4g}, p-value = {test.pvalue:.4g}.")
    lines += [f"WARNING: {note}" for note in cov.notes]
    return lines


def sources_text(results):
    """"Bahadur for 0|1, 1|2; bootstrap for 2|3": which estimator each boundary uses."""
    groups = {}
    for name, c in zip(results.boundary_names, results.covariance.sources, strict=True):
        groups.setdefault(_source_label(c), []).append(str(name))
    return "; ".join(f"{label} for {', '.join(n)}" for label, n in groups.items())
