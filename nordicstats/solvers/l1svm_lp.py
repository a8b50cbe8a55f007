"""One boundary's L1-SVM LP, solved through its dual by cutting planes in HiGHS.

NORDIC-2's relaxation (paper, Section 4, without the logical constraints) splits into
K-1 L1-SVM LPs; for boundary k with slack costs u = C c_k (primal)::

    min  ||theta||_1 + u'xi
    s.t. y_i (Z_i theta + b) + xi_i >= 1,   xi >= 0,                                (hinge)
         s_r (Z_{i_r} theta + b) >= h_r     for the active sign rows r,

where a sign row states f(x_i) >= 0 (s = +1, h = 0) or f(x_i) <= -delta (s = -1,
h = delta): the branches of NORDIC-2's disjunctions (:mod:`nordicstats.solvers.lazy_mip`).
With row multipliers mu (hinge) and nu >= 0 (sign rows), and
v = Y mu + sum_r s_r nu_r e_{i_r}, its LP dual is::

    max  1'mu + h'nu
    s.t. 1'v = 0                       (b)
         -1 <= (Z'v)_j <= 1            (theta_j), j = 1, ..., p
         0 <= mu_i <= u_i,  nu >= 0,

and theta_j, b are the multipliers of its rows.  This is the LP that HiGHS solves:
its basis has one row per theta coordinate in the LP and the n box-bounded mu are
handled by bound flips, where the primal's basis has n rows and twice the dense
columns (theta+ and theta-); the dual simplex took about a tenth of the iterations
and a third of the time of the primal on the same columns (``docs/notes/scaling.md``).

With a kernel Z = K has n dense columns, but the l1 penalty makes the optimal theta
sparse (26-50 nonzeros of 1,000 at n = 1,000, K = 5, C = 1).  So the dual starts
with the row of b only and a row j enters (a cutting plane; in the primal, column
theta_j enters) when ``|(Z'v)_j| > 1 + PRICING_TOL``; once none does, the
restricted dual's optimum is feasible for every row, and the full LP's optimum.
Added rows keep the basis dual feasible, so HiGHS's dual simplex restarts from it.
Sign rows are nu columns fixed at 0 when switched off (bounds only); slack costs are
the upper bounds of mu (a C grid); every restart is warm.  Rows whose slack is basic
(theta_j = 0) are deleted before new ones come in, each row once at most, so the LP
stays near the support without cycling; not while sign rows are active (a branch and
bound re-solve adds a few rows per round, and dropped rows came back).  A restricted
dual that sign rows make unbounded (the restricted primal is infeasible) gets the rows
that cut HiGHS's ray (Farkas pricing); when no row does, the ray proves the node
infeasible.

The relaxation's LPs at larger costs (C >= ``PATH_MIN_COST``) are not solved from
scratch: the LP is solved at 1/16 of its costs (few rows, few iterations), and its
optimal basis followed along the solution path in the costs to the target by
parametric pivots (:mod:`nordicstats.solvers.l1svm_path`, compiled).  The end basis is
checked afresh (:func:`~nordicstats.solvers.l1svm_certificate.certify_basis`: a fresh
factorisation of the basis matrix, the KKT conditions of the whole LP at 1e-9 relative);
when the check passes its vertex is the optimum and HiGHS is not run, otherwise HiGHS is
handed the end basis and confirms it (mostly no iteration) and pricing checks every row
as before.
At n = 1,000, C = 2^3-2^4 this halves the root LPs' time (``docs/notes/scaling.md``).
The path follows the LP with its margins perturbed by ``PATH_PERTURBATION``, so that
a degenerate start (theta = 0 with a whole class on the margin, the unbalanced outer
boundaries) does not stall it; a path that gives up all the same leaves HiGHS to go on
from the start's basis.

The branch and bound's re-solves (sign rows switched on or off) start the same way:
from the nearest optimal basis the LP has kept (mostly the node's parent's), the switched
rows' margins are followed to their values by parametric pivots
(:func:`~nordicstats.solvers.l1svm_margin_path.follow_margin_path`), and the end basis is
checked afresh the same way, HiGHS confirming it only when the check fails; a path that
gives up or meets an infeasible row leaves HiGHS to go on from its own basis.  At
n = 1,000, C = 2^4 the margin path halves the branch and bound and skipping HiGHS's
confirming runs takes off another 35-40% (``docs/notes/scaling.md``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from nordicstats.exceptions import SolverError
from nordicstats.solvers.l1svm_certificate import certify_basis
from nordicstats.solvers.l1svm_margin_path import follow_margin_path
from nordicstats.solvers.l1svm_path import follow_cost_path

__all__ = ["BoundaryLP", "LPStats", "SignRowPoints", "quiet_highs", "HIGHS_OPTIONS",
           "PRICING_TOL", "COLUMN_BATCH", "DROP_SLACK_ROWS", "RAY_TOL", "PATH_MIN_COST",
           "PATH_START_FRACTION", "USE_COST_PATH", "PATH_PERTURBATION", "USE_MARGIN_PATH",
           "MARGIN_PATH_MAX_STEPS", "SIGN_ROW_BLOCK", "SELF_CERTIFY"]

HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9}
#: Row j (theta_j) enters when ``|(Z'v)_j|`` exceeds 1 by more than this (HiGHS's tolerance).
PRICING_TOL = 1e-9
#: Most rows added per pricing round (the most violated first).
COLUMN_BATCH = 100
#: A ray of the restricted dual certifies infeasibility when every ``|(Z'v_d)_j|`` is below
#: this times the sum of the magnitudes of its terms (cancellation to rounding).
RAY_TOL = 1e-9
#: Delete rows whose slack is basic before adding new ones (each theta_j once at most),
#: while no sign row is active: in the relaxation, not in the branch and bound's
#: re-solves, which add a few rows per round and would take the same rows in again
#: (``docs/notes/scaling.md``).
DROP_SLACK_ROWS = True
#: A relaxation LP whose largest slack cost is at least this is solved at
#: ``PATH_START_FRACTION`` times its costs first and followed from there along its
#: solution path (:mod:`nordicstats.solvers.l1svm_path`; ``docs/notes/scaling.md``).
PATH_MIN_COST = 2.0
PATH_START_FRACTION = 1.0 / 16.0
USE_COST_PATH = True
#: The path follows the LP with margins moved by this much (times 1-2, away from each
#: nonbasic point's side; :func:`~nordicstats.solvers.l1svm_path.margin_perturbation`):
#: a degenerate start (theta = 0, a whole class on the margin) no longer stalls it.
#: At 1e-7 one boundary of 42 (``overlap``, K = 7, C = 2^4) still stalled: a point
#: that drifted 5e-9 across its moved margin in the incremental updates of f blocked
#: 51 edges at length 0; 1e-6 and 1e-5 followed it with the same HiGHS iterations.
PATH_PERTURBATION = 1e-6
#: A re-solve whose sign rows differ from those of the LP's last optimum (the branch and
#: bound's children) follows the margins of the switched rows from that optimum
#: (:func:`~nordicstats.solvers.l1svm_margin_path.follow_margin_path`); the end basis is
#: checked (``SELF_CERTIFY``) or confirmed by HiGHS, which goes on from its own basis when
#: the path gives up (``docs/notes/scaling.md``).
USE_MARGIN_PATH = True
#: A path's end basis whose optimality :func:`~nordicstats.solvers.l1svm_certificate.certify_basis`
#: checks afresh (every point, sign row and coordinate, 1e-9 relative) is the LP's optimum
#: without HiGHS's confirming run; a basis that fails the check goes to HiGHS as before.
SELF_CERTIFY = True
#: Most breakpoints of a margin path (None: n); it gives up beyond (HiGHS goes on).
MARGIN_PATH_MAX_STEPS = None
#: Sign-row entries of the extended Z kept beyond those in use (grown in blocks).
SIGN_ROW_BLOCK = 32
#: The start's simplex iterations per HiGHS run are capped at this times n: at small
#: costs the LP can be degenerate enough for HiGHS's dual simplex to cycle (seen on the
#: ``overlap`` design with the neighbouring boundary's rows); the LP is then solved cold.
PATH_START_ITERATIONS = 5
NO_ITERATION_LIMIT = 2**31 - 1  # HiGHS's default simplex_iteration_limit


def quiet_highs(highspy):
    """A HiGHS instance with its output off before any HiGHS call.

    ``highspy.Highs()`` enables its Python callbacks in the constructor, a HiGHS call
    that prints the version banner while ``output_flag`` still has its default (True);
    the core class it extends makes no call until asked, so it honours the option set
    first.  Falls back to ``highspy.Highs`` where the core class is not exposed.
    """
    core = getattr(getattr(highspy, "_core", None), "_Highs", None)
    lp = highspy.Highs() if core is None else core()
    lp.setOptionValue("output_flag", False)
    return lp


@dataclass
class LPStats:
    """Where a :class:`BoundaryLP`'s time went (summed over its solves).

    Attributes
    ----------
    solves : int
        Calls of ``solve`` that ran HiGHS (a solve with nothing changed since the last
        one returns the stored optimum and is not counted).
    runs, simplex_iterations : int
        HiGHS runs (one per pricing round) and their simplex iterations.
    rows_added, rows_dropped : int
        Rows (Z'v)_j put into and deleted from the dual.
    highs_seconds, pricing_seconds, building_seconds : float
        Wall-clock seconds in HiGHS's simplex, in pricing (Z'v and the choice of
        rows), and in building and passing rows and columns to HiGHS.
    path_steps, path_fallbacks : int
        Breakpoints passed along the cost path (:mod:`nordicstats.solvers.l1svm_path`)
        and paths that gave up (the LP then solved by the dual simplex alone).
    path_seconds : float
        Wall-clock seconds in the cost path.
    margin_paths, margin_path_steps, margin_path_fallbacks : int
        Re-solves started along the sign rows' margins, their breakpoints, and those
        that gave up (HiGHS then went on from the previous optimum's basis).
    margin_path_seconds : float
        Wall-clock seconds in the margin paths (reading the basis included).
    self_certified, highs_confirmed : int
        Path ends (cost or margin path) whose optimality the fresh check
        (:func:`~nordicstats.solvers.l1svm_certificate.certify_basis`) certified, HiGHS
        not run; and those handed to HiGHS to confirm (the check failed or is off).
    certificate_seconds : float
        Wall-clock seconds in those checks.
    """

    solves: int = 0
    runs: int = 0
    simplex_iterations: int = 0
    rows_added: int = 0
    rows_dropped: int = 0
    highs_seconds: float = 0.0
    pricing_seconds: float = 0.0
    building_seconds: float = 0.0
    path_steps: int = 0
    path_fallbacks: int = 0
    path_seconds: float = 0.0
    margin_paths: int = 0
    margin_path_steps: int = 0
    margin_path_fallbacks: int = 0
    margin_path_seconds: float = 0.0
    self_certified: int = 0
    highs_confirmed: int = 0
    certificate_seconds: float = 0.0


class SignRowPoints:
    """Z with one more row per sign row (i, s): the margin path's points, shared by LPs.

    :func:`~nordicstats.solvers.l1svm_margin_path.follow_margin_path` reads a sign row as one
    more point (Z_i's row, label s).  The K-1 LPs of one fit share Z, so they share
    these arrays: entry n + e is the e-th sign row (i, s) asked for by any of them (an
    LP's path marks the others' entries switched off).  Z and its transpose (the compiled
    path reads both) are grown in blocks of ``SIGN_ROW_BLOCK`` entries; unused entries
    are zero.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
    """

    def __init__(self, Z):
        self.Z = Z
        self._entry = {}  # (i, s) -> entry
        self._filled = 0
        self._matrices = None

    def entries(self, keys):
        """Entries (n + e) of the sign rows ``keys``, new ones appended."""
        n = self.Z.shape[0]
        for key in keys:
            self._entry.setdefault(key, n + len(self._entry))
        return np.array([self._entry[key] for key in keys], dtype=np.int64)

    def matrices(self):
        """(Z with the entries' rows, its transpose), both C-contiguous."""
        n, p = self.Z.shape
        if self._matrices is None or self._matrices[0].shape[0] < n + len(self._entry):
            size = n + len(self._entry) + SIGN_ROW_BLOCK
            Z, ZT = np.zeros((size, p)), np.zeros((p, size))
            Z[:n], ZT[:, :n] = self.Z, self.Z.T
            self._matrices, self._filled = (Z, ZT), 0
        Z, ZT = self._matrices
        if self._filled < len(self._entry):
            keys = sorted(self._entry, key=self._entry.get)[self._filled:]
            block = self.Z[[i for i, _ in keys]]
            Z[n + self._filled:n + len(keys) + self._filled] = block
            ZT[:, n + self._filled:n + len(keys) + self._filled] = block.T
            self._filled = len(self._entry)
        return Z, ZT


class BoundaryLP:
    """The L1-SVM LP of one boundary (see the module docstring), kept warm in HiGHS.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        f(x_i) = Z_i theta + b (the kernel matrix, or X for a linear problem).
    y : ndarray of shape (n,)
        Signs y_i^(k) in {-1, +1}.
    sign_row_points : SignRowPoints, optional
        Z's rows for the sign rows of the margin path, shared by the LPs of one Z (the
        K-1 boundaries of a fit); by default this LP's own.

    Attributes
    ----------
    columns : list of int
        The theta coordinates j in the LP (the rows (Z'v)_j of the dual).
    sign_rows : dict
        (i, s) -> index of nu_r among the dual's variables.
    stats : LPStats
        Counts and seconds of the solves so far.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> lp = BoundaryLP(Z, np.array([-1.0, -1.0, 1.0, 1.0]))
    >>> theta, b, objective = lp.solve(np.full(4, 10.0))
    >>> round(objective, 6), np.round(theta, 6).tolist(), round(b, 6)
    (2.0, [2.0], -3.0)
    """

    def __init__(self, Z, y, sign_row_points=None):
        import highspy

        self._highspy = highspy
        self.Z = np.asarray(Z, dtype=float)
        self.y = np.asarray(y, dtype=float)
        n = self.Z.shape[0]
        lp = quiet_highs(highspy)
        for name, value in HIGHS_OPTIONS.items():
            lp.setOptionValue(name, value)
        # variables mu_1..mu_n, cost -1 (HiGHS minimises -(1'mu + h'nu)); row 0: y'mu = 0
        lp.addVars(n, np.zeros(n), np.zeros(n))
        lp.changeColsCost(n, np.arange(n, dtype=np.int32), np.full(n, -1.0))
        lp.addRows(1, np.zeros(1), np.zeros(1), n, np.zeros(1, dtype=np.int32),
                   np.arange(n, dtype=np.int32), self.y)
        self.lp = lp
        self.columns = []  # theta index j of dual row 1 + t
        self._in_lp = np.zeros(self.Z.shape[1], dtype=bool)
        self._dropped = np.zeros(self.Z.shape[1], dtype=bool)  # each row leaves at most once
        self.sign_rows = {}  # (i, s) -> variable n + r; s = +1: f(x_i) >= 0, -1: <= -delta
        self._row_point, self._row_sign = [], []
        self._active, self._costs, self._margin = frozenset(), None, 0.0
        self._basis_rows = None  # sign rows at which HiGHS's basis is optimal (None: unknown)
        self._bases = {}  # sign rows -> an optimal basis as the margin path reads it
        if sign_row_points is not None and sign_row_points.Z.shape != self.Z.shape:
            raise ValueError("sign_row_points must extend the same Z")
        self._points = SignRowPoints(self.Z) if sign_row_points is None else sign_row_points
        self._optimum = None  # (theta, b, objective) until the LP changes
        self._certified = None  # the path's end optimum when checked without HiGHS
        self._solved_once = False
        self.stats = LPStats()

    @property
    def n(self):
        return self.Z.shape[0]

    def set_costs(self, costs):
        """Slack costs u_i (C times the hinge weights of this boundary): mu_i <= u_i."""
        costs = np.ascontiguousarray(np.broadcast_to(np.asarray(costs, dtype=float), (self.n,)))
        if self._costs is not None and np.array_equal(costs, self._costs):
            return
        self.lp.changeColsBounds(self.n, np.arange(self.n, dtype=np.int32), np.zeros(self.n),
                                 costs)
        self._costs, self._optimum, self._basis_rows, self._bases = costs.copy(), None, None, {}

    def set_sign_rows(self, active, margin):
        """Switch on exactly the sign rows ``active`` (pairs (i, s)); others are relaxed.

        s = +1 asks f(x_i) >= 0, s = -1 asks f(x_i) <= -``margin`` (nu_r costs -h_r).
        """
        active = frozenset(active)
        if active == self._active and margin == self._margin:
            return
        if margin != self._margin and any(key[1] < 0 for key in
                                          self._active | (self._basis_rows or frozenset())):
            self._basis_rows, self._bases = None, {}  # the rows f <= -margin change costs
        for key in active - set(self.sign_rows):
            self._add_sign_row(*key)
        for key in active ^ self._active:
            on, column = key in active, self.sign_rows[key]
            self.lp.changeColBounds(column, 0.0, np.inf if on else 0.0)
            self.lp.changeColCost(column, -(margin if on and key[1] < 0 else 0.0))
        for key in active if margin != self._margin else ():
            self.lp.changeColCost(self.sign_rows[key], -(margin if key[1] < 0 else 0.0))
        self._active, self._optimum, self._margin = active, None, margin

    def _add_sign_row(self, i, s):
        values = np.concatenate([[s], s * self.Z[i, self.columns]])
        self.lp.addCol(0.0, 0.0, 0.0, values.size, np.arange(values.size, dtype=np.int32),
                       values)
        self.sign_rows[(i, s)] = self.n + len(self._row_point)
        self._row_point.append(i)
        self._row_sign.append(float(s))

    def add_columns(self, new):
        """Put the theta coordinates ``new`` (not yet in the LP) in: rows (Z'v)_j of the dual."""
        new = np.asarray(new, dtype=int)
        new = new[~self._in_lp[new]]
        if new.size == 0:
            return
        start = time.perf_counter()
        points = np.asarray(self._row_point, dtype=int)
        block = np.hstack([self.Z[:, new].T * self.y,
                           self.Z[points][:, new].T * np.asarray(self._row_sign)])
        nz = block != 0.0
        starts = np.concatenate([[0], np.cumsum(nz.sum(axis=1))[:-1]]).astype(np.int32)
        index = np.nonzero(nz)[1].astype(np.int32)
        ones = np.ones(new.size)
        self.lp.addRows(new.size, -ones, ones, index.size, starts, index, block[nz])
        self.columns.extend(new.tolist())
        self._in_lp[new] = True
        self._optimum = None
        self.stats.rows_added += new.size
        self.stats.building_seconds += time.perf_counter() - start

    def solve(self, costs=None):
        """Optimise (adding rows of the dual until none is violated).

        A relaxation LP (no sign row active) with a largest slack cost of at least
        ``PATH_MIN_COST`` and no optimum yet is first solved at ``PATH_START_FRACTION``
        times its costs and followed from there to its costs by
        :func:`~nordicstats.solvers.l1svm_path.follow_cost_path`; HiGHS starts from the
        path's end basis and confirms it (or, when the path gave up, from the start's).

        Returns
        -------
        (theta, b, objective) or None
            theta of shape (p,); None when the active sign rows are infeasible.
        """
        if costs is not None:
            self.set_costs(costs)
        if self._optimum is not None:
            return self._optimum
        self.stats.solves += 1
        self._certified = None
        if self.follows_cost_path():
            self._start_by_path()
        elif self.follows_margin_path():
            self._start_by_margin_path()
        self._solved_once = True
        if self._certified is not None:  # HiGHS's confirming run not needed
            self._basis_rows, self._optimum = self._active, self._certified
            return self._optimum
        if not self._cutting_planes():
            self._basis_rows = None
            return None
        self._basis_rows = self._active
        multipliers = -np.asarray(self.lp.getSolution().row_dual)
        theta = np.zeros(self.Z.shape[1])
        theta[self.columns] = multipliers[1:]
        self._optimum = (theta, float(multipliers[0]),
                         -float(self.lp.getInfo().objective_function_value))
        return self._optimum

    def follows_cost_path(self, costs=None):
        """True when the next solve (at ``costs``, default the current ones) starts by the
        cost path: no sign row active, never solved, largest cost >= ``PATH_MIN_COST``."""
        costs = self._costs if costs is None else np.asarray(costs, dtype=float)
        return bool(USE_COST_PATH and not self._active and not self._solved_once
                    and costs is not None and np.max(costs) >= PATH_MIN_COST)

    def follows_margin_path(self):
        """True when the next solve starts along the switched sign rows' margins: an
        optimum at these costs with other sign rows is known (the last solve's, or one
        kept from before)."""
        return bool(USE_MARGIN_PATH and (self._bases or self._basis_rows is not None)
                    and self._basis_rows != self._active)

    def _start_by_margin_path(self):
        """Follow the switched sign rows' margins from the nearest known optimum, check the
        end basis (:meth:`_certify`) and hand it to HiGHS; leave HiGHS's basis if the path
        gives up.

        HiGHS's optimal basis is kept (by sign rows) before the LP moves on.  The path
        starts from the kept basis whose rows are nearest the new ones, a row switched
        off counting twice (its margin is lowered until its multiplier reaches 0, about
        twice the breakpoints of a row switched on: ``docs/notes/scaling.md``); in the
        branch and bound that is mostly the node's parent, one row away, where the LP
        was last left at a sibling or cousin, two or more rows away."""
        begin = time.perf_counter()
        self.stats.margin_paths += 1
        if self._basis_rows is not None and self._basis_rows not in self._bases:
            self._bases[self._basis_rows] = self.basis_sets(self._basis_rows)
        usable = [rows for rows, basis in self._bases.items() if basis is not None]
        end = None
        if usable:
            rows = min(usable, key=lambda known: 2 * len(known - self._active) +
                       len(self._active - known))
            start = self._bases[rows]
            n = self.n
            keys = sorted(self.sign_rows, key=self.sign_rows.get)  # in HiGHS's column order
            entries = self._points.entries(keys)
            Z, ZT = self._points.matrices()
            size = Z.shape[0]
            y, u = np.ones(size), np.full(size, np.inf)
            margins, status = np.zeros(size), np.full(size, 3, dtype=np.int8)
            y[:n], u[:n], margins[:n], status[:n] = self.y, self._costs, 1.0, start[0][:n]
            y[entries], status[entries[:start[0].size - n]] = self._row_sign, start[0][n:]
            margins[entries] = np.where(np.asarray(self._row_sign) < 0, self._margin, 0.0)
            entry = dict(zip(keys, entries))
            off = [entry[key] for key in keys if key in rows - self._active]
            on = [entry[key] for key in keys if key in self._active - rows]
            end = follow_margin_path(Z, ZT, y, u, margins, status, start[1], start[2],
                                     np.array(off + on, dtype=np.int64),
                                     np.concatenate([np.full(len(off), -np.inf), margins[on]]),
                                     max_steps=MARGIN_PATH_MAX_STEPS or self.n,
                                     perturbation=PATH_PERTURBATION)
            self.stats.margin_path_steps += end.steps
        if end is None or not end.followed:
            self.stats.margin_path_fallbacks += 1
        else:
            self.add_columns(end.active)
            self._set_basis(np.concatenate([end.point_status[:n], end.point_status[entries]]),
                            dict(zip(end.active.tolist(), end.sign)))
            # the LP's rows switched off are not in it (a basic one fails the check: |E|)
            end_status = end.point_status.copy()
            end_status[[entry[key] for key in keys if key not in self._active]] = 3
            self._certify((Z, y, u, margins, end_status),
                          (np.concatenate([end_status[:n], end_status[entries]]),
                           end.active, end.sign))
        self.stats.margin_path_seconds += time.perf_counter() - begin

    def _cutting_planes(self):
        """Run HiGHS and add violated rows until none is; False if the primal is infeasible."""
        status_of = self._highspy.HighsModelStatus
        while True:
            status = self._run()
            if status in (status_of.kUnbounded, status_of.kUnboundedOrInfeasible):
                # the dual is feasible (mu = nu = 0), so the restricted primal is
                # infeasible: it may lack the columns that satisfy the sign rows
                missing = self._rows_cutting_the_ray()
                if missing is None:
                    return False
                self.add_columns(missing)
                continue
            if status != status_of.kOptimal:
                text = self.lp.modelStatusToString(status)
                raise SolverError(f"the L1-SVM LP failed: {text}", solver="highs", status=text)
            new = self._entering_columns(np.asarray(self.lp.getSolution().col_value))
            if new.size == 0:
                return True
            if DROP_SLACK_ROWS and not self._active:
                self._drop_slack_rows()
            self.add_columns(new)

    def _start_by_path(self):
        """Solve at ``PATH_START_FRACTION`` times the costs, follow the path to them, check
        its end basis (:meth:`_certify`) and hand it to HiGHS (HiGHS keeps the start's
        basis if the path gave up)."""
        costs = self._costs
        self.set_costs(costs * PATH_START_FRACTION)
        self.lp.setOptionValue("simplex_iteration_limit", PATH_START_ITERATIONS * self.n)
        try:
            self._cutting_planes()  # no sign rows: the LP is feasible
            start = self.basis_sets()
        except SolverError:  # the dual simplex cycled on a degenerate start: start cold
            self.lp.clearSolver()
            start = None
        finally:
            self.lp.setOptionValue("simplex_iteration_limit", NO_ITERATION_LIMIT)
        self.set_costs(costs)
        if start is None:
            self.stats.path_fallbacks += 1
            return
        begin = time.perf_counter()
        end = follow_cost_path(self.Z, self.y, costs, PATH_START_FRACTION, 1.0, *start,
                               perturbation=PATH_PERTURBATION)
        self.stats.path_seconds += time.perf_counter() - begin
        self.stats.path_steps += end.steps
        if not end.followed:
            self.stats.path_fallbacks += 1
            return
        self.add_columns(end.active)
        self._set_basis(end.point_status, dict(zip(end.active.tolist(), end.sign)))
        on_lp = np.concatenate([end.point_status, np.full(len(self._row_point), 3, np.int8)])
        self._certify((self.Z, self.y, costs, np.ones(self.n), end.point_status),
                      (on_lp, end.active, end.sign))

    def _certify(self, lp, basis):
        """Check the path's end basis afresh (:func:`certify_basis`); when it is optimal,
        keep its optimum (HiGHS is not run) and its basis for the margin path.

        ``lp`` is (Z, y, u, margins, point status) as the check reads them, ``basis``
        (point status with the sign rows in HiGHS's column order, A, sigma) as
        :meth:`basis_sets` gives it."""
        if not SELF_CERTIFY:
            self.stats.highs_confirmed += 1
            return
        begin = time.perf_counter()
        out = certify_basis(*lp, basis[1], basis[2])
        self.stats.certificate_seconds += time.perf_counter() - begin
        if not out.certified:
            self.stats.highs_confirmed += 1
            return
        self.stats.self_certified += 1
        self._certified = (out.theta, out.b, out.objective)
        self._bases[self._active] = basis

    def basis_sets(self, on_rows=None):
        """HiGHS's optimal basis as the path's (point status, A, sigma), or None when the
        row of b is basic (b = 0: not a basis the path can start from).

        With ``on_rows`` (the sign rows switched on) the status covers the sign rows too
        (after the n points, in column order; 3 for a row switched off; None when such
        a row is basic, a degenerate basis)."""
        basis = self.lp.getBasis()
        kinds = self._highspy.HighsBasisStatus
        codes = {kinds.kBasic: 2, kinds.kUpper: 1}
        col_status, row_status = basis.col_status, basis.row_status  # copies: read once
        size = self.n + (len(self._row_point) if on_rows is not None else 0)
        point_status = np.array([codes.get(status, 0) for status in col_status[:size]],
                                dtype=np.int8)
        if on_rows is not None:
            on = np.zeros(len(self._row_point), dtype=bool)
            on[[self.sign_rows[key] - self.n for key in on_rows]] = True
            if np.any(point_status[self.n:][~on] == 2):
                return None
            point_status[self.n:][~on] = 3
        if row_status[0] == kinds.kBasic:
            return None
        values = np.asarray(self.lp.getSolution().row_value)
        tight = [t for t in range(len(self.columns)) if row_status[1 + t] != kinds.kBasic]
        active = np.asarray(self.columns, dtype=int)[tight]
        return point_status, active, np.where(values[1 + np.asarray(tight, dtype=int)] > 0,
                                              1.0, -1.0)

    def _set_basis(self, point_status, active_sign):
        """Give HiGHS the dual basis: mu by ``point_status``, rows of A at their sign."""
        kinds = self._highspy.HighsBasisStatus
        basis = self.lp.getBasis()
        to_kind = (kinds.kLower, kinds.kUpper, kinds.kBasic, kinds.kLower)
        basis.col_status = [to_kind[code] for code in point_status] + \
            [kinds.kLower] * (self.n + len(self._row_point) - len(point_status))
        rows = [kinds.kLower]
        for j in self.columns:
            sign = active_sign.get(j)
            rows.append(kinds.kBasic if sign is None else
                        (kinds.kUpper if sign > 0 else kinds.kLower))
        basis.row_status = rows
        basis.valid = True
        self.lp.setBasis(basis)

    def _run(self):
        start = time.perf_counter()
        self.lp.run()
        self.stats.highs_seconds += time.perf_counter() - start
        self.stats.runs += 1
        self.stats.simplex_iterations += int(self.lp.getInfo().simplex_iteration_count)
        return self.lp.getModelStatus()

    def _drop_slack_rows(self):
        """Delete the rows whose slack is basic (theta_j = 0), each row once at most.

        Their multipliers are zero, so the basis stays optimal and valid without them;
        a dropped row comes back through pricing when it is violated again, and
        stays then (so the cutting planes end).
        """
        status = self.lp.getBasis().row_status
        basic = self._highspy.HighsBasisStatus.kBasic
        columns = np.asarray(self.columns, dtype=int)
        slack = np.array([status[1 + t] == basic for t in range(columns.size)], dtype=bool)
        slack &= ~self._dropped[columns]
        if not slack.any():
            return
        positions = np.flatnonzero(slack)
        self.lp.deleteRows(positions.size, (1 + positions).astype(np.int32))
        self._dropped[columns[positions]] = True
        self._in_lp[columns[positions]] = False
        self.columns = columns[~slack].tolist()
        self.stats.rows_dropped += positions.size

    def _rows_cutting_the_ray(self):
        """Rows that bound the restricted dual's ray, or None if it is a Farkas certificate.

        An unbounded ray moves only nu (mu is boxed): d >= 0 with s'd = 0 and
        (Z'v_d)_j = 0 on the rows in the LP, v_d = sum_r s_r d_r e_{i_r}, along which
        h'nu grows.  Rows j outside with (Z'v_d)_j != 0 cut it off (Farkas pricing:
        the most violated first).  When no row does -- every ``|(Z'v_d)_j|`` is below
        ``RAY_TOL`` times the size of its terms -- the ray proves the primal (sign
        rows included) infeasible.  Without a usable ray (HiGHS gives none) the rows
        of the sign rows' points come in, then every row, as a fallback.
        """
        _, has_ray, ray = self.lp.getPrimalRay()
        if has_ray and self._row_point:
            d = np.asarray(ray, dtype=float)[self.n:self.n + len(self._row_point)]
            weights = np.asarray(self._row_sign) * d
            rows = self.Z[np.asarray(self._row_point, dtype=int)]
            cut = np.abs(weights @ rows)
            scale = np.abs(weights) @ np.abs(rows)
            violated = (cut > RAY_TOL * scale) & ~self._in_lp
            if not violated.any():
                return None if np.all(cut[self._in_lp] <= RAY_TOL * scale[self._in_lp]) else \
                    self._fallback_rows()
            order = np.flatnonzero(violated)
            return order[np.argsort(-cut[order] / scale[order], kind="stable")[:COLUMN_BATCH]]
        return self._fallback_rows()

    def _fallback_rows(self):
        first = np.zeros(0, dtype=int)
        if self.Z.shape[0] == self.Z.shape[1]:  # a kernel: column j belongs to point j
            points = np.unique(np.asarray(self._row_point, dtype=int))
            first = points[~self._in_lp[points]]
        rest = first if first.size else np.flatnonzero(~self._in_lp)
        return rest if rest.size else None

    def _entering_columns(self, values):
        start = time.perf_counter()
        v = self.y * values[:self.n]
        if self._row_point:
            np.add.at(v, np.asarray(self._row_point, dtype=int),
                      np.asarray(self._row_sign) * values[self.n:])
        excess = np.abs(self.Z.T @ v) - 1.0
        excess[self._in_lp] = -np.inf
        candidates = np.flatnonzero(excess > PRICING_TOL)
        if candidates.size > COLUMN_BATCH:
            candidates = candidates[np.argsort(-excess[candidates], kind="stable")[:COLUMN_BATCH]]
        self.stats.pricing_seconds += time.perf_counter() - start
        return np.sort(candidates)
