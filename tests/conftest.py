"""Shared pytest set-up.

Tests import their reference helpers from this folder; BLAS runs on one thread
because the suite runs on a busy 2-core machine, where threaded BLAS inside the
many small dense solves is slower and noisier (docs/notes/solvers.md).
"""

import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, os.path.dirname(__file__))

from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(1)
