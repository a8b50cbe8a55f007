"""Import rpy2 (the optional extra ``r``) and start or attach to R.

Two hosts are supported:

* Python hosts R (``python -m nordicstats.r``, pytest): :func:`initialize`
  embeds R in this process.
* R hosts Python (``library(nordicstats)`` started Python through
  reticulate): the R package sets ``R_SESSION_INITIALIZED=PID=<pid>`` before
  starting Python, and rpy2 then attaches to the running R instead of
  starting a second one.
"""

from __future__ import annotations

import atexit
import importlib.util
import os

from nordicstats.exceptions import missing_dependency

__all__ = ["ri", "initialize", "hosted_by_r"]

if "RPY2_CFFI_MODE" not in os.environ:
    # Pick the mode that is present so that rpy2 does not print an import error
    # for the API mode when only the ABI mode was built (no r-base-dev).
    os.environ["RPY2_CFFI_MODE"] = (
        "API" if importlib.util.find_spec("_rinterface_cffi_api") else "ABI")

try:
    import rpy2.rinterface as ri
    from rpy2.rinterface_lib import embedded
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise missing_dependency("rpy2", "r", "nordicstats.r (the R bridge)") from exc


def hosted_by_r():
    """True when this Python runs inside an R process that started it."""
    return embedded.is_r_externally_initialized()


def initialize(interactive=False, args=()):
    """Start embedded R, or attach to the R process hosting this Python.

    Parameters
    ----------
    interactive : bool, default=False
        Value of R's ``interactive()`` for an embedded R (rpy2 defaults to
        ``TRUE``, which makes R scripts behave unlike ``Rscript``).
    args : sequence of str
        Extra command-line arguments for an embedded R; ``commandArgs()``
        returns them.  Ignored once R is running.

    Returns
    -------
    bool
        True if R was already running in this process.
    """
    if embedded.isinitialized():
        return True
    external = hosted_by_r()
    if not external and args:
        embedded.set_initoptions(tuple(embedded.get_initoptions()) + tuple(args))
    # rpy2 puts R's library path (R_HOME/lib and the system library folder) into
    # LD_LIBRARY_PATH while starting R.  R needs it only in this process, where its
    # libraries are loaded by then; left in the environment it reaches every child
    # process, where a Python linked to another libpython of the same name (pyenv's
    # next to Debian's) loads the system's copy instead and runs mismatched.
    library_path = os.environ.get("LD_LIBRARY_PATH")
    ri.initr(interactive=interactive)
    if library_path is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = library_path
    if external:
        # The R process owns its own shutdown; ending R from Python's atexit would
        # run R's exit code twice.
        atexit.unregister(ri.endr)
    return external
