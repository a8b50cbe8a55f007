"""The data replication method of Cardoso and Pinto da Costa (2007).

Cardoso, J. S. and Pinto da Costa, J. F. (2007). Learning to classify ordinal
data: the data replication method. *Journal of Machine Learning Research* 8,
1393-1429.

Construction (their Section 3, with ``s = K - 1``, i.e. every replica uses
every observation).  Each observation ``x`` in R^d is replicated K-1 times in
R^(d + K - 2):

    x^(1) = (x, 0, ..., 0),   x^(k) = (x, h e_{k-1})  for k = 2..K-1,

with ``e_q`` the q-th unit vector of R^(K-2) and ``h > 0`` a scale.  Replica
``k`` gets the binary label ``y^(k) = -1`` if ``y <= k`` and ``+1`` if ``y > k``
(the paper's dummy labels, Section 2.2).  ONE binary SVM (libsvm C-SVC,
scikit-learn ``SVC``) is trained on the n(K-1) replicas, with the kernel applied
to the augmented vectors (for the rbf kernel the extra coordinates enter
``exp(-gamma ||u - u'||^2)``).  With a linear kernel the K-1 boundaries are
parallel, ``w'x + b + h v_{k-1}`` with ``v_0 = 0``.  A new point gets

    class(x) = 1 + #{k : f(x^(k)) >= 0}.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from nordicstats.compare.base import CompetitorModel, CompetitorResults, KernelSpec, check_positive
from nordicstats.data import binary_signs

__all__ = ["DataReplication", "DataReplicationResults", "replicate"]


def replicate(X, n_levels, h=1.0):
    """Augmented replicas of the rows of X (Cardoso and Pinto da Costa, 2007).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_levels : int
        K.
    h : float, default=1.0

    Returns
    -------
    ndarray of shape ((K-1) n, d + K - 2)
        Replica ``k`` (0-based) of row ``i`` is row ``k * n + i``.

    Examples
    --------
    >>> replicate(np.array([[5.0], [6.0]]), 3, h=2.0).tolist()
    [[5.0, 0.0], [6.0, 0.0], [5.0, 2.0], [6.0, 2.0]]
    """
    X = np.asarray(X, dtype=float)
    n, m = X.shape[0], n_levels - 1
    extra = np.zeros((m, m - 1))
    extra[1:, :] = h * np.eye(m - 1)
    return np.hstack([np.tile(X, (m, 1)), np.repeat(extra, n, axis=0)])


class DataReplication(CompetitorModel):
    """Data replication (DR) ordinal SVM with one binary SVC on replicated data.

    Parameters
    ----------
    endog : array-like of shape (n,)
    exog : array-like of shape (n, d)
    kernel : {"rbf", "linear", "poly"} or callable, default="rbf"
        A callable receives the augmented rows (d + K - 2 columns).
    C : float, default=1.0
    gamma : float, optional
        Default: the paper's median pairwise-distance rule on the original covariates.
    degree : int, default=3
    coef0 : float, default=1.0
    h : float, default=1.0
        Offset of the replicas in the extra coordinates.
    tol : float, default=1e-3
        libsvm stopping tolerance.
    order : sequence, optional

    Examples
    --------
    >>> from nordicstats.datasets import make_nonlinear
    >>> X, y = make_nonlinear(60, d=3, random_state=0)
    >>> res = DataReplication(y, X, gamma=0.5).fit()
    >>> res.decision_function(X.iloc[:2]).shape
    (2, 2)
    """

    def __init__(self, endog, exog, kernel="rbf", C=1.0, gamma=None, degree=3, coef0=1.0,
                 h=1.0, tol=1e-3, order=None):
        super().__init__(endog, exog, order=order)
        self.spec = KernelSpec("DataReplication", self.exog, kernel, C, gamma, degree, coef0)
        self.h = check_positive(h, "h", "DataReplication")
        self.tol = check_positive(tol, "tol", "DataReplication")

    def replicated_data(self):
        """``(X_aug, y_aug)``: the n(K-1) replicas and their +-1 labels."""
        X_aug = replicate(self.exog, self.n_levels, self.h)
        y_aug = binary_signs(self.response.codes, self.n_levels).T.reshape(-1)
        return X_aug, y_aug

    def fit(self):
        """Fit one libsvm C-SVC to the replicated data; returns :class:`DataReplicationResults`."""
        from sklearn.svm import SVC

        start = time.perf_counter()
        X_aug, y_aug = self.replicated_data()
        svc = SVC(C=self.spec.C, tol=self.tol, shrinking=True, **self.spec.sklearn_kwargs())
        svc.fit(X_aug, y_aug)
        return DataReplicationResults(self, svc, time.perf_counter() - start)


class DataReplicationResults(CompetitorResults):
    """Fitted :class:`DataReplication`.

    Attributes
    ----------
    estimator : sklearn.svm.SVC
        The binary SVM on the replicated data.
    n_support : int
        Number of support replicas.
    """

    method_name = "Data replication (Cardoso & Pinto da Costa 2007)"

    def __init__(self, model, estimator, fit_time):
        super().__init__(model, fit_time)
        self.estimator = estimator
        self.n_support = int(estimator.support_.size)

    def _decision(self, X):
        """``f(x^(k))`` for every replica, ndarray (m, K-1); positive = above boundary k."""
        m = X.shape[0]
        values = self.estimator.decision_function(replicate(X, self.model.n_levels, self.model.h))
        return values.reshape(self.model.n_levels - 1, m).T

    @property
    def coef(self):
        """Linear kernel only: weights ``w`` of the covariates and ``v`` of the extra coordinates.

        A Series with the d covariate weights, then ``v_1..v_{K-2}`` (named
        ``replica2..``); boundary ``k`` is ``w'x + intercept + h v_{k-1}``
        (``v_0 = 0``).
        """
        if self.model.spec.kernel.name != "linear":
            raise AttributeError("coef is defined for kernel='linear' only; use "
                                 "decision_function for other kernels.")
        w = np.asarray(self.estimator.coef_, dtype=float).ravel()
        extra = [f"replica{q + 2}" for q in range(len(self.levels) - 2)]
        return pd.Series(w, index=list(self.model.exog_names) + extra)

    def _summary_parts(self):
        spec = self.model.spec
        left = [("Kernel:", spec.kernel.describe()), ("C:", spec.C), ("h:", self.model.h)]
        right = [("Replicas:", self.nobs * (len(self.levels) - 1)),
                 ("Support replicas:", self.n_support),
                 ("Intercept:", f"{float(self.estimator.intercept_[0]):.4g}")]
        notes = ["One binary SVM on K-1 replicas of the data; class = 1 + #{k : f(x^(k)) >= 0}."]
        return left, right, [], notes
