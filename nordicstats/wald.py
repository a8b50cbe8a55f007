"""Wald statistics of ordinal results: one definition of ``bse``, ``tvalues``, ``pvalues``,
``conf_int`` and ``summary_frame`` for every results class with a covariance.

For estimates :math:`\\hat\\theta_j` with covariance :math:`\\hat V` (asymptotically normal,
as the Bahadur representation of the paper's Theorem 1 gives for linear NORDIC, and the
observed information for the ordered logit)::

    se_j = sqrt(V_jj),   z_j = theta_j / se_j,   p_j = 2 (1 - Phi(|z_j|)),
    interval_j = theta_j -+ z_{1-alpha/2} se_j.

A results class mixes in :class:`WaldMixin` and provides ``params`` (a Series, or a
terms x boundaries DataFrame whose columns are stacked boundary by boundary) and two
hooks: ``_wald_covariance()``, the covariance of the stacked estimates (raising
``AttributeError`` with the reason when there is none), and ``_wald_index()``, the
index of the stacked estimates.  Optional hooks: ``_withheld()`` (estimates whose z,
p-value and interval are NaN although they have a standard error), ``_summary_index()``
(rows of :meth:`WaldMixin.summary_frame`) and ``_conf_int_attrs()``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["WaldMixin"]


def _stacked(table):
    """A Series as is, a terms x boundaries DataFrame column after column (boundary-major)."""
    return np.asarray(table).T.ravel()


class WaldMixin:
    """``bse``, ``tvalues``, ``pvalues``, ``conf_int`` and ``summary_frame`` from a covariance.

    See the module docstring for the hooks a results class provides.

    Examples
    --------
    >>> class Fit(WaldMixin):
    ...     params = pd.Series([1.0, -0.5], index=["x1", "x2"])
    ...     def _wald_covariance(self):
    ...         return np.diag([0.25, 0.04])
    ...     def _wald_index(self):
    ...         return self.params.index
    >>> Fit().tvalues.tolist()
    [2.0, -2.5]
    >>> Fit().conf_int().round(3).to_numpy().tolist()
    [[0.02, 1.98], [-0.892, -0.108]]
    """

    def _wald_covariance(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _wald_index(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _withheld(self):
        """Stacked mask of the estimates whose z, p-value and interval are withheld."""
        return np.zeros(_stacked(self.params).size, dtype=bool)

    def _summary_index(self):
        return self._wald_index()

    def _conf_int_attrs(self):
        return {}

    def _shaped(self, vector, name):
        """A stacked vector shaped like ``params`` (a Series gets ``name``)."""
        params = self.params
        if isinstance(params, pd.Series):
            return pd.Series(vector, index=params.index, name=name)
        return pd.DataFrame(np.asarray(vector).reshape(params.shape[1], params.shape[0]).T,
                            index=params.index, columns=params.columns)

    def _interval_se(self):
        """Stacked standard errors, NaN where intervals are withheld."""
        se = _stacked(self.bse)
        return np.where(self._withheld(), np.nan, se)

    @property
    def bse(self):
        """Standard errors ``sqrt(diag(cov))``, shaped like ``params``."""
        return self._shaped(np.sqrt(np.diag(self._wald_covariance())), "bse")

    @property
    def tvalues(self):
        """Wald z statistics ``params / bse`` (NaN where intervals are withheld)."""
        return self._shaped(_stacked(self.params) / self._interval_se(), "z")

    @property
    def pvalues(self):
        """Two-sided normal p-values ``2 (1 - Phi(|z|))`` of H0: coefficient = 0."""
        return self._shaped(2.0 * stats.norm.sf(np.abs(_stacked(self.tvalues))), "P>|z|")

    def conf_int(self, alpha=0.05):
        """Wald intervals ``params -+ z_{1-alpha/2} bse``, columns ``lower`` and ``upper``.

        One row per stacked estimate (NaN where intervals are withheld).
        """
        if not 0 < alpha < 1:
            raise ValueError(f"The 'alpha' parameter must be in (0, 1). Got {alpha!r} instead.")
        estimates = _stacked(self.params)
        half = stats.norm.ppf(1 - alpha / 2) * self._interval_se()
        ci = pd.DataFrame({"lower": estimates - half, "upper": estimates + half},
                          index=self._wald_index())
        ci.attrs.update(self._conf_int_attrs())
        return ci

    def summary_frame(self, alpha=0.05):
        """coef, std err, z, P>|z| and the interval, one row per estimate."""
        ci = self.conf_int(alpha)
        frame = pd.DataFrame({
            "coef": _stacked(self.params),
            "std err": _stacked(self.bse),
            "z": _stacked(self.tvalues),
            "P>|z|": _stacked(self.pvalues),
        }, index=self._summary_index())
        frame[f"[{alpha / 2:g}"], frame[f"{1 - alpha / 2:g}]"] = (ci["lower"].to_numpy(),
                                                                  ci["upper"].to_numpy())
        return frame
