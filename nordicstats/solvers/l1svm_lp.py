"""One boundary's L1-SVM LP by column generation in HiGHS, with optional sign rows.

NORDIC-2's relaxation (paper, Section 4, without the logical constraints) splits into
K-1 L1-SVM LPs in (theta+, theta-, b, xi); for boundary k with slack costs u = C c_k::

    min  1'(theta+ + theta-) + u'xi
    s.t. y_i (Z_i (theta+ - theta-) + b) + xi_i >= 1,   theta+-, xi >= 0,          (hinge)
         s_r (Z_{i_r} (theta+ - theta-) + b) >= h_r     for the active sign rows r,

where a sign row states f(x_i) >= 0 (s = +1, h = 0) or f(x_i) <= -delta (s = -1,
h = delta): the branches of NORDIC-2's disjunctions (:mod:`nordicstats.solvers.lazy_mip`).

With a kernel Z = K has n dense columns, but the l1 penalty makes the optimal theta
sparse (50 nonzeros of 1,000 at n = 1,000, K = 5, C = 1, see
``docs/notes/scaling.md``).  So the LP starts with b and the slacks only, and a
column j enters when its reduced cost is negative: with row duals mu >= 0 (hinge)
and nu >= 0 (sign rows) and v_i = y_i mu_i + sum_{r: i_r = i} s_r nu_r::

    reduced cost of theta+_j = 1 - (Z'v)_j,   of theta-_j = 1 + (Z'v)_j.

When no column outside the LP has ``|(Z'v)_j| > 1 + PRICING_TOL`` the restricted
LP's optimum is the full LP's (its dual is feasible for every column).  A restricted
LP that sign rows make infeasible gets the columns of those rows' points (with a
kernel, theta_j = omega_j moves f(x_j) alone most), then every column; only the
full LP's infeasibility is reported.  Every
restart is warm: HiGHS keeps the basis when columns or rows are added, when slack
costs change (a C grid) and when sign rows are switched on or off (bounds only).
"""

from __future__ import annotations

import numpy as np

from nordicstats.exceptions import SolverError

__all__ = ["BoundaryLP", "quiet_highs", "HIGHS_OPTIONS", "PRICING_TOL", "COLUMN_BATCH"]

HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9}
#: A column enters when ``|(Z'v)_j|`` exceeds 1 by more than this (HiGHS's dual tolerance).
PRICING_TOL = 1e-9
#: Most columns added per pricing round (the most negative reduced costs first).
COLUMN_BATCH = 100


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


class BoundaryLP:
    """The L1-SVM LP of one boundary (see the module docstring), kept warm in HiGHS.

    Parameters
    ----------
    Z : ndarray of shape (n, p)
        f(x_i) = Z_i theta + b (the kernel matrix, or X for a linear problem).
    y : ndarray of shape (n,)
        Signs y_i^(k) in {-1, +1}.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> lp = BoundaryLP(Z, np.array([-1.0, -1.0, 1.0, 1.0]))
    >>> theta, b, objective = lp.solve(np.full(4, 10.0))
    >>> round(objective, 6), np.round(theta, 6).tolist(), round(b, 6)
    (2.0, [2.0], -3.0)
    """

    def __init__(self, Z, y):
        import highspy

        self._highspy = highspy
        self.Z = np.asarray(Z, dtype=float)
        self.y = np.asarray(y, dtype=float)
        n = self.Z.shape[0]
        lp = quiet_highs(highspy)
        for name, value in HIGHS_OPTIONS.items():
            lp.setOptionValue(name, value)
        # columns: b (free) then xi_1..xi_n; hinge row i: y_i b + xi_i >= 1
        lp.addVars(n + 1, np.concatenate([[-np.inf], np.zeros(n)]), np.full(n + 1, np.inf))
        starts = np.arange(0, 2 * n, 2, dtype=np.int32)
        index = np.column_stack([np.zeros(n, dtype=np.int32),
                                 np.arange(1, n + 1, dtype=np.int32)]).ravel()
        values = np.column_stack([self.y, np.ones(n)]).ravel()
        lp.addRows(n, np.ones(n), np.full(n, np.inf), 2 * n, starts, index, values)
        self.lp = lp
        self.columns = []  # theta indices j in the LP: theta+_j, theta-_j at n+1+2t, n+2+2t
        self._in_lp = np.zeros(self.Z.shape[1], dtype=bool)
        self.sign_rows = {}  # (i, s) -> LP row; s = +1: f(x_i) >= 0, s = -1: f(x_i) <= -delta
        self._row_point, self._row_sign = [], []

    @property
    def n(self):
        return self.Z.shape[0]

    def set_costs(self, costs):
        """Slack costs u_i (C times the hinge weights of this boundary)."""
        costs = np.ascontiguousarray(np.broadcast_to(np.asarray(costs, dtype=float), (self.n,)))
        self.lp.changeColsCost(self.n, np.arange(1, self.n + 1, dtype=np.int32), costs)

    def set_sign_rows(self, active, margin):
        """Switch on exactly the sign rows ``active`` (pairs (i, s)); others are relaxed.

        s = +1 asks f(x_i) >= 0, s = -1 asks f(x_i) <= -``margin``.
        """
        active = set(active)
        for key in active - set(self.sign_rows):
            self._add_sign_row(*key)
        for key, row in self.sign_rows.items():
            lower = (0.0 if key[1] > 0 else margin) if key in active else -np.inf
            self.lp.changeRowBounds(row, lower, np.inf)

    def _add_sign_row(self, i, s):
        coef = s * self.Z[i, self.columns]
        index = np.concatenate([[0], self._pair_positions()]).astype(np.int32)
        values = np.concatenate([[s], np.column_stack([coef, -coef]).ravel()])
        self.lp.addRows(1, np.array([-np.inf]), np.array([np.inf]), index.size,
                        np.zeros(1, dtype=np.int32), index, values)
        self.sign_rows[(i, s)] = self.n + len(self._row_point)
        self._row_point.append(i)
        self._row_sign.append(float(s))

    def _pair_positions(self):
        t = np.arange(len(self.columns))
        return np.column_stack([self.n + 1 + 2 * t, self.n + 2 + 2 * t]).ravel()

    def add_columns(self, new):
        """Put the columns ``new`` (theta indices not yet in the LP) into the LP."""
        new = np.asarray(new, dtype=int)
        new = new[~self._in_lp[new]]
        if new.size == 0:
            return
        rows = np.concatenate([self.y[:, None] * self.Z[:, new],
                               np.asarray(self._row_sign)[:, None]
                               * self.Z[np.asarray(self._row_point, dtype=int)][:, new]])
        pair = np.repeat(rows, 2, axis=1)
        pair[:, 1::2] *= -1.0
        nz = pair != 0.0
        starts = np.concatenate([[0], np.cumsum(nz.sum(axis=0))[:-1]]).astype(np.int32)
        index = np.nonzero(nz.T)[1].astype(np.int32)
        values = pair.T[nz.T]
        count = 2 * new.size
        self.lp.addCols(count, np.ones(count), np.zeros(count), np.full(count, np.inf),
                        index.size, starts, index, values)
        self.columns.extend(new.tolist())
        self._in_lp[new] = True

    def solve(self, costs=None):
        """Optimise (pricing columns in until none has a negative reduced cost).

        Returns
        -------
        (theta, b, objective) or None
            theta of shape (p,); None when the active sign rows are infeasible.
        """
        if costs is not None:
            self.set_costs(costs)
        while True:
            self.lp.run()
            status = self.lp.getModelStatus()
            if status == self._highspy.HighsModelStatus.kInfeasible:
                # the restricted LP may lack the columns that satisfy the sign rows: add
                # those of the sign rows' points, then all; infeasible with all is final
                missing = self._missing_for_infeasibility()
                if missing.size == 0:
                    return None
                self.add_columns(missing)
                continue
            if status != self._highspy.HighsModelStatus.kOptimal:
                text = self.lp.modelStatusToString(status)
                raise SolverError(f"the L1-SVM LP failed: {text}", solver="highs", status=text)
            new = self._entering_columns(np.asarray(self.lp.getSolution().row_dual))
            if new.size == 0:
                break
            self.add_columns(new)
        x = np.asarray(self.lp.getSolution().col_value)
        theta = np.zeros(self.Z.shape[1])
        pairs = x[self.n + 1:].reshape(-1, 2)
        theta[self.columns] = pairs[:, 0] - pairs[:, 1]
        return theta, float(x[0]), float(self.lp.getInfo().objective_function_value)

    def _missing_for_infeasibility(self):
        first = np.zeros(0, dtype=int)
        if self.Z.shape[0] == self.Z.shape[1]:  # a kernel: column j belongs to point j
            points = np.unique(np.asarray(self._row_point, dtype=int))
            first = points[~self._in_lp[points]]
        return first if first.size else np.flatnonzero(~self._in_lp)

    def _entering_columns(self, duals):
        v = self.y * duals[:self.n]
        if self._row_point:
            np.add.at(v, np.asarray(self._row_point, dtype=int),
                      np.asarray(self._row_sign) * duals[self.n:])
        excess = np.abs(self.Z.T @ v) - 1.0
        excess[self._in_lp] = -np.inf
        candidates = np.flatnonzero(excess > PRICING_TOL)
        if candidates.size > COLUMN_BATCH:
            candidates = candidates[np.argsort(-excess[candidates], kind="stable")[:COLUMN_BATCH]]
        return np.sort(candidates)
