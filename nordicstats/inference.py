"""Large-sample inference for linear NORDIC: the Bahadur sandwich and Wald tests.

For boundary k write x~ = (1, x')', beta_k = (b_k, w_k')' and the margin residual
R_k = 1 - Y^(k) x~' beta_k*.  Koo, Lee, Kim & Park (2008, JMLR 9:1343-1368) give the
Bahadur representation of the linear SVM,

    sqrt(n) (beta^_k - beta_k*) = H_k^{-1} n^{-1/2} sum_i 1{R_ik >= 0} Y_i^(k) x~_i + o_P(1),

with H_k = E[delta(R_k) x~ x~'] (the Hessian of the population hinge risk) and
G_k = E[1{R_k >= 0} x~ x~'].  The paper's Theorem 1 (Section 5.2, eq. linearNORDIC)
shows that the noncrossing-constrained solution has the same limit law as the
unconstrained one, so the same representation holds for linear NORDIC-1/2 and BSVM.
Stacking the K-1 representations gives the joint covariance

    Cov(beta^_k, beta^_l) = H_k^{-1} G_kl H_l^{-1} / n,
    G_kl = E[1{R_k >= 0} 1{R_l >= 0} Y^(k) Y^(l) x~ x~'],

which is what Wald tests across boundaries (e.g. parallel boundaries) need.

Plug-in estimator (:class:`BahadurCovariance`): r_ik = 1 - y_i^(k) x~_i' beta^_k,
G^_kl = n^{-1} sum_i s_ik s_il' with scores s_ik = 1{r_ik >= 0} y_i^(k) x~_i, and
H^_k = (n h_k)^{-1} sum_i kappa(r_ik / h_k) x~_i x~_i' with a smoothing kernel kappa
and bandwidth h_k = c * min(sd(r_k), IQR(r_k) / 1.34) * n^(-1/3) (the Hall-Sheather
rate used for the same job in quantile regression; c = 1 by default).  This choice
was checked by Monte Carlo (see ``benchmarks/mc_coverage.py`` and the tests).

Parameters are stacked boundary-major: the vector is ``params.T.ravel()`` for a
``params`` array of shape (1 + d, K-1) whose row 0 is the intercept.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats

from nordicstats.exceptions import InferenceWarning

__all__ = [
    "BahadurCovariance",
    "WaldTestResult",
    "bandwidth",
    "check_cov_kwds",
    "margin_residuals",
    "parse_restrictions",
    "parallel_restrictions",
    "wald_test",
    "side_count_warning",
    "population_svm",
    "COND_MAX",
    "MIN_SIDE_COUNT",
    "KERNELS",
]

#: Largest condition number of the scaled Hessian D^{-1/2} H^ D^{-1/2} (D = diag H^)
#: for which Wald standard errors are reported; above it the boundary's are NaN.
COND_MAX = 1e8
#: Fewer observations than this on either side of a boundary triggers an InferenceWarning
#: (Monte Carlo: at n <= 200 in balanced designs, i.e. ~100 per side, the slopes are biased
#: upward and even the true SD under-covers; see the shared notes).
MIN_SIDE_COUNT = 100
#: Residuals within this distance of 0 or 2 for every row mean a constant classifier (w = 0).
CONSTANT_TOL = 1e-7

_SQRT5 = np.sqrt(5.0)


def _gaussian(u):
    return np.exp(-0.5 * u * u) / np.sqrt(2.0 * np.pi)


def _epanechnikov(u):
    # Scaled to unit variance (support |u| <= sqrt 5) so that one bandwidth rule serves both.
    return np.where(np.abs(u) <= _SQRT5, 0.75 / _SQRT5 * (1.0 - u * u / 5.0), 0.0)


#: Smoothing kernels for H^, each a density with mean 0 and variance 1.
KERNELS = {"gaussian": _gaussian, "epanechnikov": _epanechnikov}
_COV_KWDS = {"bandwidth": "hall-sheather", "kernel": "gaussian", "constant": 1.0}
_BOOT_KWDS = {"n_boot": 200, "random_state": None, "n_jobs": 1, "disable": True}


def check_cov_kwds(cov_type, cov_kwds):
    """Validate ``cov_type`` and ``cov_kwds`` and fill in defaults.

    Parameters
    ----------
    cov_type : {"bahadur", "bootstrap"}
    cov_kwds : dict or None
        ``"bahadur"``: ``bandwidth`` ("hall-sheather" or a positive float, or one per
        boundary), ``kernel`` ("gaussian" or "epanechnikov"), ``constant`` (positive
        float multiplying the rule).  ``"bootstrap"``: ``n_boot`` (int >= 20),
        ``random_state``, ``n_jobs``, ``disable`` (hide the progress bar).

    Returns
    -------
    dict
        All options for the chosen ``cov_type``.

    Raises
    ------
    ValueError
        Unknown ``cov_type``, unknown option names (the valid ones are listed) or
        invalid values.
    """
    defaults = {"bahadur": _COV_KWDS, "bootstrap": _BOOT_KWDS}
    if cov_type not in defaults:
        raise ValueError(
            f"The 'cov_type' parameter must be one of {sorted(defaults)}. Got {cov_type!r} instead."
        )
    kwds = dict(cov_kwds or {})
    unknown = sorted(set(kwds) - set(defaults[cov_type]))
    if unknown:
        raise ValueError(
            f"cov_kwds has unknown option(s) {unknown} for cov_type={cov_type!r}; "
            f"valid options are {sorted(defaults[cov_type])}."
        )
    out = {**defaults[cov_type], **kwds}
    if cov_type == "bahadur":
        _check_bahadur_kwds(out)
    else:
        n_boot = out["n_boot"]
        if not isinstance(n_boot, (int, np.integer)) or n_boot < 20:
            raise ValueError(
                f"cov_kwds['n_boot'] must be an integer >= 20. Got {n_boot!r} instead."
            )
    return out


def _check_bahadur_kwds(kwds):
    if kwds["kernel"] not in KERNELS:
        raise ValueError(
            f"cov_kwds['kernel'] must be one of {sorted(KERNELS)}. Got {kwds['kernel']!r} instead."
        )
    constant = kwds["constant"]
    if not isinstance(constant, (int, float, np.number)) or not constant > 0:
        raise ValueError(f"cov_kwds['constant'] must be a positive number. Got {constant!r} instead.")
    bw = kwds["bandwidth"]
    if isinstance(bw, str):
        if bw != "hall-sheather":
            raise ValueError(
                "cov_kwds['bandwidth'] must be 'hall-sheather' or a positive number "
                f"(or one per boundary). Got {bw!r} instead."
            )
        return
    values = np.atleast_1d(np.asarray(bw, dtype=float))
    if values.ndim != 1 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(
            f"cov_kwds['bandwidth'] must be 'hall-sheather' or positive number(s). Got {bw!r}."
        )


# --- plug-in sandwich ------------------------------------------------------------------------
def augment(X):
    """x~ = (1, x')' for every row: the design with a leading column of ones."""
    X = np.asarray(X, dtype=float)
    return np.column_stack([np.ones(X.shape[0]), X])


def margin_residuals(X, signs, params):
    """r_ik = 1 - y_i^(k) (b_k + x_i' w_k), shape (n, K-1).

    Examples
    --------
    >>> margin_residuals(np.array([[1.0], [-1.0]]), np.array([[1.0], [-1.0]]),
    ...                  np.array([[0.0], [2.0]])).ravel().tolist()
    [-1.0, -1.0]
    """
    return 1.0 - np.asarray(signs, dtype=float) * (augment(X) @ np.asarray(params, dtype=float))


def bandwidth(residuals, rule="hall-sheather", constant=1.0):
    """Bandwidth for the kernel estimate of H, one per column of ``residuals``.

    h = constant * min(sd(r), IQR(r) / 1.34) * n^(-1/3).

    Parameters
    ----------
    residuals : ndarray of shape (n,) or (n, K-1)
    rule : "hall-sheather" or float or array of K-1 floats
        A number is used as the bandwidth itself (``constant`` is then ignored).
    constant : float, default=1.0
        Constants 1 to 1.5 gave 93-96% coverage in the notes' Monte Carlo; 0.5 under-covers.

    Returns
    -------
    ndarray of shape (K-1,)

    Examples
    --------
    >>> r = np.linspace(-1, 1, 1001)
    >>> bool(np.isclose(bandwidth(r)[0], min(r.std(ddof=1), 1.0 / 1.34) * 1001 ** (-1 / 3)))
    True
    """
    r = np.asarray(residuals, dtype=float)
    r = r[:, None] if r.ndim == 1 else r
    if not isinstance(rule, str):
        return np.broadcast_to(np.asarray(rule, dtype=float), (r.shape[1],)).copy()
    q75, q25 = np.percentile(r, [75, 25], axis=0)
    scale = np.minimum(r.std(axis=0, ddof=1), (q75 - q25) / 1.34)
    return constant * scale * r.shape[0] ** (-1.0 / 3.0)


class BahadurCovariance:
    """Plug-in Koo et al. (2008) sandwich for the K-1 linear boundaries, jointly.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    signs : ndarray of shape (n, K-1)
        y_i^(k) in {-1, +1}.
    params : ndarray of shape (1 + d, K-1)
        Row 0 the intercepts b_k, rows 1.. the weights w_k.
    bandwidth : "hall-sheather" or float or sequence of K-1 floats
    kernel : {"gaussian", "epanechnikov"}
    constant : float, default=1.0

    Notes
    -----
    ``bread`` is block-diagonal with blocks H^_k^{-1}; ``meat`` is G^ with blocks
    G^_kl; ``cov = bread @ meat @ bread / n``.  A boundary whose classifier is constant
    (w^_k = 0, every r_ik in {0, 2}) or whose scaled H^_k has condition number above
    :data:`COND_MAX` has NaN rows and columns; the reason is in ``degenerate``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 1)); y = np.where(X[:, 0] + rng.normal(size=400) > 0, 1., -1.)
    >>> est = BahadurCovariance(X, y[:, None], np.array([[0.0], [1.2]]))
    >>> est.cov.shape, est.degenerate
    ((2, 2), {})
    """

    def __init__(self, X, signs, params, bandwidth="hall-sheather", kernel="gaussian",
                 constant=1.0):
        self.X = augment(X)
        self.signs = np.asarray(signs, dtype=float).reshape(self.X.shape[0], -1)
        self.params = np.asarray(params, dtype=float).reshape(self.X.shape[1], -1)
        self.kernel = kernel
        self.residuals = 1.0 - self.signs * (self.X @ self.params)
        self.bandwidths = globals()["bandwidth"](self.residuals, bandwidth, constant)
        self.degenerate = {}
        self.hessians = [self._hessian(k) for k in range(self.n_boundaries)]
        self._check()

    @property
    def nobs(self):
        return self.X.shape[0]

    @property
    def n_boundaries(self):
        return self.signs.shape[1]

    def _hessian(self, k):
        h = self.bandwidths[k]
        weights = KERNELS[self.kernel](self.residuals[:, k] / h) / h
        return (self.X * weights[:, None]).T @ self.X / self.nobs

    def _check(self):
        for k in range(self.n_boundaries):
            r = self.residuals[:, k]
            on_margin_or_wrong = (np.abs(r) <= CONSTANT_TOL) | (np.abs(r - 2.0) <= CONSTANT_TOL)
            if np.all(on_margin_or_wrong) or not np.any(self.params[1:, k]):
                self.degenerate[k] = ("the fitted classifier is constant (w = 0: every margin "
                                      "residual is 0 or 2), so the Hessian is not identified")
                continue
            cond = scaled_condition_number(self.hessians[k])
            if not cond <= COND_MAX:
                self.degenerate[k] = (f"the estimated Hessian H is near-singular (scaled "
                                      f"condition number {cond:.3g} > {COND_MAX:.0e})")

    @property
    def scores(self):
        """s_ik = 1{r_ik >= 0} y_i^(k) x~_i, stacked boundary-major: shape (n, (K-1)(1+d))."""
        active = (self.residuals >= 0) * self.signs
        return np.concatenate([self.X * active[:, [k]] for k in range(self.n_boundaries)], axis=1)

    @property
    def meat(self):
        """G^ = n^{-1} S'S with blocks G^_kl."""
        S = self.scores
        return S.T @ S / self.nobs

    @property
    def bread(self):
        """Block-diagonal matrix of H^_k^{-1} (NaN blocks for degenerate boundaries)."""
        p = self.X.shape[1]
        out = np.zeros((p * self.n_boundaries,) * 2)
        for k, H in enumerate(self.hessians):
            block = slice(k * p, (k + 1) * p)
            out[block, block] = np.nan if k in self.degenerate else np.linalg.inv(H)
        return out

    @property
    def cov(self):
        """Joint covariance of the boundary-major parameter vector, H^-1 G H^-1 / n."""
        bread = self.bread
        cov = bread @ self.meat @ bread / self.nobs
        return (cov + cov.T) / 2.0

    def describe(self):
        """Short text for summaries: kernel and bandwidth per boundary."""
        bws = ", ".join(f"{h:.4g}" for h in self.bandwidths)
        return f"Bahadur sandwich (Koo et al. 2008), {self.kernel} kernel, bandwidth {bws}"


def scaled_condition_number(H):
    """Condition number of D^{-1/2} H D^{-1/2}, D = diag(H) (inf if a diagonal entry is <= 0)."""
    d = np.diag(H)
    if not np.all(np.isfinite(H)) or np.any(d <= 0):
        return np.inf
    scale = 1.0 / np.sqrt(d)
    return float(np.linalg.cond(H * np.outer(scale, scale)))


def side_count_warning(signs, names):
    """InferenceWarning text when a boundary has fewer than MIN_SIDE_COUNT rows on a side, else None."""
    signs = np.asarray(signs)
    smallest = np.minimum((signs > 0).sum(axis=0), (signs < 0).sum(axis=0))
    small = [f"{name} ({int(c)})" for name, c in zip(names, smallest) if c < MIN_SIDE_COUNT]
    if not small:
        return None
    return (f"boundaries {', '.join(small)} have fewer than {MIN_SIDE_COUNT} observations on one "
            "side; the Bahadur intervals under-cover at such sizes (slopes are biased away from "
            "zero). Consider cov_type='bootstrap' or more data.")


# --- Wald tests ------------------------------------------------------------------------------
@dataclass(frozen=True)
class WaldTestResult:
    """A chi-square Wald test of R beta = q.

    Attributes
    ----------
    statistic : float
        (R beta^ - q)' (R V R')^{-1} (R beta^ - q).
    df : int
        Number of restrictions (rank of R).
    pvalue : float
        P(chi2_df >= statistic).
    hypothesis : tuple of str
        The restrictions in words.
    title : str
    """

    statistic: float
    df: int
    pvalue: float
    hypothesis: tuple = field(default_factory=tuple)
    title: str = "Wald test"

    def __str__(self):
        h0 = "\n".join(f"    {h}" for h in self.hypothesis)
        return (f"{self.title}\nH0:\n{h0}\nchi2({self.df}) = {self.statistic:.4f}, "
                f"p-value = {self.pvalue:.4g}")


def wald_test(params, cov, R, q=None, hypothesis=(), title="Wald test"):
    """Chi-square Wald test of the linear restrictions R beta = q.

    Parameters
    ----------
    params : ndarray of shape (p,)
        Boundary-major parameter vector.
    cov : ndarray of shape (p, p)
    R : ndarray of shape (m, p)
    q : ndarray of shape (m,), optional
        Defaults to zeros.

    Returns
    -------
    WaldTestResult
        NaN statistic and p-value (with an InferenceWarning) when the restricted
        covariance involves a NaN entry.

    Raises
    ------
    ValueError
        Wrong shapes or linearly dependent restrictions.

    Examples
    --------
    >>> str(wald_test(np.array([1.0, 0.0]), np.eye(2), np.array([[1.0, -1.0]])).df)
    '1'
    """
    params = np.asarray(params, dtype=float).ravel()
    R = np.atleast_2d(np.asarray(R, dtype=float))
    q = np.zeros(R.shape[0]) if q is None else np.atleast_1d(np.asarray(q, dtype=float))
    if R.shape[1] != params.size or q.shape != (R.shape[0],):
        raise ValueError(
            f"R must have shape (m, {params.size}) and q shape (m,); got R {R.shape}, q {q.shape}."
        )
    if np.linalg.matrix_rank(R) < R.shape[0]:
        raise ValueError(f"The {R.shape[0]} restrictions in R are linearly dependent; drop the "
                         "redundant rows.")
    middle = R @ cov @ R.T
    hypothesis = tuple(hypothesis) or tuple(_describe_rows(R, q))
    if not np.all(np.isfinite(middle)):
        warnings.warn("The covariance of the restricted combination is not available (NaN); "
                      "see the InferenceWarning raised when the covariance was computed.",
                      InferenceWarning, stacklevel=2)
        return WaldTestResult(np.nan, R.shape[0], np.nan, hypothesis, title)
    diff = R @ params - q
    stat = float(diff @ np.linalg.solve(middle, diff))
    return WaldTestResult(stat, R.shape[0], float(stats.chi2.sf(stat, R.shape[0])), hypothesis,
                          title)


def _describe_rows(R, q, labels=None):
    for row, value in zip(R, q):
        parts = [f"{c:+g}*{labels[j] if labels else f'p[{j}]'}" for j, c in enumerate(row) if c]
        yield f"{' '.join(parts)} = {value:g}"


def parallel_restrictions(n_boundaries, n_terms):
    """R for H0: w_1 = ... = w_{K-1} (slopes only), boundary-major layout.

    Row (k, j) is w_{k,j} - w_{k+1,j} = 0 for k = 1..K-2 and slopes j = 1..d.

    Examples
    --------
    >>> parallel_restrictions(3, 2).tolist()
    [[0.0, 1.0, 0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0, -1.0]]
    """
    if n_boundaries < 2:
        raise ValueError("test_parallel needs at least two boundaries (K >= 3 classes).")
    rows = []
    for k in range(n_boundaries - 1):
        for j in range(1, n_terms):
            row = np.zeros(n_boundaries * n_terms)
            row[k * n_terms + j], row[(k + 1) * n_terms + j] = 1.0, -1.0
            rows.append(row)
    return np.array(rows)


_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"


def parse_restrictions(text, labels):
    """Turn ``"x1@1|2 = x1@2|3, 2*x2@1|2 - x2@2|3 = 0.5"`` into (R, q).

    Syntax: restrictions separated by commas (or a list of strings); each is
    ``lhs = rhs`` (``= 0`` may be omitted), where each side is a sum of terms
    ``[number *] label`` or plain numbers joined by ``+``/``-``.  A label is
    ``term@boundary`` (e.g. ``Intercept@1|2``).  Labels are matched literally
    against the known ones, longest first, so names containing ``+``, ``-`` or ``:``
    (patsy interactions) work.

    Parameters
    ----------
    text : str or sequence of str
    labels : sequence of str
        The ``term@boundary`` labels in boundary-major order.

    Returns
    -------
    R : ndarray of shape (m, p)
    q : ndarray of shape (m,)

    Examples
    --------
    >>> R, q = parse_restrictions("a@1|2 = a@2|3 + 1", ["a@1|2", "a@2|3"])
    >>> R.tolist(), q.tolist()
    ([[1.0, -1.0]], [1.0])
    """
    pieces = [text] if isinstance(text, str) else list(text)
    pieces = [p.strip() for piece in pieces for p in _split_commas(piece, labels) if p.strip()]
    if not pieces:
        raise ValueError("The hypothesis string is empty; write e.g. 'x1@1|2 = x1@2|3'.")
    index = {label: j for j, label in enumerate(labels)}
    token = re.compile("|".join([re.escape(lb) for lb in sorted(labels, key=len, reverse=True)]
                                + [_NUMBER, r"[-+*=]"]))
    R, q = np.zeros((len(pieces), len(labels))), np.zeros(len(pieces))
    for row, piece in enumerate(pieces):
        sides = _tokenize(piece, token, labels)
        if sides.count("=") > 1:
            raise ValueError(f"Restriction {piece!r} has more than one '='.")
        split = sides.index("=") if "=" in sides else len(sides)
        for side, tokens in ((1.0, sides[:split]), (-1.0, sides[split + 1:])):
            for coef, label in _linear_terms(tokens, piece):
                if label is None:
                    q[row] -= side * coef
                else:
                    R[row, index[label]] += side * coef
    return R, q


def _split_commas(piece, labels):
    """Split on commas that are not part of a label."""
    masked = piece
    for label in sorted(labels, key=len, reverse=True):
        if "," in label:
            masked = masked.replace(label, "\0" * len(label))
    cuts = [i for i, ch in enumerate(masked) if ch == ","]
    bounds = [-1, *cuts, len(piece)]
    return [piece[a + 1:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _tokenize(piece, token, labels):
    tokens, pos = [], 0
    while pos < len(piece):
        if piece[pos].isspace():
            pos += 1
            continue
        match = token.match(piece, pos)
        if match is None:
            shown = ", ".join(labels[:6]) + (", ..." if len(labels) > 6 else "")
            raise ValueError(f"Cannot parse {piece[pos:]!r} in restriction {piece!r}. Parameters "
                             f"are written term@boundary, e.g. one of: {shown}.")
        tokens.append(match.group())
        pos = match.end()
    return tokens


def _linear_terms(tokens, piece):
    """Yield (coefficient, label or None) from a token list like ['-', '2', '*', 'x@1|2']."""
    i, sign, expect_term = 0, 1.0, True
    while i < len(tokens):
        tok = tokens[i]
        if tok in "+-" and expect_term:
            sign *= -1.0 if tok == "-" else 1.0
            i += 1
            continue
        if not expect_term and tok in "+-":
            expect_term, sign = True, 1.0
            continue
        if tok in "*=" or not expect_term:
            raise ValueError(f"Unexpected {tok!r} in restriction {piece!r}.")
        if re.fullmatch(_NUMBER, tok) and i + 2 < len(tokens) + 1 and tokens[i + 1:i + 2] == ["*"]:
            if i + 2 >= len(tokens) or re.fullmatch(_NUMBER, tokens[i + 2]):
                raise ValueError(f"Expected a parameter after '*' in restriction {piece!r}.")
            yield sign * float(tok), tokens[i + 2]
            i += 3
        elif re.fullmatch(_NUMBER, tok):
            yield sign * float(tok), None
            i += 1
        else:
            yield sign, tok
            i += 1
        expect_term = False
    if expect_term and tokens:
        raise ValueError(f"Restriction {piece!r} ends with an operator.")


# --- population quantities for Gaussian-mixture designs ---------------------------------------
def _component_moments(beta, weight, mean, cov, sign):
    """Pieces of risk, gradient, G and H for one Gaussian component with label sign."""
    mean_a = np.concatenate([[1.0], mean])
    cov_a = np.zeros((mean_a.size,) * 2)
    cov_a[1:, 1:] = cov
    a = sign * beta
    m, v = float(a @ mean_a), float(a @ cov_a @ a)
    sd = np.sqrt(v)
    t = (1.0 - m) / sd
    Phi, phi = stats.norm.cdf(t), stats.norm.pdf(t)
    risk = weight * ((1.0 - m) * Phi + sd * phi)
    Sa = cov_a @ a
    grad = -weight * sign * (Phi * mean_a - Sa * phi / sd)
    cond_cov = cov_a - np.outer(Sa, Sa) / v
    at_one = mean_a + Sa * (1.0 - m) / v
    hess = weight * phi / sd * (cond_cov + np.outer(at_one, at_one))
    # E[1{M <= 1} x~x~'] with x~ = mean + Sa Z / sd + independent part
    e0, e1, e2 = Phi, -phi, Phi - t * phi
    u = Sa / sd
    gmat = weight * (e0 * (cond_cov + np.outer(mean_a, mean_a))
                     + e1 * (np.outer(mean_a, u) + np.outer(u, mean_a)) + e2 * np.outer(u, u))
    return risk, grad, hess, gmat


def population_svm(components, start=None):
    """Population linear SVM for a Gaussian-mixture design, in closed form.

    Minimises the hinge risk E[(1 - Y x~'beta)_+] over beta = (b, w')' when X given
    its mixture component is N(mu_c, S_c) and Y = s_c.  With M = Y x~'beta ~ N(m, v)
    in a component, E[(1 - M)_+] = (1 - m) Phi(u) + sqrt(v) phi(u), u = (1 - m)/sqrt(v)
    (shared notes, "Designs with a known truth"); G and H follow from truncated-normal
    moments.

    Parameters
    ----------
    components : sequence of (weight, mean, cov, sign)
    start : ndarray, optional
        Starting beta; defaults to (0, difference of the signed means).

    Returns
    -------
    dict
        ``beta`` (1 + d,), ``risk``, ``G``, ``H`` and ``avar = H^{-1} G H^{-1}`` (the
        covariance of sqrt(n)(beta^ - beta*)).

    Examples
    --------
    >>> comps = [(0.5, np.array([1.0]), np.eye(1), 1.0), (0.5, np.array([-1.0]), np.eye(1), -1.0)]
    >>> out = population_svm(comps)
    >>> round(float(out["risk"]), 6) == round(float(out["G"][0, 0]), 6)
    True
    """
    comps = [(float(w), np.asarray(mu, float), np.asarray(S, float), float(s))
             for w, mu, S, s in components]

    def parts(beta):
        return [_component_moments(beta, *c) for c in comps]

    def fun(beta):
        p = parts(beta)
        return sum(x[0] for x in p), sum(x[1] for x in p)

    if start is None:
        start = np.concatenate([[0.0], sum(w * s * mu for w, mu, _, s in comps)])
    sol = optimize.minimize(fun, start, jac=True, method="trust-exact",
                            hess=lambda b: sum(x[2] for x in parts(b)),
                            options={"gtol": 1e-12})
    p = parts(sol.x)
    G, H = sum(x[3] for x in p), sum(x[2] for x in p)
    Hinv = np.linalg.inv(H)
    return {"beta": sol.x, "risk": sum(x[0] for x in p), "G": G, "H": H,
            "avar": Hinv @ G @ Hinv, "converged": bool(sol.success)}
