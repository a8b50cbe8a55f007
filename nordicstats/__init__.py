"""nordicstats: noncrossing ordinal classification (NORDIC) for statisticians.

K ordered classes are handled by K-1 binary SVMs ("class <= k" vs "class > k")
trained jointly with constraints that stop their boundaries from crossing
(X. Qiao, *Noncrossing Ordinal Classification*).

>>> import nordicstats as ns
>>> ns.NORDIC  # doctest: +ELLIPSIS
<class 'nordicstats.model.NORDIC'>

Heavy optional parts (SCIP, R, matplotlib) load only when used.
"""

from nordicstats.exceptions import (
                                    ConvergenceWarning,
                                    InferenceWarning,
                                    MissingDependencyError,
                                    SolverError,
                                    SolverLimitWarning,
)
from nordicstats.model import NORDIC
from nordicstats.results import NORDICResults

__version__ = "0.1.0"

__all__ = [
    "NORDIC",
    "NORDICResults",
    "SolverError",
    "SolverLimitWarning",
    "InferenceWarning",
    "ConvergenceWarning",
    "MissingDependencyError",
    "__version__",
]
