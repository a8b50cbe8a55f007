"""Scaling benchmark: NORDIC-0/1/2 against K-1 libsvm fits as n, K and C grow.

Every fit runs in a child process (``fork``) with a wall-clock limit and an
address-space limit, so a slow or memory-hungry solver cannot hang the run; a
killed fit is stored with status ``"killed_time_limit"`` (its time is then a lower
bound) or ``"memory_limit"``.  In the same child, on the same data, the baseline
is timed first: K-1 scikit-learn ``SVC(C=C, gamma=GAMMA)`` (libsvm) fits of
"class > k", the fastest of ``LIBSVM_REPEATS`` runs.  Each row stores both times,
their ratio, the NORDIC status, its certificate (relative gap and largest violation,
``certified``), the peak memory of the fit (growth of the child's peak resident set,
Linux ``VmHWM`` reset through ``/proc/self/clear_refs``; ``ru_maxrss`` elsewhere)
and the load average.

Designs (``make_design``), K classes cut at quantiles of a latent score:

* ``likert``: X ~ N(0, I_5), latent = X (1, 0.625, 0.25, -0.125, -0.5)' + sin(2 x_1)
  + 0.7 Logistic, K balanced classes;
* ``rare``: the same latent, the top class only 5% (the other K-1 share the rest);
* ``overlap``: the same signal with 3 Logistic noise (heavy class overlap).

Parts:

* ``--part kernel`` (default): RBF (gamma = 0.2) NORDIC-1, NORDIC-0 and NORDIC-2
  (l1, SCIP, its own ``time_limit`` so that it returns its gap) for K = 3, 5, 7,
  n = 1,000, 5,000, 20,000 and C = 2^-4, ..., 2^4;
* ``--part linear``: linear NORDIC-1 at n = 10^5 and 10^6, d = 10, K = 4, C = 1:
  ``fit(cov_type="none")``, ``fit()`` with the default covariance computed
  (``cov_type="auto"``), and liblinear's K-1 fits (``LinearSVC(loss="hinge",
  dual=True)``), each in its own child;
* ``--figures``: the figures of ``docs/notes/scaling.md`` and a Markdown summary,
  from the stored rows only (with ``--rows FILE`` also a table of that file's rows).

Rows are appended to ``benchmarks/results/scale/{kernel,linear}.jsonl`` as each fit
ends (``--rows FILE``: the kernel rows to another file of that folder, so that rows of
an earlier solver stay for comparison); a rerun skips the keys already stored
(resumable).  ``--figures`` reads the kernel files of :data:`KERNEL_FILES`, a newer
file's row replacing an older one of the same key.  ``--quick``: n = 1,000, K = 3
and 5, C = 2^-4, 1, 2^4, 60 s per fit.

Run (low priority, one BLAS thread)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/bench_scale.py --quick
    nohup nice python benchmarks/bench_scale.py --methods nordic2 --n 1000 \
        --rows nordic2_conf.jsonl &
    python benchmarks/bench_scale.py --figures
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "scale"
FIGURES = ROOT / "docs" / "notes" / "figures"
GAMMA = 0.2
C_GRID = tuple(2.0**e for e in range(-4, 5))
KERNEL_METHODS = ("nordic1", "nordic0", "nordic2")
KEY = ("part", "design", "method", "n", "K", "C", "seed")
NORDIC2_ROWS = "nordic2_conf.jsonl"  # NORDIC-2, the paths' end bases certified without HiGHS
# kernel rows by solver version, oldest first: kernel.jsonl (the first SMO solver,
# NORDIC-0 by active_set, NORDIC-2 by primal LPs), kernel_nordic0_smo.jsonl (NORDIC-0
# by SMO), nordic2_dual_lp.jsonl (NORDIC-2's dual cutting-plane LPs), nordic2_tail.jsonl
# (NORDIC-2's node bounds from cached LPs), nordic2_path.jsonl (its root LPs by the cost
# path), nordic2_deg.jsonl (the path with perturbed margins, no stall on degenerate
# starts), nordic2_bb.jsonl (the branch and bound's re-solves along the sign rows' margins),
# NORDIC2_ROWS (the paths' end bases checked afresh, HiGHS's confirming run skipped),
# kernel_polish.jsonl (NORDIC-1 with active-set polishing), kernel_tail.jsonl (NORDIC-1
# with shrinking and a row cache sized to the problem), kernel_tail3.jsonl (NORDIC-1
# with the block-tridiagonal polishing), kernel_ovl.jsonl (NORDIC-1 with the proximal
# polishing steps), kernel_fac.jsonl (NORDIC-1 with the blocks of H kept between the
# polishing rounds), kernel_big.jsonl (NORDIC-1 at n = 20,000 with the polishing's kernel
# rows read from the SMO loop's row cache and faces bounded by their rows and the blocks
# of H), kernel_round.jsonl (NORDIC-1 with the cheaper polishing round: the same
# arithmetic, fewer copies and calls), kernel_grid1000.jsonl and kernel_grid5000.jsonl
# (NORDIC-1, the whole grid at n = 1,000 and C = 2^-4, 1, 2^4 at n = 5,000, each in one
# run with all of these), kernel_nordic0_tail.jsonl (NORDIC-0 by SMO with
# the coarse tier at 1), kernel_nordic0_shrink.jsonl (NORDIC-0 with shrinking),
# kernel_nordic0_tail3.jsonl (NORDIC-0 shrinking at each round's start),
# kernel_nordic0_sched.jsonl (NORDIC-0 with the patient shrink),
# kernel_nordic0_grid1000.jsonl (NORDIC-0, the whole grid at n = 1,000 in one run),
# kernel_big2.jsonl (NORDIC-1 at n = 20,000 with the polishing's cached rows read by
# compiled loops: its products in place, K_SS copied)
KERNEL_FILES = ("kernel.jsonl", "kernel_nordic0_smo.jsonl", "nordic2_dual_lp.jsonl",
                "nordic2_tail.jsonl", "nordic2_path.jsonl", "nordic2_deg.jsonl",
                "nordic2_bb.jsonl", NORDIC2_ROWS,
                "kernel_polish.jsonl", "kernel_tail.jsonl", "kernel_tail3.jsonl",
                "kernel_ovl.jsonl", "kernel_fac.jsonl", "kernel_big.jsonl",
                "kernel_round.jsonl", "kernel_grid1000.jsonl",
                "kernel_grid5000.jsonl",
                "kernel_nordic0_tail.jsonl",
                "kernel_nordic0_shrink.jsonl", "kernel_nordic0_tail3.jsonl",
                "kernel_nordic0_sched.jsonl", "kernel_nordic0_grid1000.jsonl",
                "kernel_big2.jsonl")
BETA5 = np.array([1.0, 0.625, 0.25, -0.125, -0.5])
# The libsvm baseline is the fastest of this many runs: on a shared machine one run of
# ~0.1 s varied 5-fold, and the fastest is the fair (harshest) denominator.
LIBSVM_REPEATS = 3


# --- data ------------------------------------------------------------------------------------
def make_design(name, n, K, seed, d=5):
    """(X, y) of design ``name`` with K classes; y coded 0..K-1.

    The latent is X beta + sin(2 x_1) + s * Logistic with beta the Likert design's five
    coefficients (``d = 10``: beta over linspace(1, -0.5, 10)); s = 0.7, or 3 for
    ``overlap``.  Cuts at the latent's quantiles: K balanced classes, or for
    ``rare`` a top class of 5% and K-1 equal shares of the remaining 95%.
    """
    if name not in ("likert", "rare", "overlap"):
        raise ValueError(f"design must be 'likert', 'rare' or 'overlap'; got {name!r}")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta = BETA5 if d == 5 else np.linspace(1.0, -0.5, d)
    noise = 3.0 if name == "overlap" else 0.7
    latent = X @ beta + np.sin(2.0 * X[:, 0]) + noise * rng.logistic(size=n)
    if name == "rare":
        shares = 0.95 * np.arange(1, K) / (K - 1)
    else:
        shares = np.arange(1, K) / K
    y = np.searchsorted(np.quantile(latent, shares), latent, side="right")
    return X, np.minimum(y, K - 1)


# --- one isolated measurement ----------------------------------------------------------------
def _memory_kib():
    """(current RSS, peak RSS) of this process in KiB (peak from ru_maxrss off Linux)."""
    fields = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                name, _, rest = line.partition(":")
                if name in ("VmRSS", "VmHWM"):
                    fields[name] = int(rest.split()[0])
    except OSError:
        pass
    peak = fields.get("VmHWM", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return fields.get("VmRSS", 0), peak


def peak_mb_of(function):
    """(result, seconds, peak MB above the resident set before the call, CPU seconds).

    The CPU seconds (this process, all threads) are the steadier measure on a shared
    machine: wall-clock time grows with the load, CPU time much less.
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # reset VmHWM to the current RSS
    except OSError:
        pass
    before, _ = _memory_kib()
    start, cpu = time.perf_counter(), time.process_time()
    out = function()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return out, seconds, (_memory_kib()[1] - before) / 1024.0, cpu


def _child(connection, task, memory_mb):
    if memory_mb:
        limit = int(memory_mb * 2**20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            row = task()
        row["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:160]}"
                                  for w in caught})
    except MemoryError:
        row = {"status": "memory_limit"}
    except Exception as exc:  # stored, the run goes on
        row = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:400],
               "traceback": traceback.format_exc()[-800:]}
    connection.send(row)
    connection.close()


def isolated(task, limit, memory_mb):
    """Run ``task() -> dict`` in a forked child; kill it after ``limit`` seconds."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, task, memory_mb))
    start = time.perf_counter()
    process.start()
    send.close()
    row = receive.recv() if receive.poll(limit) else None
    process.join(5.0)
    if process.is_alive():
        process.kill()
        process.join()
    if row is None:
        row = {"status": "killed_time_limit", "seconds": time.perf_counter() - start}
    return row


# --- the kernel part -------------------------------------------------------------------------
def libsvm_fits(X, y, K, C):
    """K-1 SVC fits of "class > k": the baseline."""
    from sklearn.svm import SVC

    for k in range(K - 1):
        SVC(C=C, gamma=GAMMA).fit(X, (y > k).astype(int))


def baseline(X, y, K, C, repeats=LIBSVM_REPEATS):
    """Seconds, peak MB and CPU seconds of the K-1 libsvm fits (fastest of ``repeats``)."""
    runs = [peak_mb_of(lambda: libsvm_fits(X, y, K, C))[1:] for _ in range(repeats)]
    return min(r[0] for r in runs), max(r[1] for r in runs), min(r[2] for r in runs)


def kernel_task(design, method, n, K, C, seed, limit):
    from nordicstats import NORDIC

    def task():
        X, y = make_design(design, n, K, seed)
        base, base_mb, base_cpu = baseline(X, y, K, C)
        options = {"time_limit": 0.9 * limit} if method == "nordic2" else {}
        model = NORDIC(y, X, method=method, kernel="rbf", gamma=GAMMA, C=C,
                       solver_options=options)
        res, seconds, mb, cpu = peak_mb_of(lambda: model.fit(cov_type="none"))
        sr = res.solver_result
        cert = sr.certificate
        return {"seconds": seconds, "libsvm_seconds": base, "ratio": seconds / base,
                "cpu_seconds": cpu, "libsvm_cpu_seconds": base_cpu, "cpu_ratio": cpu / base_cpu,
                "status": sr.status, "solver": sr.solver, "iterations": int(sr.iterations),
                "gap": None if cert is None else float(cert.gap),
                "max_violation": None if cert is None else float(cert.max_violation),
                "certified": None if cert is None else cert.certified,
                "peak_mb": mb, "libsvm_peak_mb": base_mb,
                "solution_origin": sr.info.get("solution_origin"),
                "lp_solves": sr.info.get("lp_solves"),
                **polish_summary(sr.info.get("polish"))}
    return task


def polish_summary(steps):
    """Columns of the SMO solver's active-set polishing: steps tried, taken, seconds."""
    if steps is None:
        return {}
    return {"polish_tried": len(steps), "polish_accepted": sum(s["accepted"] for s in steps),
            "polish_seconds": sum(s["seconds"] for s in steps),
            "polish_face": max((s["size"] for s in steps), default=0)}


# --- the linear part -------------------------------------------------------------------------
def linear_task(what, n, K, C, seed, d=10):
    def task():
        X, y = make_design("likert", n, K, seed, d=d)
        if what == "liblinear":
            from sklearn.svm import LinearSVC

            def fits():
                for k in range(K - 1):
                    LinearSVC(C=C, loss="hinge", dual=True).fit(X, (y > k).astype(int))
            _, seconds, mb, _ = peak_mb_of(fits)
            return {"seconds": seconds, "peak_mb": mb, "status": "done"}
        from nordicstats import NORDIC

        model = NORDIC(y, X, kernel="linear", C=C)
        cov_type = "none" if what == "nordic1" else "auto"
        res, seconds, mb, _ = peak_mb_of(lambda: model.fit(cov_type=cov_type))
        sr = res.solver_result
        row = {"seconds": seconds, "peak_mb": mb, "status": sr.status,
               "gap": float(sr.certificate.gap),
               "max_violation": float(sr.certificate.max_violation),
               "certified": sr.certificate.certified, "message": sr.message}
        if cov_type == "auto":
            row["cov_sources"] = [c.estimator for c in res.covariance.sources]
            row["bse_finite"] = int(np.isfinite(res.bse.to_numpy()).sum())
        return row
    return task


# --- storage ---------------------------------------------------------------------------------
def stored(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _key(row):
    return tuple(row.get(k) for k in KEY)


@functools.cache
def _commit():
    """HEAD when the run started (``main`` asks first): the code the rows ran with.

    The rows run the working tree, so ``+dirty`` is appended when the package's files
    differ from HEAD at the start (the stamp then names the base, not the code).
    """
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        return head + "+dirty" if git("status", "--porcelain", "--", "nordicstats") else head
    except (OSError, subprocess.CalledProcessError):
        return None


def record(path, key, row):
    row = {**dict(zip(KEY, key, strict=True)), **row, "load": os.getloadavg()[0],
           "commit": _commit(), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    return row


def _show(row):
    ratio = row.get("ratio")
    print(f"{row['design']:8} {row['method']:10} n={row['n']:>7} K={row['K']} C={row['C']:<7g} "
          f"{row.get('seconds', float('nan')):8.2f} s  "
          f"{'' if ratio is None else f'{ratio:7.1f}x'}  {row.get('status')}  "
          f"gap {row.get('gap')}  peak {row.get('peak_mb', float('nan')):.0f} MB", flush=True)


def warm_up(methods):
    """Fit each method once on a tiny problem in this (parent) process.

    The compiled loops of the SMO solver (numba, cached on disk) are loaded on their
    first call in a process, ~0.3 s; forked children inherit them loaded, so each
    row times the fit, not that one-off load (stated with the figures).
    """
    from nordicstats import NORDIC

    X, y = make_design("likert", 60, 3, 0)
    for method in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            NORDIC(y, X, method=method, kernel="rbf", gamma=GAMMA).fit(cov_type="none")
            if method == "nordic2":  # C >= 2: the root LPs' cost path (compiled) too
                NORDIC(y, X, method=method, kernel="rbf", gamma=GAMMA,
                       C=4.0).fit(cov_type="none")


def run_kernel(args):
    path = RESULTS / args.rows
    done = {_key(r) for r in stored(path)}
    warm_up(args.methods)
    for n in args.n:
        for K in args.K:
            for design in args.designs:
                for C in args.C:
                    for method in args.methods:
                        key = ("kernel", design, method, n, K, C, args.seed)
                        if key in done:
                            continue
                        if method == "nordic2" and n > args.max_n_nordic2:
                            continue
                        task = kernel_task(design, method, n, K, C, args.seed, args.limit)
                        _show(record(path, key, isolated(task, args.limit + 30, args.memory_mb)))


def run_linear(args):
    path = RESULTS / "linear.jsonl"
    done = {_key(r) for r in stored(path)}
    for n in args.linear_n:
        for what in ("liblinear", "nordic1", "nordic1+auto_cov"):
            key = ("linear", "likert", what, n, 4, 1.0, args.seed)
            if key not in done:
                task = linear_task(what, n, 4, 1.0, args.seed)
                _show(record(path, key, isolated(task, args.limit, args.memory_mb)))


# --- figures and the summary table -----------------------------------------------------------
def figures(args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in kernel_rows() if "ratio" in r or "seconds" in r]
    FIGURES.mkdir(parents=True, exist_ok=True)
    designs = sorted({r["design"] for r in rows})
    Ks = sorted({r["K"] for r in rows})
    if rows:
        fig, axes = plt.subplots(len(Ks), len(designs), figsize=(4 * len(designs), 3 * len(Ks)),
                                 squeeze=False, sharey=True)
        for (i, K), (j, design) in ((a, b) for a in enumerate(Ks) for b in enumerate(designs)):
            ax = axes[i, j]
            for method in KERNEL_METHODS:
                for n in sorted({r["n"] for r in rows}):
                    sel = sorted((r for r in rows if (r["design"], r["K"], r["method"], r["n"])
                                  == (design, K, method, n) and r.get("ratio")),
                                 key=lambda r: r["C"])
                    if sel:
                        ax.plot([np.log2(r["C"]) for r in sel], [r["ratio"] for r in sel],
                                marker="o" if all(r.get("certified") for r in sel) else "x",
                                color=COLORS[method], ls=_line_style(n),
                                label=f"{method} n={n}")
            ax.axhline(20, color="grey", lw=0.8, ls="--")
            ax.axhline(5, color="grey", lw=0.8, ls=":")
            ax.set(yscale="log", title=f"{design}, K = {K}", xlabel="log2 C")
            if j == 0:
                ax.set_ylabel("time / K-1 libsvm fits")
            ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(FIGURES / "scaling-ratio-vs-C.png", dpi=90)
        plt.close(fig)
        _time_against_n(plt, rows, Ks)
    print(summary_table(rows))
    if args.rows != "kernel.jsonl":
        print(row_table(stored(RESULTS / args.rows)))
    print(linear_table(stored(RESULTS / "linear.jsonl")))
    print(profile_table(stored(RESULTS / "profile_nordic2.jsonl")))
    print(lp_profile_table(stored(RESULTS / "profile_nordic2.jsonl")))
    print(c_grid_table(stored(RESULTS / NORDIC2_ROWS)))


def kernel_rows():
    """The stored kernel rows of :data:`KERNEL_FILES`, a later file's row replacing an
    earlier one of the same key (the rows of the current solvers)."""
    rows = {}
    for name in KERNEL_FILES:
        rows.update((_key(r), r) for r in stored(RESULTS / name))
    return list(rows.values())


COLORS = {"nordic1": "tab:blue", "nordic0": "tab:orange", "nordic2": "tab:green",
          "libsvm": "black"}


def _line_style(n):
    return {1000: "-", 5000: "--"}.get(n, ":")


def _time_against_n(plt, rows, Ks):
    """Seconds against n at C = 1 (``likert`` design), each method and its libsvm baseline."""
    fig, axes = plt.subplots(1, len(Ks), figsize=(4 * len(Ks), 3.2), squeeze=False, sharey=True)
    for ax, K in zip(axes[0], Ks, strict=True):
        sel = [r for r in rows if r["design"] == "likert" and r["K"] == K and r["C"] == 1.0
               and r.get("ratio")]
        for method in KERNEL_METHODS:
            pts = sorted((r["n"], r["seconds"], r["libsvm_seconds"]) for r in sel
                         if r["method"] == method)
            if pts:
                n, t, base = zip(*pts, strict=True)
                ax.plot(n, t, marker="o", color=COLORS[method], label=method)
                ax.plot(n, base, marker=".", ls=":", color=COLORS[method],
                        label=f"K-1 libsvm ({method} run)")
        ax.set(xscale="log", yscale="log", title=f"likert design, K = {K}, C = 1", xlabel="n")
        ax.legend(fontsize=6)
    axes[0, 0].set_ylabel("seconds")
    fig.tight_layout()
    fig.savefig(FIGURES / "scaling-time-vs-n.png", dpi=90)
    plt.close(fig)


def summary_table(rows):
    """Markdown: per design, method, K, n the median and largest ratio over C, certified."""
    lines = ["| design | method | K | n | C values | median ratio | max ratio | certified |",
             "|---|---|---|---|---|---|---|---|"]
    groups = sorted({(r["design"], r["method"], r["K"], r["n"]) for r in rows})
    for g in groups:
        sel = [r for r in rows if (r["design"], r["method"], r["K"], r["n"]) == g]
        ratios = [r["ratio"] for r in sel if r.get("ratio") is not None]
        killed = sum(r.get("status") == "killed_time_limit" for r in sel)
        cert = sum(bool(r.get("certified")) for r in sel)
        med = f"{np.median(ratios):.0f}x" if ratios else "-"
        top = f"{max(ratios):.0f}x" if ratios else "-"
        extra = f" ({killed} killed)" if killed else ""
        lines.append(f"| {g[0]} | {g[1]} | {g[2]} | {g[3]:,} | {len(sel)}{extra} | {med} | "
                     f"{top} | {cert}/{len(sel)} |")
    return "\n".join(lines)


def c_grid_table(rows):
    """Markdown: per design and K, ratio, seconds and nodes at each C (increasing)."""
    lines = ["| design | K | ratio to K-1 libsvm fits (wall) | CPU-time ratio | seconds "
             "| branch-and-bound nodes | certified |", "|---|---|---|---|---|---|---|"]
    for design, K in sorted({(r["design"], r["K"]) for r in rows}):
        sel = sorted((r for r in rows if (r["design"], r["K"]) == (design, K)),
                     key=lambda r: r["C"])
        ratio = " ".join(f"{r['ratio']:.0f}" if r.get("ratio") else "-" for r in sel)
        cpu = " ".join(f"{r['cpu_ratio']:.0f}" if r.get("cpu_ratio") else "-" for r in sel)
        secs = " ".join(f"{r['seconds']:.1f}" if r.get("seconds") else "-" for r in sel)
        nodes = " ".join(str(r.get("iterations", "-")) for r in sel)
        cert = sum(bool(r.get("certified")) for r in sel)
        lines.append(f"| {design} | {K} | {ratio} | {cpu} | {secs} | {nodes} | "
                     f"{cert}/{len(sel)} |")
    return "\n".join(lines)


def row_table(rows):
    """Markdown: one line per stored kernel row (a file given by ``--rows``)."""
    lines = ["| design | n | K | C | solver | seconds | libsvm s | ratio | status | gap | steps "
             "| peak MB |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["n"], r["design"], r["K"], r["C"])):
        ratio = "-" if r.get("ratio") is None else f"{r['ratio']:.1f}"
        gap = "-" if r.get("gap") is None else f"{r['gap']:.1e}"
        lines.append(f"| {r['design']} | {r['n']:,} | {r['K']} | 2^{np.log2(r['C']):g} | "
                     f"{r.get('solver', '-')} | {r.get('seconds', float('nan')):.2f} | "
                     f"{r.get('libsvm_seconds', float('nan')):.3f} | {ratio} | {r['status']} | "
                     f"{gap} | {r.get('iterations', '-')} | {r.get('peak_mb', float('nan')):.0f} |")
    return "\n".join(lines)


def linear_table(rows):
    lines = ["| n | what | seconds | status | gap | max violation | peak MB |",
             "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["n"], r["method"])):
        gap = "" if r.get("gap") is None else f"{r['gap']:.1e}"
        viol = "" if r.get("max_violation") is None else f"{r['max_violation']:.1e}"
        lines.append(f"| {r['n']:,} | {r['method']} | {r.get('seconds', float('nan')):.1f} | "
                     f"{r.get('status')} | {gap} | {viol} | {r.get('peak_mb', 0):.0f} |")
    return "\n".join(lines)


def profile_table(rows):
    """Markdown: the NORDIC-2 profile rows of ``benchmarks/profile_nordic2.py``."""
    lines = ["| K | load | libsvm s | relaxation, full LPs s | relaxation, column generation s "
             "| crossing rows | default fit s (nodes) | ratio | SCIP build s | SCIP solve s "
             "(presolve, nodes) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in (r for r in rows if "relaxation_full_lp" in r):
        lines.append(
            f"| {r['K']} | {r['load']:.1f} | {r['libsvm']:.2f} | {r['relaxation_full_lp']:.1f} "
            f"| {r['relaxation_column_generation']:.1f} | {r['relaxation_crossing_rows']} | "
            f"{r['lazy_total']:.1f} ({r['lazy_nodes']}) | {r['ratio_lazy_to_libsvm']:.0f}x | "
            f"{r['scip_build']:.1f} | {r['scip_solve']:.1f} ({r['scip_presolve']:.1f}, "
            f"{r['scip_nodes']}, {r['scip_status']}) |")
    return "\n".join(lines)


def lp_profile_table(rows):
    """Markdown: where the default NORDIC-2 fit's time goes (rows with the LP counters)."""
    lines = ["| K | C | load | libsvm CPU s | fit CPU s | CPU ratio (wall) | relaxation CPU s; "
             "wall s (HiGHS, pricing, building) | rounds | simplex iterations | rows added / "
             "dropped | B&B CPU s; wall s (HiGHS) | nodes | LP re-solves | B&B rounds | "
             "B&B iterations |", "|" + "---|" * 15]
    for r in (r for r in rows if "default_fit_cpu" in r):
        lines.append(
            f"| {r['K']} | {r['C']:g} | {r['load']:.1f} | {r['libsvm_cpu']:.3f} | "
            f"{r['default_fit_cpu']:.2f} | {r['cpu_ratio_default_fit_to_libsvm']:.0f}x "
            f"({r['ratio_default_fit_to_libsvm']:.0f}x) | {r['default_relaxation_cpu']:.2f}; "
            f"{r['default_relaxation']:.2f} ({r['relaxation_highs_seconds']:.2f}, "
            f"{r['relaxation_pricing_seconds']:.2f}, {r['relaxation_building_seconds']:.2f}) | "
            f"{r['relaxation_runs']} | {r['relaxation_simplex_iterations']} | "
            f"{r['relaxation_rows_added']} / {r['relaxation_rows_dropped']} | "
            f"{r['default_after_relaxation_cpu']:.2f}; {r['default_after_relaxation']:.2f} "
            f"({r['bnb_highs_seconds']:.2f}) | "
            f"{r['default_nodes']} | {r['bnb_solves']} | {r['bnb_runs']} | "
            f"{r['bnb_simplex_iterations']} |")
    return "\n".join(lines)


def main():
    _commit()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("kernel", "linear"), default="kernel")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--figures", action="store_true", help="figures from the stored rows")
    parser.add_argument("--designs", nargs="+", default=["likert", "rare", "overlap"])
    parser.add_argument("--methods", nargs="+", default=list(KERNEL_METHODS),
                        choices=KERNEL_METHODS)
    parser.add_argument("--n", nargs="+", type=int, default=[1000, 5000, 20000])
    parser.add_argument("--K", nargs="+", type=int, default=[3, 5, 7])
    parser.add_argument("--C", nargs="+", type=float, default=list(C_GRID))
    parser.add_argument("--linear-n", nargs="+", type=int, default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", default="kernel.jsonl",
                        help="file of the kernel rows under benchmarks/results/scale (a new "
                             "file keeps the stored rows of an earlier solver for comparison)")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds per fit")
    parser.add_argument("--memory-mb", type=float, default=6000.0,
                        help="address-space limit of each fit's process")
    parser.add_argument("--max-n-nordic2", type=int, default=2000,
                        help="NORDIC-2's SCIP model holds n^2 (K-1) kernel entries")
    args = parser.parse_args()
    if args.quick:
        args.n, args.K, args.C, args.limit = [1000], [3, 5], [2.0**-4, 1.0, 2.0**4], 60.0
        args.linear_n = [100_000]
    if args.figures:
        figures(args)
    elif args.part == "kernel":
        run_kernel(args)
    else:
        run_linear(args)


if __name__ == "__main__":
    main()
