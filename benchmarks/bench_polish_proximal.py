"""NORDIC-1's polishing with and without one of its devices, in one process.

For each design (:func:`bench_scale.make_design`), n, K and C the SMO solver fits NORDIC-1
as the model would (the dense Gram matrix up to ``DENSE_GRAM_MAX_ROWS`` rows, rows on
demand above) twice, one after the other, without and with the device ``--compare``:

* ``proximal``: the proximal-point steps (``polish.PROXIMAL_STEPS`` = 0 before);
* ``hessian``: the blocks of H kept between the rounds of a polishing step
  (``polish.KEEP_HESSIAN_BLOCKS``; the same numbers bit for bit, so the same path);
* ``revision``: ``nordicstats/solvers/polish.py`` of the git revision ``--before`` (loaded
  as a module of its own) against the working tree's.

Printed per fit: the SMO steps of both (load-free), the polishing steps tried / taken,
the proximal active sets and the rounds, the CPU seconds of both fits and of their
polishing (summed over ``--repeats`` alternating pairs), their ratios, the relative
gaps, and the relative difference of the two optimal objectives.  CPU time of this
process: the machine is shared.

Run ``python benchmarks/bench_polish_proximal.py --n 1000 --designs overlap --K 5 7``; the
output is kept in ``benchmarks/results/polish_proximal.txt`` (``--compare proximal``) and
``benchmarks/results/polish_hessian.txt`` (``--compare hessian``); ``--compare revision
--before a05827f`` (the polishing round before its copies and calls were cut) in
``benchmarks/results/polish_round.txt``.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_polish_rows import PolishClock
from bench_scale import C_GRID, GAMMA, make_design

from nordicstats.data import binary_signs
from nordicstats.kernels import KernelMatrix, make_kernel
from nordicstats.solvers import kernel_rows, polish, smo
from nordicstats.solvers.choice import DENSE_GRAM_MAX_ROWS
from nordicstats.solvers.problem import NordicProblem

# the device compared: (module constant, value without it, value with it)
DEVICES = {"proximal": ("PROXIMAL_STEPS", 0, polish.PROXIMAL_STEPS),
           "hessian": ("KEEP_HESSIAN_BLOCKS", False, True),
           "first_round": ("FIRST_ROUND_CHANGES", None, polish.FIRST_ROUND_CHANGES)}


def make_problem(design, n, K, C, seed=0):
    """The NORDIC-1 problem of a design, with the Gram matrix the model would pass."""
    X, y = make_design(design, n, K, seed)
    kernel = make_kernel("rbf", gamma=GAMMA)
    gram = kernel(X, X) if n <= DENSE_GRAM_MAX_ROWS else KernelMatrix(kernel, X)
    return NordicProblem(gram=gram, signs=binary_signs(y, K), C=C, method="nordic1")


def polish_of_revision(revision):
    """``nordicstats/solvers/polish.py`` of a git revision, loaded as a module of its own."""
    root = Path(__file__).resolve().parent.parent
    source = subprocess.run(["git", "show", f"{revision}:nordicstats/solvers/polish.py"],
                            cwd=root, check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / f"polish_{revision}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"polish_{revision}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _revision_rows(module):
    """The kernel rows of a revision's polish module: its ``kernel_rows_for``, the
    package's when the revision imports its rows from :mod:`~nordicstats.solvers.kernel_rows`,
    else its ``KernelRows`` (revisions before the rows were read from the SMO loop's cache)."""
    if hasattr(module, "kernel_rows_for"):
        return module.kernel_rows_for
    if module.KernelRows is kernel_rows.KernelRows:
        return kernel_rows.kernel_rows_for
    return lambda gram, row_cache=None: module.KernelRows(gram)


def patches(device, on, before=None):
    """{(module, name): value} that makes the solver run without / with the device."""
    if device == "revision":
        if on:
            return {(smo, "polish_step"): polish.polish_step,
                    (smo, "kernel_rows_for"): kernel_rows.kernel_rows_for}
        return {(smo, "polish_step"): before.polish_step,
                (smo, "kernel_rows_for"): _revision_rows(before)}
    name, off, with_it = DEVICES[device]
    return {(polish, name): with_it if on else off}


def fit(problem, patch):
    """(CPU seconds, polishing CPU seconds, SolverResult) with ``patch`` applied."""
    defaults = {key: getattr(*key) for key in patch}
    for (owner, name), value in patch.items():
        setattr(owner, name, value)
    try:
        with PolishClock() as polishing:
            start = time.process_time()
            result = smo.solve_smo(problem)
            return time.process_time() - start, polishing.seconds, result
    finally:
        for (owner, name), value in defaults.items():
            setattr(owner, name, value)


def summary(result):
    steps = result.info["polish"]
    return (f"{result.iterations:>9,} steps, polish {len(steps)}/"
            f"{sum(s['accepted'] for s in steps)} ({sum(s['proximal'] for s in steps)} prox, "
            f"{sum(s['rounds'] for s in steps)} rounds)")


def compare(design, n, K, C, device, repeats=1, before=None):
    problem = make_problem(design, n, K, C)
    pairs = [(fit(problem, patches(device, False, before)),
              fit(problem, patches(device, True, before))) for _ in range(repeats)]
    old_cpu, old_pol = (sum(pair[0][i] for pair in pairs) for i in (0, 1))
    new_cpu, new_pol = (sum(pair[1][i] for pair in pairs) for i in (0, 1))
    old, new = pairs[0][0][2], pairs[0][1][2]
    difference = abs(new.objective - old.objective) / max(1.0, abs(old.objective))
    same = "bitwise the same point" if (np.array_equal(old.dual_coef, new.dual_coef) and
                                        np.array_equal(old.intercept, new.intercept)) else \
        "points differ"
    print(f"{design:8s} n = {n:>6,} K = {K} C = 2^{C_GRID.index(C) - 4:+d} | before "
          f"{summary(old)}, {old_cpu:6.2f} s (polish {old_pol:6.2f} s), gap {old.gap:.0e} | "
          f"{device} {summary(new)}, {new_cpu:6.2f} s (polish {new_pol:6.2f} s), gap "
          f"{new.gap:.0e} | CPU before / {device} {old_cpu / new_cpu:5.2f}x, polishing "
          f"{old_pol / max(new_pol, 1e-9):5.2f}x | objectives differ {difference:.0e}, {same}",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=["likert", "rare", "overlap"])
    parser.add_argument("--n", nargs="+", type=int, default=[1000])
    parser.add_argument("--K", nargs="+", type=int, default=[5, 7])
    parser.add_argument("--C", nargs="+", type=float, default=list(C_GRID))
    parser.add_argument("--compare", choices=sorted(DEVICES) + ["revision"], default="proximal")
    parser.add_argument("--before", default="a05827f",
                        help="git revision of polish.py before (--compare revision)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="fits without / with, alternating; CPU seconds summed")
    args = parser.parse_args()
    before = polish_of_revision(args.before) if args.compare == "revision" else None
    for n in args.n:
        for design in args.designs:
            for K in args.K:
                for C in args.C:
                    compare(design, n, K, C, args.compare, args.repeats, before)


if __name__ == "__main__":
    main()
