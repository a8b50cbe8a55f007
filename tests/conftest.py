"""Shared pytest set-up.

Tests import their reference helpers from this folder; BLAS runs on one thread
because the suite runs on a busy 2-core machine, where threaded BLAS inside the
many small dense solves is slower and noisier (docs/notes/solvers.md).
"""

import os
import sys

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
sys.path.insert(0, os.path.dirname(__file__))

from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(1)


@pytest.fixture
def always_polish(monkeypatch):
    """Polish NORDIC-1's SMO point after every tolerance: on small problems an SMO step is
    so cheap that the default rule (SMO work since the last polish >= the expected cost
    of the next one) would skip most polishing steps."""
    from nordicstats.solvers import smo

    monkeypatch.setattr(smo, "EXPECTED_ROUNDS", 0)
