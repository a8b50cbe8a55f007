"""The experiment runner behind the paper's comparisons (Sections 6 and 7).

A study is designs x methods x replications.  One task is one
``(design, method, replication)``: draw the data of the replication, tune the
method (:func:`nordicstats.tuning.tune`, the paper's grid on the tuning set or by
CV), refit, and score on the test set.  Tasks run through joblib (``n_jobs``;
``backend="dask"`` sends them to a ``dask.distributed`` cluster), with a tqdm
progress bar, and every finished row is appended at once to a JSON-lines file.
Re-running the same call resumes: the ``(design, method, replication)`` keys
already in the file with ``status == "ok"`` are skipped.  Every row carries a
fingerprint of its design, method and tuning settings (:func:`configuration`),
and resuming from a file written with other settings or another seed is refused.

Seeds.  Replication ``r`` of a study with seed ``s`` draws its data from the
seed ``SeedSequence(s, spawn_key=(r,))`` (and its CV folds from a second word of
the same sequence), so every method sees the same data in a replication, every
design shares the replication's seed (common random numbers), and the rows do
not depend on ``n_jobs``, the backend or the order in which tasks finish.

Each row holds the design's parameters (``n``; ``d``, ``sigma``), the selected
``C`` and ``gamma``, the tuning score, the test ``error``, ``mae`` and (with a
cost matrix) ``weighted_error``, the test ``confusion`` counts (rows = true,
columns = predicted), the timings and a ``status``/``message``.  Solver
certificates: ``solver_status`` and ``solver_gap`` of the refit (NORDIC methods;
``"optimal"`` only when certified, None for the competitors) and
``solver_warnings``, the number of fits of the task (tuning grid and refit)
that stopped with a :class:`~nordicstats.exceptions.SolverLimitWarning`.  Timings:
wall seconds ``tune_time``, ``fit_time``, ``total_time``; ``cpu_time``, the task's
CPU seconds (what it costs on an idle core); ``load``, the 1-minute load average
when the task finished (wall times on a shared machine grow with it).

Cost-sensitive training.  ``cost="train"`` fits NORDIC's methods with the scoring
cost matrix ``costs`` (hinge weights ``|cost[l, k+1] - cost[l, k]|``, see
:mod:`nordicstats.weighting`), so that they are trained on the loss they are scored
on; a matrix trains with that matrix.  Competitors have no cost option and are
trained as before; the row's ``cost_trained`` says which was done.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nordicstats import datasets, metrics
from nordicstats.compare import NORDIC_METHODS, make_classifier
from nordicstats.datasets import load_balance_scale, stratified_split
from nordicstats.exceptions import SolverLimitWarning, missing_dependency
from nordicstats.tuning import PAPER_C_GRID, PAPER_WIDTH_QUANTILES, default_grid, tune

__all__ = [
    "PAPER_METHODS",
    "Design",
    "Method",
    "Split",
    "balance_scale_design",
    "simulation_design",
    "replication_seeds",
    "run_task",
    "run_study",
    "load_results",
    "read_rows",
    "summarize",
    "confusion_summary",
    "configuration",
]

#: The paper's method labels -> names for :func:`nordicstats.compare.make_classifier`.
PAPER_METHODS = {
    "NORDIC-0": "nordic0",
    "NORDIC-1": "nordic1",
    "NORDIC-2": "nordic2",
    "BSVM": "bsvm",
    "DR": "dr",
    "CK": "ck",
    "SVR": "svr",
    "OLR": "ologit",
}

KEY = ("design", "method", "rep")
_TIMING_COLUMNS = ("tune_time", "fit_time", "total_time", "cpu_time", "load")  # vary by run
_RESERVED = {"design", "method", "rep", "seed", "config", "C", "gamma", "tuning_score",
             "error", "mae", "weighted_error", "confusion", "levels", "n_train", "n_tune",
             "n_test", "status", "message", "warnings", "traceback", "solver_status",
             "solver_gap", "solver_warnings", *_TIMING_COLUMNS}


@dataclass(frozen=True)
class Split:
    """Training, tuning and test data of one replication (tuning part may be None)."""

    X_train: object
    y_train: object
    X_tune: object
    y_tune: object
    X_test: object
    y_test: object


@dataclass(frozen=True)
class Design:
    """A data-generating design.

    Attributes
    ----------
    name : str
        Row label, e.g. ``"n=52"`` or ``"donut d=25 sigma=0.4"``.
    sampler : callable
        Module-level function ``sampler(random_state=..., **params) -> Split``
        (module-level so that it pickles to worker processes).
    params : dict
        Keyword arguments of ``sampler``; recorded in every row.
    """

    name: str
    sampler: object
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        clash = _RESERVED.intersection(self.params)
        if clash:
            raise ValueError(f"design {self.name!r} has parameters named {sorted(clash)}, which "
                             f"are row columns of the runner; rename them.")

    def sample(self, random_state):
        """Draw the replication's :class:`Split`."""
        return self.sampler(random_state=random_state, **self.params)


@dataclass(frozen=True)
class Method:
    """A classifier of the study.

    Attributes
    ----------
    label : str
        Row label, e.g. ``"NORDIC-2"``.
    name : str
        Name for :func:`nordicstats.compare.make_classifier`.
    params : dict
        Fixed keyword arguments (e.g. solver options).
    grid : dict or None
        Tuning grid; None = the paper's grid for the parameters it has.
    """

    label: str
    name: str
    params: dict = field(default_factory=dict)
    grid: dict | None = None

    def factory(self, **params):
        """A fresh classifier with the fixed and the given parameters."""
        return make_classifier(self.name, **{**self.params, **params})


def _balance_split(n, random_state=None):
    data = load_balance_scale()
    X, y = data.drop(columns="balance"), data["balance"]
    train, tuning, test = stratified_split(y, [n, n], random_state=random_state)
    part = lambda index: (X.iloc[index].reset_index(drop=True),  # noqa: E731
                          y.iloc[index].reset_index(drop=True))
    return Split(*part(train), *part(tuning), *part(test))


def _simulated_split(kind, d, sigma, train_size=100, tune_size=100, test_size=10000,
                     random_state=None):
    generator = {"nonlinear": datasets.make_nonlinear, "donut": datasets.make_donut}[kind]
    rng = np.random.default_rng(random_state)
    parts = [generator(size, d=d, sigma=sigma, random_state=rng) if size else (None, None)
             for size in (train_size, tune_size, test_size)]
    return Split(*parts[0], *parts[1], *parts[2])


def balance_scale_design(n, name=None):
    """Section 7: ``n`` training and ``n`` tuning points, the rest (625 - 2n) for testing.

    The split is stratified (:func:`nordicstats.datasets.stratified_split`).
    """
    if not 1 <= int(n) <= 312:
        raise ValueError(f"n must be in 1..312 so that 2n <= 625 leaves a test set; got {n!r}.")
    return Design(name or f"n={int(n)}", _balance_split, {"n": int(n)})


def simulation_design(kind, d, sigma, n_train=100, n_tune=100, n_test=10000, name=None):
    """Section 6: the nonlinear (``kind="nonlinear"``) or donut (``"donut"``) design.

    ``n_tune=0`` drops the tuning set (tune by CV instead).
    """
    if kind not in ("nonlinear", "donut"):
        raise ValueError(f"The 'kind' parameter must be 'nonlinear' or 'donut'. Got {kind!r}.")
    params = {"kind": kind, "d": int(d), "sigma": float(sigma), "train_size": int(n_train),
              "tune_size": int(n_tune), "test_size": int(n_test)}
    return Design(name or f"{kind} d={int(d)} sigma={float(sigma):g}", _simulated_split, params)


def replication_seeds(seed, rep):
    """``(data_seed, cv_seed)`` of replication ``rep``: ``SeedSequence(seed, spawn_key=(rep,))``.

    Examples
    --------
    >>> replication_seeds(1, 0) == replication_seeds(1, 0) != replication_seeds(1, 1)
    True
    """
    words = np.random.SeedSequence(int(seed), spawn_key=(int(rep),)).generate_state(2)
    return int(words[0]), int(words[1])


def _as_methods(methods):
    if isinstance(methods, dict):
        methods = [Method(label, name) for label, name in methods.items()]
    out = []
    for m in methods:
        if isinstance(m, str):
            labels = {v: k for k, v in PAPER_METHODS.items()}
            m = Method(labels.get(m, m), m)
        if not isinstance(m, Method):
            raise TypeError(f"methods must be Method objects, names or a {{label: name}} dict; "
                            f"got {type(m).__name__}.")
        out.append(m)
    _check_unique([m.label for m in out], "method labels")
    return out


def _check_unique(names, what):
    repeated = sorted({x for x in names if names.count(x) > 1})
    if repeated:
        raise ValueError(f"{what} must be unique; {repeated} repeated.")


def run_task(design, method, rep, seed, scoring="error", costs=None, cv=None,
             C_grid=PAPER_C_GRID, width_quantiles=PAPER_WIDTH_QUANTILES, cost=None):
    """Run one ``(design, method, replication)`` and return its row (a dict).

    ``cost`` (None, ``"train"`` or a matrix): the cost NORDIC's methods are trained
    with (see the module docstring).

    Errors inside the task are recorded (``status="failed"`` and the message)
    rather than raised, so one failure does not stop a long study.
    """
    data_seed, cv_seed = replication_seeds(seed, rep)
    row = {"design": design.name, "method": method.label, "rep": int(rep), "seed": int(seed),
           **design.params,
           "config": configuration(design, method, scoring=scoring, costs=costs, cv=cv,
                                   C_grid=C_grid, width_quantiles=width_quantiles,
                                   **({} if cost is None else {"cost": cost}))}
    start, start_cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            split = design.sample(data_seed)
            row.update(_tune_and_test(split, _cost_trained(method, cost, costs), scoring, costs,
                                      cv, cv_seed, C_grid, width_quantiles))
            row["cost_trained"] = _cost_trained(method, cost, costs) is not method
            row.update(status="ok", message="")
        except Exception as exc:  # noqa: BLE001 - recorded in the row, see docstring
            row.update(status="failed", message=f"{type(exc).__name__}: {exc}",
                       traceback=traceback.format_exc(limit=5))
    row["warnings"] = sorted({f"{w.category.__name__}: {str(w.message)[:200]}" for w in caught})
    # fits (tuning grid or refit) whose solver stopped without a certificate
    row["solver_warnings"] = sum(issubclass(w.category, SolverLimitWarning) for w in caught)
    row["total_time"] = time.perf_counter() - start
    row["cpu_time"] = time.process_time() - start_cpu  # this process's CPU: load-independent
    row["load"] = os.getloadavg()[0]  # the machine's 1-minute load when the task finished
    return row


def _cost_trained(method, cost, costs):
    """``method`` with ``cost`` among its fixed parameters (NORDIC's methods only)."""
    if cost is None or method.name not in NORDIC_METHODS:
        return method
    if isinstance(cost, str):
        if cost != "train" or costs is None:
            raise ValueError(f"The 'cost' parameter of the runner must be None, 'train' (train "
                             f"with the scoring matrix 'costs', which must then be given) or a "
                             f"cost matrix. Got {cost!r} with costs={costs!r}.")
        cost = costs
    return Method(method.label, method.name, {**method.params, "cost": cost}, method.grid)


def _tune_and_test(split, method, scoring, costs, cv, cv_seed, C_grid, width_quantiles):
    grid = method.grid if method.grid is not None else default_grid(
        method.factory, split.X_train, C_grid, width_quantiles)
    holdout = split.X_tune is not None and cv is None
    start = time.perf_counter()
    res = tune(method.factory, split.X_train, split.y_train, param_grid=grid,
               X_tune=split.X_tune if holdout else None, y_tune=split.y_tune if holdout else None,
               cv=None if holdout else (cv or 5), scoring=scoring, random_state=cv_seed,
               refit=False)
    tune_time = time.perf_counter() - start
    start = time.perf_counter()
    fitted = method.factory(**res.best_params).fit(split.X_train, split.y_train)
    pred = fitted.predict(split.X_test)
    fit_time = time.perf_counter() - start
    # the refit's certificate (NORDIC methods; competitors have no SolverResult)
    solver_result = getattr(getattr(fitted, "results_", None), "solver_result", None)
    levels = list(split.y_test.cat.categories)
    out = {"n_train": len(split.y_train), "n_tune": 0 if split.y_tune is None or not holdout
           else len(split.y_tune), "n_test": len(split.y_test),
           "C": res.best_params.get("C", np.nan), "gamma": res.best_params.get("gamma", np.nan),
           "tuning_score": res.best_score,
           "error": metrics.error_rate(split.y_test, pred),
           "mae": metrics.mean_absolute_error(split.y_test, pred, labels=levels)}
    if costs is not None:
        out["weighted_error"] = metrics.weighted_error(split.y_test, pred, costs)
    counts = metrics.confusion_matrix(split.y_test, pred, labels=levels)
    out.update(confusion=counts.to_numpy().tolist(), levels=[str(v) for v in levels],
               tune_time=tune_time, fit_time=fit_time,
               solver_status=None if solver_result is None else solver_result.status,
               solver_gap=np.nan if solver_result is None else float(solver_result.gap))
    return out


def run_study(designs, methods, n_reps, *, seed=0, path=None, n_jobs=1, backend=None,
              scoring="error", costs=None, cv=None, C_grid=PAPER_C_GRID,
              width_quantiles=PAPER_WIDTH_QUANTILES, exclude=(), time_limit=None,
              progress=True, cost=None):
    """Run (or resume) a designs x methods x replications study.

    Parameters
    ----------
    designs : sequence of Design
    methods : sequence of Method or str, or dict {label: make_classifier name}
    n_reps : int
        Replications 0..n_reps-1.
    seed : int, default=0
        Study seed; replication seeds come from :func:`replication_seeds`.
    path : str or os.PathLike, optional
        JSON-lines file; each finished row is appended (and flushed) at once.
        Rows already there with status "ok" are skipped (resume).
    n_jobs : int, default=1
        joblib workers (-1: all cores).
    backend : {None, "loky", "threading", "dask"}, optional
        joblib backend; "dask" needs a running ``dask.distributed.Client``
        (``Client()`` starts a local cluster, ``Client("tcp://host:8786")``
        connects to one).
    scoring : {"error", "mae"} or cost matrix, default="error"
        Tuning criterion (:func:`nordicstats.tuning.make_scorer`).
    costs : cost matrix, optional
        Also record the test ``weighted_error`` with these costs.
    cv : int, optional
        Tune by stratified ``cv``-fold CV even when the design has a tuning set.
    C_grid, width_quantiles : sequences
        The tuning grid (paper: 2^-4..2^4 and the 10/50/90% distance quantiles).
    exclude : iterable of (design name, method label), optional
        Cells of the designs x methods table not to run.
    time_limit : float, optional
        Seconds after which no new task is started; running tasks finish and
        are written.  Call again (same arguments) to go on from there.
    progress : bool, default=True
        Show a tqdm progress bar.
    cost : None, "train" or cost matrix, optional
        Train NORDIC's methods with this cost matrix; ``"train"`` uses ``costs``.

    Returns
    -------
    pandas.DataFrame
        The study's rows (resumed and new), sorted by design, method and replication.
    """
    designs, methods = list(designs), _as_methods(methods)
    _check_unique([d.name for d in designs], "design names")
    if isinstance(n_reps, bool) or not isinstance(n_reps, (int, np.integer)) or n_reps < 1:
        raise ValueError(f"The 'n_reps' parameter must be an int >= 1. Got {n_reps!r} instead.")
    exclude = _check_exclude(exclude, designs, methods)
    options = dict(seed=seed, scoring=scoring, costs=costs, cv=cv, C_grid=tuple(C_grid),
                   width_quantiles=tuple(width_quantiles))
    if cost is not None:  # only then, so that the fingerprints of unit-cost studies stay
        _cost_trained(Method("check", "nordic1"), cost, costs)
        options["cost"] = cost
    done = _finished_keys(path, seed, designs, methods, options)
    tasks = [(d, m, r) for r in range(n_reps) for d in designs for m in methods
             if (d.name, m.label, r) not in done and (d.name, m.label) not in exclude]
    if time_limit is not None and not (np.isfinite(time_limit) and time_limit > 0):
        raise ValueError(f"The 'time_limit' parameter must be a positive number of seconds. "
                         f"Got {time_limit!r} instead.")
    rows = _execute(tasks, options, path, n_jobs, backend, progress, time_limit)
    table = pd.DataFrame.from_records(read_rows(path) if path is not None else rows)
    if table.empty:
        return pd.DataFrame(columns=list(KEY))
    table = table.drop_duplicates(list(KEY), keep="last")
    wanted = {(d.name, m.label, r) for d in designs for m in methods for r in range(n_reps)
              if (d.name, m.label) not in exclude}
    keys = zip(table["design"], table["method"], table["rep"], strict=True)
    keep = [key in wanted for key in keys]
    return _sort(table[keep], [d.name for d in designs], [m.label for m in methods])


def _check_exclude(exclude, designs, methods):
    cells = {(d.name, m.label) for d in designs for m in methods}
    exclude = {tuple(cell) for cell in exclude}
    unknown = sorted(exclude - cells)
    if unknown:
        raise ValueError(f"exclude lists cells {unknown} that are not (design name, method "
                         f"label) pairs of this study; designs {[d.name for d in designs]}, "
                         f"methods {[m.label for m in methods]}.")
    return exclude


def _dispatch(tasks, options, time_limit):
    """Tasks for joblib, which draws them lazily: none is started after the deadline."""
    from joblib import delayed

    deadline = None if time_limit is None else time.monotonic() + float(time_limit)
    for d, m, r in tasks:
        if deadline is not None and time.monotonic() > deadline:
            return
        yield delayed(run_task)(d, m, r, **options)


def _execute(tasks, options, path, n_jobs, backend, progress, time_limit=None):
    from joblib import Parallel, parallel_config
    from tqdm.auto import tqdm

    if backend == "dask":
        _require_dask_client()
    elif backend not in (None, "loky", "threading", "multiprocessing"):
        raise ValueError(f"The 'backend' parameter must be None, 'loky', 'threading', "
                         f"'multiprocessing' or 'dask'. Got {backend!r} instead.")
    rows = []
    with parallel_config(backend=backend) if backend else contextlib.nullcontext():
        runner = Parallel(n_jobs=-1 if backend == "dask" else n_jobs,
                          return_as="generator_unordered")
        results = runner(_dispatch(tasks, options, time_limit))
        for row in tqdm(results, total=len(tasks), disable=not progress or not tasks,
                        desc="study", unit="fit"):
            if path is not None:
                _append_row(path, row)
            rows.append(row)
    return rows


def _require_dask_client():
    try:
        from distributed import get_client
    except ImportError as exc:
        raise missing_dependency("distributed", "dask", "backend='dask'") from exc
    try:
        get_client()
    except ValueError as exc:
        raise ValueError("backend='dask' needs a running dask.distributed Client: start one "
                         "with `from distributed import Client; client = Client()` (local "
                         "cluster) or Client('tcp://scheduler:8786').") from exc


def _append_row(path, row):
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, default=_json_default) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _json_default(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} in a results row")


def read_rows(path):
    """Complete rows of a results file written by :func:`run_study` (JSON lines).

    A torn last line (a write interrupted by a crash or a kill) is cut off the file,
    so the next resume appends after the last complete row.

    Parameters
    ----------
    path : str or os.PathLike or None
        The JSON-lines file; None or a missing file gives no rows.

    Returns
    -------
    list of dict
        One dict per complete line, in file order.
    """
    if path is None or not os.path.exists(path):
        return []
    with open(path, "rb") as handle:
        data = handle.read()
    complete = data[: data.rfind(b"\n") + 1]
    if len(complete) != len(data):
        with open(path, "r+b") as handle:
            handle.truncate(len(complete))
    return [json.loads(line) for line in complete.decode("utf-8").splitlines() if line.strip()]


def _finished_keys(path, seed, designs, methods, options):
    """Keys already done; refuses a file written with another seed or configuration."""
    rows = read_rows(path)
    seeds = {row["seed"] for row in rows}
    if seeds and seeds != {int(seed)}:
        raise ValueError(f"{path} holds rows of a study with seed {sorted(seeds)}, not seed="
                         f"{seed}; resume with the same seed or use another file.")
    options = {k: v for k, v in options.items() if k != "seed"}
    expected = {(d.name, m.label): configuration(d, m, **options) for d in designs
                for m in methods}
    for r in rows:
        cell = (r["design"], r["method"])
        if cell in expected and r.get("config") != expected[cell]:
            raise ValueError(f"{path} holds a row for {cell} (rep {r['rep']}) run with other "
                             "design, method or tuning settings than this call; resume with the "
                             "same arguments or use another file.")
    return {(r["design"], r["method"], r["rep"]) for r in rows if r.get("status") == "ok"}


def configuration(design, method, **options):
    """Short fingerprint of everything but the seed that determines a row (checked on resume)."""
    def plain(value):
        if isinstance(value, pd.DataFrame):
            return {"index": list(map(str, value.index)), "values": value.to_numpy().tolist()}
        if isinstance(value, np.ndarray):
            return value.tolist()
        return repr(value)

    spec = {"design": [design.name, getattr(design.sampler, "__qualname__", "?"),
                       design.params],
            "method": [method.label, method.name, method.params, method.grid], **options}
    text = json.dumps(spec, sort_keys=True, default=plain)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def load_results(path):
    """Read a study's JSON-lines file as a DataFrame (the last row of each key wins)."""
    rows = read_rows(path)
    if not rows:
        raise ValueError(f"{path} holds no result rows.")
    table = pd.DataFrame.from_records(rows)
    return table.drop_duplicates(list(KEY), keep="last").reset_index(drop=True)


def _sort(table, design_order, method_order):
    d = table["design"].map({name: i for i, name in enumerate(design_order)})
    m = table["method"].map({name: i for i, name in enumerate(method_order)})
    order = np.lexsort((table["rep"].to_numpy(), m.to_numpy(), d.to_numpy()))
    return table.iloc[order].reset_index(drop=True)


def summarize(results, metric="error", by=("design", "method")):
    """Mean, standard error and count of ``metric`` per group (successful rows only).

    Returns
    -------
    pandas.DataFrame
        Columns ``mean``, ``se`` (sample sd / sqrt(count)) and ``count``, in the
        order in which the groups first appear in ``results``.
    """
    if metric not in results:
        raise ValueError(f"results have no column {metric!r}; columns: {list(results.columns)}.")
    ok = results[results["status"] == "ok"]
    grouped = ok.groupby(list(by), sort=False)[metric]
    table = grouped.agg(["mean", "std", "count"])
    table["se"] = table.pop("std") / np.sqrt(table["count"])
    return table[["mean", "se", "count"]]


def confusion_summary(results, by=("design", "method")):
    """The paper's confusion view averaged over replications.

    For each group, entry ``(k, l)`` is the mean over replications of the
    proportion of test observations of class ``l`` classified to class ``k``
    (Section 6.2): columns sum to one.

    Returns
    -------
    pandas.DataFrame
        Long format: the ``by`` columns, ``predicted``, ``true`` and ``proportion``.
    """
    ok = results[results["status"] == "ok"]
    records = []
    for keys, group in ok.groupby(list(by), sort=False):
        counts = np.array(group["confusion"].tolist(), dtype=float)  # (reps, true, pred)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = counts / counts.sum(axis=2, keepdims=True)
        mean = np.nanmean(share, axis=0)
        levels = group["levels"].iloc[0]
        group_keys = dict(zip(by, keys if isinstance(keys, tuple) else (keys,), strict=True))
        for l_true, true in enumerate(levels):
            for k_pred, pred in enumerate(levels):
                records.append({**group_keys,
                                "predicted": pred, "true": true,
                                "proportion": mean[l_true, k_pred]})
    return pd.DataFrame.from_records(records)
