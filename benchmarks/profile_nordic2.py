"""Where NORDIC-2's time goes at n = 1,000 and K = 5, 6, 7 (the Likert-type design, RBF gamma 0.2).

For one data set per K it times, in one process and one after the other:

* the K-1 libsvm fits (scikit-learn ``SVC``) -- the baseline of every ratio;
* the relaxation as K-1 full L1-SVM LPs (scipy's HiGHS on all n kernel columns, the
  route before column generation) and as the column-generation LPs the solver uses
  (:class:`nordicstats.solvers.l1svm_lp.BoundaryLP`), with its crossing rows;
* the default NORDIC-2 fit (``formulation="lazy"``): total, nodes and LP solves of the
  branch and bound, and the certificate's gap;
* SCIP with all n(K-2) disjunctions (``formulation="disjunction"``): building the model
  and SCIP's solve (presolve, branching) separately, with its node count;
* inside the default fit, from the LPs' counters (:class:`~nordicstats.solvers.l1svm_lp.LPStats`),
  separately for the relaxation and the branch and bound: seconds in HiGHS's simplex,
  in pricing and in building rows, HiGHS runs (pricing rounds), simplex iterations, rows
  added and dropped, and LP re-solves per node.

``--lp-only`` leaves out the full LPs and SCIP (unchanged by the LP work; their rows
are stored) and times only the libsvm fits and the default fit.

``--compare-path`` times, in one process and one after the other, each boundary's
relaxation LP and then the default fit twice: with the root LPs solved by the dual
simplex alone (``USE_COST_PATH = False``) and along their cost path (the default,
:mod:`nordicstats.solvers.l1svm_path`): CPU seconds per LP, simplex iterations,
breakpoints and fallbacks, and the fit's two phases; then prints the rows so stored
as a Markdown table.  ``--compare-start`` does the same with the path on the LP itself
(``PATH_PERTURBATION = 0``: a degenerate start stalls it) against the path on the LP
with perturbed margins (the default); ``--compare-resolve`` with the branch and bound's
re-solves by HiGHS alone from the previous basis (``USE_MARGIN_PATH = False``) against
their path along the switched sign rows' margins (the default), with the branch and
bound's CPU seconds, re-solves, breakpoints and simplex iterations; ``--compare-certify``
with every path's end basis confirmed by HiGHS (``SELF_CERTIFY = False``) against the
fresh check that skips HiGHS where it passes (the default,
:mod:`nordicstats.solvers.l1svm_certificate`), with the path ends certified each way
and HiGHS's runs; ``--design`` picks
the data (``overlap``, whose outer boundaries start degenerate).  ``--trace-paths``
follows each root LP's cost path from 1/32, 1/16 and 1/8 of its costs and counts its
breakpoints against the points whose status differs between start and end.

Rows go to ``benchmarks/results/scale/profile_nordic2.jsonl``, with the commit they ran.

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/profile_nordic2.py
      (``--K 5`` for one K, ``--C 1`` for the slack weight, ``--scip-limit`` seconds)
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from bench_scale import GAMMA, _commit, libsvm_fits, make_design  # noqa: E402

from nordicstats.data import binary_signs  # noqa: E402
from nordicstats.kernels import make_kernel  # noqa: E402
from nordicstats.solvers import l1svm_lp, milp  # noqa: E402
from nordicstats.solvers.l1svm_lp import BoundaryLP, LPStats  # noqa: E402
from nordicstats.solvers.l1svm_margin_path import follow_margin_path  # noqa: E402
from nordicstats.solvers.l1svm_path import follow_cost_path  # noqa: E402
from nordicstats.solvers.problem import NordicProblem, count_crossings  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "scale" / "profile_nordic2.jsonl"


def seconds(function):
    start = time.perf_counter()
    out = function()
    return out, time.perf_counter() - start


def cpu_seconds(function):
    """(result, wall-clock seconds, CPU seconds of this process)."""
    start, cpu = time.perf_counter(), time.process_time()
    out = function()
    return out, time.perf_counter() - start, time.process_time() - cpu


def profile(n, K, C, scip_limit, seed=0, lp_only=False):
    X, y = make_design("likert", n, K, seed)
    gram = make_kernel("rbf", X, gamma=GAMMA)(X, X)
    signs = binary_signs(y, K)
    problem = NordicProblem(gram, signs, C, method="nordic2", penalty="l1")
    row = {"n": n, "K": K, "C": C, "seed": seed, "load": os.getloadavg()[0],
           "commit": _commit()}
    _, row["libsvm"], row["libsvm_cpu"] = cpu_seconds(lambda: libsvm_fits(X, y, K, C))
    row.update(_default_fit_parts(problem))
    row["ratio_default_fit_to_libsvm"] = row["default_fit"] / row["libsvm"]
    row["cpu_ratio_default_fit_to_libsvm"] = row["default_fit_cpu"] / row["libsvm_cpu"]
    if lp_only:
        return row
    u = problem.upper_bounds
    row["relaxation_full_lp"] = seconds(
        lambda: [milp._boundary_lp(gram, signs[:, k], u[:, k]) for k in range(K - 1)])[1]
    lps = [BoundaryLP(gram, signs[:, k]) for k in range(K - 1)]
    solved, row["relaxation_column_generation"] = seconds(
        lambda: [lp.solve(u[:, k]) for k, lp in enumerate(lps)])
    F = gram @ np.column_stack([s[0] for s in solved]) + np.array([s[1] for s in solved])
    row["relaxation_crossing_rows"] = int(count_crossings(F).sum())
    row["columns_priced_in"] = [len(lp.columns) for lp in lps]
    row["nonzero_theta"] = [int(np.sum(s[0] != 0)) for s in solved]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lazy, row["lazy_total"] = seconds(lambda: milp.solve_nordic2_scip(problem))
        row.update(lazy_status=lazy.status, lazy_gap=lazy.gap, lazy_nodes=lazy.iterations,
                   lazy_lp_solves=lazy.info.get("lp_solves"), objective=lazy.objective)
        row.update(_scip_parts(problem, min(lazy.objective * 1.5, 1e300), scip_limit))
    row["ratio_lazy_to_libsvm"] = row["lazy_total"] / row["libsvm"]
    return row


def _summed(lps):
    return {name: sum(getattr(lp.stats, name) for lp in lps) for name in LPStats.__annotations__}


def _default_fit_parts(problem):
    """The default fit timed in two phases (relaxation, then branch and bound) with its LPs'
    counters; the fit's own relaxation finds the LPs solved and costs nothing again."""
    path = milp.RelaxationPath.for_problem(problem)
    _, relaxation, relaxation_cpu = cpu_seconds(lambda: path.solve(problem.upper_bounds))
    before = _summed(path.lps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res, rest, rest_cpu = cpu_seconds(
            lambda: milp.solve_nordic2_scip(problem, relaxation=path))
    after = _summed(path.lps)
    row = {"default_fit": relaxation + rest, "default_fit_cpu": relaxation_cpu + rest_cpu,
           "default_relaxation": relaxation, "default_relaxation_cpu": relaxation_cpu,
           "default_after_relaxation": rest, "default_after_relaxation_cpu": rest_cpu,
           "default_status": res.status,
           "default_gap": res.gap, "default_nodes": res.iterations,
           "default_lp_solves": res.info.get("lp_solves"),
           "default_objective": res.objective}
    row.update({f"relaxation_{name}": value for name, value in before.items()})
    row.update({f"bnb_{name}": after[name] - value for name, value in before.items()})
    return row


#: ``--compare-path``: the root LPs by the dual simplex alone, then along the cost path;
#: ``--compare-start``: the path on the LP itself (a degenerate start stalls it and the
#: LP falls back), then on the LP with perturbed margins (the default); ``--compare-resolve``:
#: the re-solves by HiGHS alone, then along the margin path; ``--compare-certify``: every
#: path's end basis confirmed by HiGHS, then checked afresh without it where it passes.
COMPARISONS = {"path": (("lp", {"USE_COST_PATH": False}), ("path", {})),
               "start": (("plain", {"PATH_PERTURBATION": 0.0}), ("path", {})),
               "resolve": (("highs", {"USE_MARGIN_PATH": False}), ("margin", {})),
               "certify": (("highs", {"SELF_CERTIFY": False}), ("checked", {}))}


def compare_path(n, K, C, seed=0, design="likert", comparison="path"):
    """One row: per-LP and fit CPU seconds for the two settings of ``COMPARISONS[comparison]``
    (keys prefixed by their names), in this order, one process."""
    X, y = make_design(design, n, K, seed)
    gram = make_kernel("rbf", X, gamma=GAMMA)(X, X)
    problem = NordicProblem(gram, binary_signs(y, K), C, method="nordic2", penalty="l1")
    variants = COMPARISONS[comparison]
    row = {"n": n, "K": K, "C": C, "seed": seed, "design": design, "load": os.getloadavg()[0],
           "commit": _commit(), "compare_path": True, "variants": [v[0] for v in variants]}
    _, row["libsvm"], row["libsvm_cpu"] = cpu_seconds(lambda: libsvm_fits(X, y, K, C))
    defaults = {name: getattr(l1svm_lp, name) for _, settings in variants for name in settings}
    for name, settings in variants:
        for setting, value in {**defaults, **settings}.items():
            setattr(l1svm_lp, setting, value)
        lps = [BoundaryLP(gram, problem.signs[:, k]) for k in range(K - 1)]
        solved = [cpu_seconds(lambda lp=lp, k=k: lp.solve(problem.upper_bounds[:, k]))
                  for k, lp in enumerate(lps)]
        row.update({f"{name}_lp_cpu": [s[2] for s in solved],
                    f"{name}_lp_objective": [s[0][2] for s in solved],
                    f"{name}_lp_iterations": [lp.stats.simplex_iterations for lp in lps],
                    f"{name}_lp_path_steps": [lp.stats.path_steps for lp in lps],
                    f"{name}_lp_path_fallbacks": [lp.stats.path_fallbacks for lp in lps]})
        row.update({f"{name}_{key}": value for key, value in _default_fit_parts(problem).items()})
    for setting, value in defaults.items():
        setattr(l1svm_lp, setting, value)
    return row


def path_table(rows):
    """Markdown: the ``--compare-path`` / ``--compare-start`` rows (before -> after, CPU s)."""
    lines = ["| design | K | C | load | before -> after | libsvm CPU s | per-LP CPU s | "
             "simplex iterations per LP | breakpoints per LP (fallbacks) | relaxation CPU s "
             "| fit CPU s | CPU ratio to libsvm | nodes |", "|" + "---|" * 13]
    for r in (r for r in rows if r.get("compare_path")):
        old, new = r.get("variants", ("lp", "path"))

        def both(key, form="{:.2f}", r=r, old=old, new=new):
            return f"{form.format(r[f'{old}_{key}'])} -> {form.format(r[f'{new}_{key}'])}"

        def per_lp(key, form, r=r):
            return " ".join(form.format(v) for v in r[key])

        steps = "" if old == "lp" else \
            f"{per_lp(f'{old}_lp_path_steps', '{}')} ({sum(r[f'{old}_lp_path_fallbacks'])}) -> "
        lines.append(
            f"| {r.get('design', 'likert')} | {r['K']} | {r['C']:g} | {r['load']:.1f} | "
            f"{old} -> {new} | {r['libsvm_cpu']:.3f} | "
            f"{per_lp(f'{old}_lp_cpu', '{:.2f}')} -> {per_lp(f'{new}_lp_cpu', '{:.2f}')} | "
            f"{per_lp(f'{old}_lp_iterations', '{}')} -> "
            f"{per_lp(f'{new}_lp_iterations', '{}')} | "
            f"{steps}{per_lp(f'{new}_lp_path_steps', '{}')} "
            f"({sum(r[f'{new}_lp_path_fallbacks'])}) | "
            f"{both('default_relaxation_cpu')} | {both('default_fit_cpu')} | "
            f"{r[f'{old}_default_fit_cpu'] / r['libsvm_cpu']:.0f}x -> "
            f"{r[f'{new}_default_fit_cpu'] / r['libsvm_cpu']:.0f}x | "
            f"{both('default_nodes', '{}')} |")
    return "\n".join(lines)


def resolve_table(rows):
    """Markdown: the ``--compare-resolve`` rows (the branch and bound's re-solves by HiGHS
    alone -> along the margin path; CPU seconds, one process per row)."""
    lines = ["| design | K | C | load | libsvm CPU s | B&B CPU s | re-solves by the path "
             "(fallbacks) | breakpoints per path | B&B simplex iterations | B&B HiGHS runs | "
             "fit CPU s | CPU ratio to libsvm | nodes |", "|" + "---|" * 13]
    for r in (r for r in rows if r.get("variants") == ["highs", "margin"]):
        def both(key, form="{:.2f}", r=r):
            return f"{form.format(r[f'highs_{key}'])} -> {form.format(r[f'margin_{key}'])}"

        paths = r["margin_bnb_margin_paths"]
        lines.append(
            f"| {r['design']} | {r['K']} | {r['C']:g} | {r['load']:.1f} | "
            f"{r['libsvm_cpu']:.3f} | {both('default_after_relaxation_cpu')} | {paths} "
            f"({r['margin_bnb_margin_path_fallbacks']}) | "
            f"{r['margin_bnb_margin_path_steps'] / max(paths, 1):.0f} | "
            f"{both('bnb_simplex_iterations', '{}')} | {both('bnb_runs', '{}')} | "
            f"{both('default_fit_cpu')} | "
            f"{r['highs_default_fit_cpu'] / r['libsvm_cpu']:.0f}x -> "
            f"{r['margin_default_fit_cpu'] / r['libsvm_cpu']:.0f}x | "
            f"{both('default_nodes', '{}')} |")
    return "\n".join(lines)


def _load_margin_path():
    """Run the margin path once on a tiny LP (its docstring's): a fit whose branch and bound
    has nodes would otherwise load or compile it inside the first timed fit (~10 s after
    an edit of its module)."""
    Z = np.array([[0.0], [1.0], [2.0], [3.0], [1.0]])
    follow_margin_path(Z, np.ascontiguousarray(Z.T), np.array([-1.0, -1.0, 1.0, 1.0, 1.0]),
                       np.array([10.0] * 4 + [np.inf]), np.array([1.0] * 4 + [0.0]),
                       np.array([0, 2, 2, 0, 3]), [0], [1.0], [4], [0.0])


def certify_table(rows):
    """Markdown: the ``--compare-certify`` rows (path ends confirmed by HiGHS -> checked
    afresh, HiGHS skipped where the check passes; CPU seconds, one process per row)."""
    lines = ["| design | K | C | load | libsvm CPU s | relaxation CPU s | B&B CPU s | path ends "
             "certified by the check / by HiGHS (root + B&B) | check s | HiGHS runs, root + "
             "B&B | fit CPU s | CPU ratio to libsvm | nodes | objectives, relative difference |",
             "|" + "---|" * 14]
    for r in (r for r in rows if r.get("variants") == ["highs", "checked"]):
        def both(key, form="{:.2f}", r=r):
            return f"{form.format(r[f'highs_{key}'])} -> {form.format(r[f'checked_{key}'])}"

        def phases(key, r=r):
            return f"{r[f'checked_relaxation_{key}']} + {r[f'checked_bnb_{key}']}"

        runs = {name: r[f"{name}_relaxation_runs"] + r[f"{name}_bnb_runs"]
                for name in ("highs", "checked")}
        check = r["checked_relaxation_certificate_seconds"] + r["checked_bnb_certificate_seconds"]
        difference = abs(r["checked_default_objective"] - r["highs_default_objective"]) / \
            abs(r["highs_default_objective"])
        lines.append(
            f"| {r['design']} | {r['K']} | {r['C']:g} | {r['load']:.1f} | "
            f"{r['libsvm_cpu']:.3f} | {both('default_relaxation_cpu')} | "
            f"{both('default_after_relaxation_cpu')} | {phases('self_certified')} / "
            f"{phases('highs_confirmed')} | {check:.3f} | "
            f"{runs['highs']} -> {runs['checked']} | {both('default_fit_cpu')} | "
            f"{r['highs_default_fit_cpu'] / r['libsvm_cpu']:.0f}x -> "
            f"{r['checked_default_fit_cpu'] / r['libsvm_cpu']:.0f}x | "
            f"{both('default_nodes', '{}')} | {difference:.0e} |")
    return "\n".join(lines)


def trace_resolves(n, K, C, seed=0, design="likert"):
    """One row: every LP re-solve of the default fit's branch and bound, with how far it
    moved from the LP's previous optimum (the same BoundaryLP, last left by another node).

    Per re-solve: sign rows switched (on + off), HiGHS runs and simplex iterations, the
    iterations of its first run (before any pricing), rows priced in, and the distance
    between the two optimal bases: points that entered or left E (the margin's basic mu)
    and coordinates that entered or left A (theta_j != 0); and the iterations of the
    re-solve's first HiGHS run (before any row is priced in).  Every pivot of a simplex
    method -- or of a parametric path in the sign row's bound -- changes one basic
    variable, so half the basis distance bounds the pivots of any such route from below.
    Every path end goes to HiGHS here (``SELF_CERTIFY = False``), so that each re-solve has
    a HiGHS run to count.
    """
    X, y = make_design(design, n, K, seed)
    gram = make_kernel("rbf", X, gamma=GAMMA)(X, X)
    problem = NordicProblem(gram, binary_signs(y, K), C, method="nordic2", penalty="l1")
    row = {"n": n, "K": K, "C": C, "seed": seed, "design": design, "load": os.getloadavg()[0],
           "commit": _commit(), "trace_resolves": True}
    path = milp.RelaxationPath.for_problem(problem)
    path.solve(problem.upper_bounds)
    last = {id(lp): _basis_sets(lp) for lp in path.lps}
    resolves, original = [], BoundaryLP.solve

    def traced(lp, costs=None):
        before, runs, added, rows = (lp.stats.simplex_iterations, lp.stats.runs,
                                     lp.stats.rows_added, lp._active)
        first = len(run_iterations)
        out = original(lp, costs)
        if lp.stats.runs > runs:
            elbow, support = _basis_sets(lp)
            old_elbow, old_support = last[id(lp)]
            resolves.append({"sign_rows_switched": len(rows ^ traced.previous.get(id(lp), rows)),
                             "runs": lp.stats.runs - runs,
                             "iterations": lp.stats.simplex_iterations - before,
                             "first_run_iterations": run_iterations[first] if
                             len(run_iterations) > first else 0,
                             "rows_added": lp.stats.rows_added - added,
                             "elbow_changes": len(elbow ^ old_elbow),
                             "support_changes": len(support ^ old_support),
                             "feasible": out is not None})
            last[id(lp)] = (elbow, support)
        traced.previous[id(lp)] = lp._active
        return out

    def counted_run(lp):
        status = original_run(lp)
        run_iterations.append(int(lp.lp.getInfo().simplex_iteration_count))
        return status

    traced.previous, run_iterations, original_run = {}, [], BoundaryLP._run
    BoundaryLP.solve, BoundaryLP._run = traced, counted_run
    self_certify, l1svm_lp.SELF_CERTIFY = l1svm_lp.SELF_CERTIFY, False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = milp.solve_nordic2_scip(problem, relaxation=path)
    finally:
        BoundaryLP.solve, BoundaryLP._run = original, original_run
        l1svm_lp.SELF_CERTIFY = self_certify
    row.update(nodes=res.iterations, resolves=resolves)
    return row


def trace_paths(n, K, C, seed=0, design="overlap", fractions=(1 / 32, 1 / 16, 1 / 8)):
    """One row: each root LP's cost path from each start fraction of its costs, with
    where its breakpoints go (the start basis by HiGHS, then the path alone, CPU s).

    Per boundary and fraction: breakpoints, the points whose status (R, L, E) differs
    between the start and the end basis (net changes: a breakpoint moves one point or
    one coordinate, so breakpoints far above the net changes mean points that come and
    go), |A| and |L| at the start and the end, and the path's CPU seconds.
    """
    X, y = make_design(design, n, K, seed)
    gram = make_kernel("rbf", X, gamma=GAMMA)(X, X)
    problem = NordicProblem(gram, binary_signs(y, K), C, method="nordic2", penalty="l1")
    row = {"n": n, "K": K, "C": C, "seed": seed, "design": design, "load": os.getloadavg()[0],
           "commit": _commit(), "trace_paths": True, "boundaries": []}
    use_path = l1svm_lp.USE_COST_PATH
    for k in range(K - 1):
        costs, signs = problem.upper_bounds[:, k], problem.signs[:, k]
        for fraction in fractions:
            lp = BoundaryLP(gram, signs)
            l1svm_lp.USE_COST_PATH = False  # the start by HiGHS alone
            lp.solve(costs * fraction)
            l1svm_lp.USE_COST_PATH = use_path
            start = lp.basis_sets()
            end, _, cpu = cpu_seconds(functools.partial(
                follow_cost_path, gram, signs, costs, fraction, 1.0, *start,
                perturbation=l1svm_lp.PATH_PERTURBATION))
            row["boundaries"].append({
                "boundary": k, "fraction": fraction, "followed": end.followed,
                "breakpoints": end.steps, "path_cpu": cpu,
                "start_iterations": lp.stats.simplex_iterations,
                "net_changes": int(np.sum(start[0] != end.point_status)),
                "active": [int(start[1].size), int(end.active.size)],
                "at_bound": [int(np.sum(start[0] == 1)), int(np.sum(end.point_status == 1))]})
    return row


def _basis_sets(lp):
    """(E, A) of the LP's current HiGHS basis: basic mu, and theta_j != 0."""
    basic = lp._highspy.HighsBasisStatus.kBasic
    status = lp.lp.getBasis().col_status
    elbow = {i for i in range(lp.n) if status[i] == basic}
    optimum = lp._optimum
    support = set() if optimum is None else set(np.flatnonzero(optimum[0]).tolist())
    return elbow, support


def resolve_summary(row):
    """One line: medians and totals of a ``trace_resolves`` row."""
    res = [r for r in row["resolves"] if r["feasible"]]

    def stat(key):
        values = np.array([r[key] for r in res])
        return f"{np.median(values):.0f} ({values.min()}-{values.max()})"

    return (f"{row['design']} K = {row['K']}, C = {row['C']:g}: {row['nodes']} nodes, "
            f"{len(row['resolves'])} re-solves ({len(res)} feasible); per feasible re-solve, "
            f"median (range): iterations {stat('iterations')}, of which in the first HiGHS run "
            f"{stat('first_run_iterations')}, HiGHS runs {stat('runs')}, "
            f"rows priced in {stat('rows_added')}, sign rows switched "
            f"{stat('sign_rows_switched')}, E changes {stat('elbow_changes')}, A changes "
            f"{stat('support_changes')}")


def _scip_parts(problem, upper, limit):
    """Model build and SCIP's own solve with all disjunctions, timed apart."""
    import pyscipopt

    design = milp._Design.from_problem(problem)
    (model, _), build = seconds(lambda: milp._build_model(pyscipopt, problem, design,
                                                         "disjunction", upper))
    milp._set_parameters(model, limit, 1e-6, 1, False)
    _, solve = seconds(model.optimize)
    return {"scip_build": build, "scip_solve": solve, "scip_presolve": model.getPresolvingTime(),
            "scip_status": model.getStatus(), "scip_nodes": model.getNNodes(),
            "scip_gap": model.getGap()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--K", nargs="+", type=int, default=[5, 6, 7])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--scip-limit", type=float, default=300.0)
    parser.add_argument("--lp-only", action="store_true",
                        help="only the libsvm fits and the default fit with its LP counters")
    parser.add_argument("--compare-path", action="store_true",
                        help="root LPs by the dual simplex alone against their cost path")
    parser.add_argument("--compare-start", action="store_true",
                        help="the cost path on the LP itself against perturbed margins")
    parser.add_argument("--compare-resolve", action="store_true",
                        help="the branch and bound's re-solves by HiGHS alone against the "
                             "margin path")
    parser.add_argument("--compare-certify", action="store_true",
                        help="every path end confirmed by HiGHS against the fresh check")
    parser.add_argument("--trace-paths", action="store_true",
                        help="each root LP's cost path from several start fractions")
    parser.add_argument("--trace-resolves", action="store_true",
                        help="the branch and bound's LP re-solves and their basis distances")
    parser.add_argument("--design", default="likert", choices=("likert", "rare", "overlap"),
                        help="data design of --compare-path / --compare-start")
    args = parser.parse_args()
    _commit()  # HEAD when the run started
    OUT.parent.mkdir(parents=True, exist_ok=True)
    if args.trace_paths:
        for K in args.K:
            row = trace_paths(args.n, K, args.C, design=args.design)
            with OUT.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            for b in row["boundaries"]:
                print(json.dumps(b), flush=True)
        return
    if args.trace_resolves:
        for K in args.K:
            row = trace_resolves(args.n, K, args.C, design=args.design)
            with OUT.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(resolve_summary(row), flush=True)
        return
    comparison = ("start" if args.compare_start else "path" if args.compare_path else
                  "resolve" if args.compare_resolve else
                  "certify" if args.compare_certify else None)
    if comparison:  # load (or compile) both compiled paths once, outside the timings
        compare_path(60, 3, 4.0, comparison=comparison)
        _load_margin_path()
    for K in args.K:
        row = compare_path(args.n, K, args.C, design=args.design, comparison=comparison) \
            if comparison else profile(args.n, K, args.C, args.scip_limit, lp_only=args.lp_only)
        with OUT.open("a") as fh:
            fh.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)
    if comparison:
        stored = [json.loads(line) for line in OUT.read_text().splitlines()]
        table = {"resolve": resolve_table, "certify": certify_table}.get(comparison, path_table)
        print(table(stored))


if __name__ == "__main__":
    main()
