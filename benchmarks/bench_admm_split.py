"""Would an ADMM split over NORDIC-1's noncrossing constraints pay?  Outer iterations counted.

A prototype, not part of the package: ADMM (Boyd et al. 2011) on kernel NORDIC-1 with
separate intercepts (paper, eqs. primal_problem, primal_constraint1-4), split on the
decision values.  Per boundary k the block h_k = (g_k, b_k) in R^(n+1), g_k = K omega_k,
is set equal to z_k, where every row of z (the n training points and the intercepts)
must be nonincreasing in k:

    min  sum_k [1/2 omega_k' K omega_k + sum_i U_ik xi_ik]   s.t. hinge rows,  h_k = z_k,
         z in M = {rows of z nonincreasing in k}.

Scaled ADMM with penalty rho, c_k = z_k - u_k (its first n entries c, its last d):

* **f-block** (separable over k): min 1/2 omega'K omega + U'xi + rho/2 ||g - c||^2
  + rho/2 (b - d)^2 over the hinge constraints.  Its dual has alpha in the box and n free
  multipliers lambda of g = K omega, with the diagonal term ||lambda||^2 / (2 rho) and,
  instead of libsvm's equality row y'alpha = 0, the term (y'alpha)^2 / (2 rho).  Maximised
  over lambda in closed form it is the box QP

      min  1/2 alpha' Y (K_rho + ee'/rho) Y alpha + p'alpha,   0 <= alpha <= U,
      K_rho = K (I + rho K)^-1,   p = -e + d y + rho Y K_rho c,

  with g = K_rho (Y alpha + rho c), lambda = rho (c - g), omega = Y alpha + lambda,
  b = d + y'alpha / rho.  It is solved exactly (:func:`box_qp_active_set`: a primal-dual
  active set with a Cholesky solve on the free set, warm-started from the last alpha, ended
  by the box QP's KKT conditions; Clarabel when it does not settle; checked against
  Clarabel on the first f-block of every fit).
* **z-block**: z = P_M(h + u), isotonic regression (nonincreasing) of every row.
* **dual update**: u = u + h - z.  Residual balancing (Boyd et al. 2011, Section 3.4.1):
  rho times or divided by 2 when one residual exceeds 10 times the other, u rescaled;
  over-relaxation (Section 3.4.3) in the last run of each fit.

The NORDIC-1 Wolfe dual point of an iterate: alpha from the f-blocks, (phi, gamma) the
prefix sums over k of -rho u (u lies in the polar cone of M after every z-update, so
they are >= 0 and the last sum is 0), omega = Y alpha + phi_k - phi_{k-1}; the primal
point is (omega, the best nonincreasing intercepts for K omega).  The pair is handed to
:func:`~nordicstats.solvers.certificate.certify`; an iterate counts when it is
certified (relative gap 1e-6, violations 1e-7).  Its objective is compared with the
optimum of ``NORDIC(...).fit()``.

Also (``--multipliers-rho``) the method of multipliers on the noncrossing constraints only,
its coupled inner problems solved exactly by Clarabel (:func:`run_multipliers`).

Printed per fit: the outer iterations to a pair within 1e-3 and 1e-5 (gap and
violations; 1e-3 is about libsvm's accuracy) and to the certificate, or where it stands
at the cap; the CPU time of the exact f-blocks per outer iteration; the K-1 libsvm fits
and the current solver (CPU time, one process); the cost bound.  Derivation and results:
docs/notes/scaling.md ("An ADMM split over the noncrossing constraints").

Run (the output is kept in ``benchmarks/results/admm_split.txt``)::

    python benchmarks/bench_admm_split.py --n 300 --rho 0.03 0.1 0.3 1 3 \\
        --multipliers-rho 10 100 1000 --multipliers-cap 30
    python benchmarks/bench_admm_split.py --n 1000 --rho 0.1 1
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import clarabel  # noqa: E402
import cvxpy as cp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402
from bench_scale import GAMMA, baseline, make_design  # noqa: E402
from scipy import sparse  # noqa: E402
from sklearn.isotonic import isotonic_regression  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

from nordicstats import NORDIC  # noqa: E402
from nordicstats.solvers.certificate import certify  # noqa: E402
from nordicstats.solvers.decomposition import intercepts_by_pooling  # noqa: E402

# residual balancing (Boyd et al. 2011, Section 3.4.1): mu and tau
BALANCE_RATIO, BALANCE_FACTOR = 10.0, 2.0
# landmarks counted on the way: relative gap and violations at most 1e-3 (about libsvm's
# accuracy) and 1e-5
LANDMARKS = (1e-3, 1e-5)


# --- the z-block -----------------------------------------------------------------------------
def project_rows_nonincreasing(V):
    """Isotonic (nonincreasing) regression of every row of V, unit weights.

    z_k = min_{i <= k} max_{j >= k} mean(v_i, ..., v_j) (the min-max formula of isotonic
    regression, Robertson, Wright & Dykstra 1988, Chapter 1), the answer of pool
    adjacent violators, vectorised over the rows; K - 1 <= 6 columns here.
    """
    m = V.shape[1]
    S = np.concatenate([np.zeros((V.shape[0], 1)), np.cumsum(V, axis=1)], axis=1)
    Z = np.empty_like(V)
    for k in range(m):
        lows = [np.max([(S[:, j + 1] - S[:, i]) / (j - i + 1) for j in range(k, m)], axis=0)
                for i in range(k + 1)]
        Z[:, k] = np.min(lows, axis=0)
    return Z


def projection_check(seed=0):
    """Largest difference of the projection from scikit-learn's isotonic regression."""
    V = np.random.default_rng(seed).normal(size=(200, 6))
    ref = np.array([isotonic_regression(v, increasing=False) for v in V])
    return float(np.max(np.abs(project_rows_nonincreasing(V) - ref)))


# --- the f-blocks ----------------------------------------------------------------------------
class ResolventKernel:
    """K_rho = K (I + rho K)^-1 for any rho, from one eigendecomposition of K."""

    def __init__(self, gram):
        values, self.vectors = np.linalg.eigh(gram)
        self.values = np.maximum(values, 0.0)
        self.rho = None

    def set_rho(self, rho):
        """Form K_rho for this rho."""
        self.rho = rho
        self.matrix = (self.vectors * (self.values / (1.0 + rho * self.values))) @ self.vectors.T


def box_qp_active_set(H, y, p, upper, alpha, max_rounds=50):
    """Exact minimiser of 1/2 a'(yy' * H)a + p'a over 0 <= a <= upper, or None.

    Primal-dual active set (Hintermueller, Ito & Kunisch 2002) from ``alpha``: bounds
    predicted from a - grad / diag, the free block solved by Cholesky (least squares when
    singular), until the prediction repeats; then every KKT condition holds.

    Returns
    -------
    (alpha, rounds, kkt) or None when it does not settle in ``max_rounds``.
    """
    a = alpha.copy()
    grad = y * (H @ (y * a)) + p
    inverse_diag = 1.0 / np.diag(H)
    sets = None
    for rounds in range(max_rounds):
        trial = a - grad * inverse_diag
        lower, top = trial <= 0.0, trial >= upper
        new_sets = (lower, top)
        if sets is not None and all(np.array_equal(s, t) for s, t in zip(sets, new_sets)):
            return a, rounds, box_qp_kkt(a, grad, upper, p)
        sets = new_sets
        free = ~(lower | top)
        a = np.where(lower, 0.0, np.where(top, upper, a))
        if free.any():
            yf = y[free]
            rhs = -(p[free] + yf * (H[np.ix_(free, top)] @ (y[top] * upper[top])))
            a[free] = solve_symmetric(np.outer(yf, yf) * H[np.ix_(free, free)], rhs)
        grad = y * (H @ (y * a)) + p
    return None


def solve_symmetric(Q, rhs):
    """Q x = rhs by Cholesky; least squares when Q is numerically singular."""
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(Q), rhs)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(Q, rhs, rcond=None)[0]


def box_qp_kkt(a, grad, upper, p):
    """Largest KKT residual of the box QP at a, relative to max(1, max |p|)."""
    free = (a > 0.0) & (a < upper)
    worst = max(np.max(np.abs(grad[free]), initial=0.0),
                np.max(-grad[a <= 0.0], initial=0.0),
                np.max(grad[a >= upper], initial=0.0))
    return float(worst) / max(1.0, float(np.max(np.abs(p))))


def box_qp_clarabel(H, y, p, upper):
    """The same box QP by Clarabel (interior point): (alpha, objective)."""
    n = p.size
    Q = np.outer(y, y) * H
    A = sparse.vstack([sparse.identity(n), -sparse.identity(n)], format="csc")
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
    solution = clarabel.DefaultSolver(sparse.csc_matrix(np.triu(Q)), p, A,
                                      np.concatenate([upper, np.zeros(n)]),
                                      [clarabel.NonnegativeConeT(2 * n)], settings).solve()
    alpha = np.clip(np.asarray(solution.x), 0.0, upper)
    return alpha, box_qp_objective(H, y, p, alpha)


def box_qp_objective(H, y, p, alpha):
    """1/2 a'(yy' * H)a + p'a."""
    ya = y * alpha
    return 0.5 * float(ya @ H @ ya) + float(p @ alpha)


class FBlocks:
    """The K-1 f-blocks of one ADMM iteration, solved exactly, warm-started."""

    def __init__(self, problem, alpha):
        self.problem, self.alpha = problem, alpha.copy()
        self.kernel = ResolventKernel(problem.gram)
        self.rounds = self.fallbacks = 0
        self.worst_kkt = 0.0

    def shifted_kernel(self, rho):
        """K_rho + 1/rho: the kernel of the f-blocks' box QPs."""
        if self.kernel.rho != rho:
            self.kernel.set_rho(rho)
        return self.kernel.matrix + 1.0 / rho

    def linear_terms(self, rho, Cz):
        """p_k = -e + d_k y_k + rho Y_k K_rho c_k for every k (columns)."""
        Y = self.problem.signs
        return -1.0 + Cz[-1] * Y + rho * Y * (self.kernel.matrix @ Cz[:-1])

    def solve(self, rho, Cz):
        """h = (g, b) of every block for c = Cz (shape (n+1, K-1)); alpha updated."""
        H = self.shifted_kernel(rho)
        Y, U = self.problem.signs, self.problem.upper_bounds
        P = self.linear_terms(rho, Cz)
        for k in range(Y.shape[1]):
            self.alpha[:, k] = self.block(H, Y[:, k], P[:, k], U[:, k], self.alpha[:, k])
        G = self.kernel.matrix @ (Y * self.alpha + rho * Cz[:-1])
        b = Cz[-1] + np.sum(Y * self.alpha, axis=0) / rho
        return np.vstack([G, b])

    def block(self, H, y, p, upper, alpha):
        """One exact f-block: the active set, Clarabel's point as its start if it fails."""
        found = box_qp_active_set(H, y, p, upper, alpha)
        if found is None:
            self.fallbacks += 1
            found = box_qp_active_set(H, y, p, upper, box_qp_clarabel(H, y, p, upper)[0])
            if found is None:
                raise RuntimeError("the f-block's active set did not settle from Clarabel's point")
        alpha, rounds, kkt = found
        self.rounds += rounds
        self.worst_kkt = max(self.worst_kkt, kkt)
        return alpha

    def clarabel_difference(self, rho, Cz):
        """Relative objective difference, active set against Clarabel, on the first block."""
        H = self.shifted_kernel(rho)
        y, upper = self.problem.signs[:, 0], self.problem.upper_bounds[:, 0]
        p = self.linear_terms(rho, Cz)[:, 0]
        alpha = self.block(H, y, p, upper, self.alpha[:, 0])
        ours = box_qp_objective(H, y, p, alpha)
        reference = box_qp_clarabel(H, y, p, upper)[1]
        return (ours - reference) / max(1.0, abs(reference))


# --- the ADMM iteration ----------------------------------------------------------------------
def bsvm_start(problem):
    """alpha and h = (K omega, b) of the K-1 separate SVMs (libsvm, precomputed kernel)."""
    Y = problem.signs
    alpha, h = np.zeros(Y.shape), np.zeros((Y.shape[0] + 1, Y.shape[1]))
    for k in range(Y.shape[1]):
        svm = SVC(kernel="precomputed", C=problem.C).fit(problem.gram, Y[:, k])
        alpha[svm.support_, k] = np.abs(svm.dual_coef_[0])
        h[-1, k] = svm.intercept_[0]
    h[:-1] = problem.gram @ (Y * alpha)
    return alpha, h


def dual_pair(problem, alpha, multipliers):
    """The NORDIC-1 point of an iterate: (omega, b, multipliers) for ``certify``.

    ``multipliers`` (n+1, K-2): phi of the n training rows and gamma (the last row),
    clipped at 0; omega_k = y_k alpha_k + phi_k - phi_{k-1} and b the best nonincreasing
    intercepts for K omega.
    """
    clipped = np.maximum(multipliers, 0.0)
    phi, gamma = clipped[:-1], clipped[-1]
    omega = problem.signs * alpha
    omega[:, :-1] += phi
    omega[:, 1:] -= phi
    b = intercepts_by_pooling(problem, problem.gram @ omega)
    return omega, b, {"alpha": alpha, "phi": phi, "gamma": gamma}


class Progress:
    """The first iterations at which an outer loop's pairs meet :data:`LANDMARKS`."""

    def __init__(self):
        self.landmarks = {tol: None for tol in LANDMARKS}
        self.certified = None

    def update(self, iteration, cert):
        """Record the landmarks this iteration's certificate meets; True when certified."""
        for tol, reached in self.landmarks.items():
            if reached is None and max(cert.gap, cert.max_violation) <= tol:
                self.landmarks[tol] = iteration
        if cert.certified:
            self.certified = iteration
        return cert.certified

    def record(self, iteration, cert, optimum, **fields):
        """The row of a run: landmarks, certification, where the last pair stands."""
        return dict(landmarks=self.landmarks, certified=self.certified, iterations=iteration,
                    gap=cert.gap, primal_violation=cert.primal_violation,
                    dual_violation=cert.dual_violation,
                    objective_error=(cert.primal - optimum) / max(1.0, abs(optimum)), **fields)


def run_admm(problem, rho, balance, relaxation, cap, optimum):
    """ADMM from the BSVM start until the pair is certified or ``cap`` iterations.

    ``relaxation`` is Boyd et al.'s over-relaxation (Section 3.4.3): h enters the z- and
    u-updates as relaxation h + (1 - relaxation) z (1: plain ADMM).

    Returns
    -------
    dict
        ``landmarks`` / ``certified``: the first iteration whose pair is within each of
        :data:`LANDMARKS` / certified (None if not reached); at the last iteration the
        gap, violations and objective against ``optimum``; the f-blocks' CPU seconds per
        iteration, their active-set rounds per block, Clarabel fallbacks, worst KKT
        residual, the last rho and the largest relative difference from Clarabel.
    """
    alpha, h = bsvm_start(problem)
    blocks = FBlocks(problem, alpha)
    z, u = project_rows_nonincreasing(h), np.zeros_like(h)
    check = blocks.clarabel_difference(rho, z - u)
    progress, cpu, start = Progress(), 0.0, time.process_time()
    for iteration in range(1, cap + 1):
        clock = time.process_time()
        h = blocks.solve(rho, z - u)
        cpu += time.process_time() - clock
        h = relaxation * h + (1.0 - relaxation) * z
        z_old, z = z, project_rows_nonincreasing(h + u)
        u = u + h - z
        primal, dual = np.linalg.norm(h - z), rho * np.linalg.norm(z - z_old)
        omega, b, multipliers = dual_pair(problem, blocks.alpha,
                                          np.cumsum(-rho * u, axis=1)[:, :-1])
        cert = certify(problem, omega, b, multipliers)
        if progress.update(iteration, cert):
            break
        if balance and primal > BALANCE_RATIO * dual:
            rho, u = rho * BALANCE_FACTOR, u / BALANCE_FACTOR
        elif balance and dual > BALANCE_RATIO * primal:
            rho, u = rho / BALANCE_FACTOR, u * BALANCE_FACTOR
    return progress.record(
        iteration, cert, optimum, cpu_per_iteration=cpu / iteration,
        run_cpu=time.process_time() - start,
        rounds_per_block=blocks.rounds / (iteration * problem.n_boundaries),
        fallbacks=blocks.fallbacks, worst_kkt=blocks.worst_kkt, rho=rho, clarabel=check)


# --- the method of multipliers ---------------------------------------------------------------
def run_multipliers(problem, rho, cap, optimum):
    """Method of multipliers on the noncrossing constraints only, inner problems by Clarabel.

    The constraints c(omega, b) <= 0 (c = G_{k+1} - G_k row by row, and b_{k+1} - b_k)
    leave the problem through the augmented Lagrangian (Rockafellar 1973)

        f + 1/(2 rho) sum [max(0, mu + rho c)^2 - mu^2],   mu <- max(0, mu + rho c),

    whose minimiser over (omega, b, xi) with the hinge rows is solved exactly by Clarabel
    (through cvxpy, K = R R' by its eigenvectors as in the tests' primal reference).  The
    pair: alpha the hinge rows' multipliers, (phi, gamma) = mu.
    """
    n, m = problem.n, problem.n_boundaries
    values, vectors = np.linalg.eigh(problem.gram)
    keep = values > 1e-11 * values[-1]
    root = vectors[:, keep] * np.sqrt(values[keep])
    coef, b, slack = cp.Variable((root.shape[1], m)), cp.Variable(m), cp.Variable((n, m))
    G = root @ coef
    intercepts = cp.reshape(b, (1, m), order="C")
    hinge = cp.multiply(problem.signs, G + np.ones((n, 1)) @ intercepts) >= 1 - slack
    crossing = cp.vstack([G[:, 1:] - G[:, :-1], intercepts[:, 1:] - intercepts[:, :-1]])
    shift = cp.Parameter((n + 1, m - 1))  # mu / rho
    inner = cp.Problem(cp.Minimize(
        0.5 * cp.sum_squares(coef) + cp.sum(cp.multiply(problem.upper_bounds, slack))
        + 0.5 * rho * cp.sum_squares(cp.pos(crossing + shift))), [hinge, slack >= 0])
    mu, progress, start = np.zeros((n + 1, m - 1)), Progress(), time.process_time()
    for iteration in range(1, cap + 1):
        shift.value = mu / rho
        solve_exactly(inner)
        mu = np.maximum(0.0, mu + rho * crossing.value)
        alpha = np.clip(hinge.dual_value, 0.0, problem.upper_bounds)
        omega, b_pair, multipliers = dual_pair(problem, alpha, mu)
        cert = certify(problem, omega, b_pair, multipliers)
        if progress.update(iteration, cert):
            break
    return progress.record(iteration, cert, optimum,
                           cpu_per_iteration=(time.process_time() - start) / iteration)


def solve_exactly(inner):
    """Clarabel at the tightest tolerance it reaches ("optimal"), as the tests' reference."""
    for tol in (1e-10, 1e-9, 1e-8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "may be inaccurate": next tol
            inner.solve(solver="CLARABEL", tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
        if inner.status == "optimal":
            return
    raise RuntimeError(f"the inner problem ended {inner.status}")


# --- the benchmark ---------------------------------------------------------------------------
def reference_fit(design, n, K, C, seed=0):
    """The problem, the current solver's optimum and CPU time, the libsvm CPU time."""
    X, y = make_design(design, n, K, seed)
    _, _, libsvm_cpu = baseline(X, y, K, C)
    model = NORDIC(y, X, method="nordic1", kernel="rbf", gamma=GAMMA, C=C)
    clock = time.process_time()
    result = model.fit(cov_type="none").solver_result
    nordic_cpu = time.process_time() - clock
    if not result.certificate.certified:
        raise RuntimeError(f"the reference fit is not certified: {result.message}")
    return model.build_problem(), result.objective, nordic_cpu, libsvm_cpu, one_libsvm_fit(X, y, C)


def one_libsvm_fit(X, y, C, repeats=3):
    """CPU seconds of one libsvm fit (the middle boundary), the fastest of ``repeats``."""
    times = []
    for _ in range(repeats):
        clock = time.process_time()
        SVC(C=C, gamma=GAMMA).fit(X, (y > (y.max() // 2)).astype(int))
        times.append(time.process_time() - clock)
    return min(times)


def settings_of(args):
    """(name, rho relative to C / max K_ii, balance, relaxation) of every ADMM run."""
    fixed = [(f"rho={r:g}", r, False, 1.0) for r in args.rho]
    start = args.balance_from
    return fixed + [(f"balanced from {start:g}", start, True, 1.0),
                    (f"balanced, relaxed {args.relaxation:g}", start, True, args.relaxation)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=["likert", "overlap"])
    parser.add_argument("--n", nargs="+", type=int, default=[300, 1000])
    parser.add_argument("--K", nargs="+", type=int, default=[5, 7])
    parser.add_argument("--C", nargs="+", type=float, default=[1.0, 16.0])
    parser.add_argument("--rho", nargs="+", type=float, default=[0.1, 1.0, 10.0],
                        help="fixed rho, in units of C / max K_ii")
    parser.add_argument("--balance-from", type=float, default=1.0)
    parser.add_argument("--relaxation", type=float, default=1.6,
                        help="over-relaxation of the last run (Boyd et al. 2011: 1.5-1.8)")
    parser.add_argument("--cap", type=int, default=2000)
    parser.add_argument("--multipliers-rho", nargs="*", type=float, default=[],
                        help="rho of the method of multipliers, in units of C / max K_ii "
                             "(none: not run)")
    parser.add_argument("--multipliers-cap", type=int, default=50)
    args = parser.parse_args(argv)
    print("arguments:", " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()))
    reference_fit("likert", 100, 3, 1.0)  # compiles the SMO loop before anything is timed
    print(f"projection against sklearn's isotonic_regression: max diff {projection_check():.1e}")
    print("outer iterations to a pair within 1e-3 / 1e-5 / certified (gap 1e-6, violations 1e-7); "
          "at the cap: gap, primal / dual violation; f-block CPU ms per outer iteration "
          "(K-1 exact blocks); libsvm: CPU ms of one boundary's fit / of the K-1 fits; "
          "NORDIC: the current solver's CPU ms; last rho in units of C / max K_ii; bound: "
          "outer iterations x K-1 x 0.1 libsvm fit, over the K-1 libsvm fits (f-blocks: "
          "their measured CPU time instead); run: CPU s of the ADMM run", flush=True)
    for design in args.designs:
        for n in args.n:
            for K in args.K:
                for C in args.C:
                    problem, optimum, nordic_cpu, libsvm_cpu, libsvm_one = reference_fit(
                        design, n, K, C)
                    scale = C / float(np.max(np.diag(problem.gram)))
                    print(f"\n{design} n={n} K={K} C={C:g}: libsvm {1e3 * libsvm_one:.1f} / "
                          f"{1e3 * libsvm_cpu:.1f} ms, NORDIC {1e3 * nordic_cpu:.1f} ms "
                          f"({nordic_cpu / libsvm_cpu:.1f}x)", flush=True)
                    for name, relative, balance, relaxation in settings_of(args):
                        row = run_admm(problem, relative * scale, balance, relaxation, args.cap,
                                       optimum)
                        print(format_admm(name, row, K, scale, libsvm_one, libsvm_cpu),
                              flush=True)
                    for relative in args.multipliers_rho:
                        row = run_multipliers(problem, relative * scale, args.multipliers_cap,
                                              optimum)
                        print(format_multipliers(f"multipliers {relative:g}", row), flush=True)


def format_progress(name, row):
    """The start of a printed line: landmarks, certification or the state at the cap."""
    landmarks = ", ".join(f"{tol:.0e} at {it or '-':>4}" for tol, it in row["landmarks"].items())
    reached = (f"certified at {row['certified']}" if row["certified"] else
               f"cap {row['iterations']}: gap {row['gap']:.1e}, viol "
               f"{row['primal_violation']:.1e} / {row['dual_violation']:.1e}")
    return f"  {name:>18}: {landmarks}, {reached}; obj err {row['objective_error']:+.1e}"


def format_admm(name, row, K, scale, libsvm_one, libsvm_cpu):
    """One printed line of an ADMM run."""
    count = row["certified"] or row["iterations"]
    bound = count * (K - 1) * 0.1 * libsvm_one / libsvm_cpu
    measured = count * row["cpu_per_iteration"] / libsvm_cpu
    return (f"{format_progress(name, row)}; f-blocks {1e3 * row['cpu_per_iteration']:.1f}"
            f" ms/it ({row['rounds_per_block']:.1f} rounds/block, {row['fallbacks']} fallbacks, "
            f"KKT {row['worst_kkt']:.0e}, vs Clarabel {row['clarabel']:+.0e}); last rho "
            f"{row['rho'] / scale:.3g}; bound >= {bound:.0f}x (f-blocks {measured:.0f}x); "
            f"run {row['run_cpu']:.0f} s")


def format_multipliers(name, row):
    """One printed line of a method-of-multipliers run."""
    return (f"{format_progress(name, row)}; {row['cpu_per_iteration']:.2f} s per outer "
            f"iteration (Clarabel on the coupled inner problem)")


if __name__ == "__main__":
    main()
