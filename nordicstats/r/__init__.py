"""R interoperability through rpy2 (the optional extra ``r``).

* :mod:`nordicstats.r.convert` -- NA-correct conversion of R data.frames and
  vectors to pandas/numpy and back (never rpy2's default pandas conversion);
* :mod:`nordicstats.r.bridge` -- the single R -> Python call path: Python
  errors become R errors, Python warnings R warnings, both worded for R users by
  :mod:`nordicstats.r.wording`;
* :mod:`nordicstats.r.api` -- the functions the R package ``nordicstats``
  calls (fit, predict, residuals, summary tables, vcov, confint, the parallel
  test, tuning, theory helpers);
* ``python -m nordicstats.r script.R`` -- Rscript with the bridge loaded.

Nothing else in nordicstats imports this package, so rpy2 and R are needed
only here.  Importing it without rpy2 raises ``MissingDependencyError``
naming ``pip install 'nordicstats[r]'``.
"""

from nordicstats.r._rpy2 import initialize
from nordicstats.r.bridge import attach, expose, exposed
from nordicstats.r.convert import dataframe_from_r, dataframe_to_r, py_to_r, r_to_py

__all__ = ["initialize", "attach", "expose", "exposed", "py_to_r", "r_to_py",
           "dataframe_to_r", "dataframe_from_r"]
