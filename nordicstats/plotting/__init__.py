"""Plotting functions (matplotlib is imported only when a function is called).

Each function has the form ``f(data, ax=None or fig=None, **kwargs)`` and returns the
matplotlib Axes or Figure it drew on.
"""

from nordicstats.plotting.boundaries import boundary_grid, plot_boundaries
from nordicstats.plotting.theory import plot_mode_vs_median

__all__ = ["plot_boundaries", "boundary_grid", "plot_mode_vs_median"]
