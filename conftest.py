"""pytest set-up shared by the tests and the docstring examples.

``pytest`` collects ``tests/`` and, with ``--doctest-modules``, the examples in
every docstring of ``nordicstats/`` (see ``[tool.pytest.ini_options]``).  The
R bridge's modules need rpy2 (the extra ``r``); without it their examples are
not collected.
"""

import importlib.util
import os

os.environ.setdefault("MPLBACKEND", "Agg")

collect_ignore_glob = [] if importlib.util.find_spec("rpy2") else ["nordicstats/r/*"]
