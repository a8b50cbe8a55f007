"""``python -m nordicstats.r``: R with the nordicstats bridge already loaded.

Usage::

    python -m nordicstats.r script.R [args ...]   # like Rscript script.R args ...
    python -m nordicstats.r -e 'expr' [args ...]  # like Rscript -e 'expr'
    python -m nordicstats.r                       # an interactive R prompt

R is embedded in this Python process (rpy2), the R package ``nordicstats``
is loaded and its bridge registered before any R code runs, so
``library(nordicstats)`` never starts a second Python.  The script runs in R's
own read-eval-print loop, as under ``Rscript``: visible values print, an error
prints ``Execution halted`` and the exit status is 1, ``quit(status = n)``
exits with n, and ``commandArgs(trailingOnly = TRUE)`` returns ``args``.
One difference: warnings print as they occur (``options(warn = 1)``).
"""

from __future__ import annotations

import os
import sys

USAGE = ("usage: python -m nordicstats.r [script.R | -e EXPR] [args ...]\n"
         "Runs R with the nordicstats bridge loaded (an R prompt without a script).")


def parse_args(argv):
    """Split the command line into (source lines or None, R init options, interactive)."""
    if argv and argv[0] in ("-h", "--help"):
        return None
    if argv and argv[0] == "-e":
        if len(argv) < 2:
            raise SystemExit(USAGE)
        lines, extra, rest = argv[1].splitlines(), [], argv[2:]
    elif argv:
        with open(argv[0], encoding="utf-8") as fh:
            lines, extra, rest = fh.read().splitlines(), [f"--file={argv[0]}"], argv[1:]
    else:
        return [], ["--no-restore"], True
    options = ["--no-echo", "--no-restore", *extra]
    if rest:
        options += ["--args", *rest]
    return lines, options, False


class _Lines:
    """Feeds R's console, one line per read (R's REPL asks line by line)."""

    def __init__(self, lines):
        self._lines = list(lines)

    def __call__(self, prompt):
        # rpy2 treats an empty reply as end of input and appends the newline itself,
        # so blank lines travel as newlines in front of the next non-blank line.
        prefix = ""
        while self._lines:
            line = self._lines.pop(0)
            if line:
                return prefix + line
            prefix += "\n"
        return prefix


def _prompt(prompt):
    try:
        return input(prompt) or "\n"
    except EOFError:
        return ""


def _install_callbacks(reader):
    from rpy2.rinterface_lib import callbacks, openrlib

    def write_out(s):
        sys.stdout.write(s)
        sys.stdout.flush()

    def write_err(s):
        sys.stderr.write(s)
        sys.stderr.flush()

    def cleanup(saveact, status, runlast):
        rlib = openrlib.rlib
        if runlast:
            rlib.R_dot_Last()
        rlib.R_RunExitFinalizers()
        rlib.R_CleanTempDir()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    callbacks.consolewrite_print = write_out
    callbacks.consolewrite_warnerror = write_err
    callbacks.showmessage = write_err
    callbacks.consoleread = reader
    callbacks.cleanup = cleanup


def main(argv=None):
    """Run R with the bridge loaded; does not return (R exits the process)."""
    parsed = parse_args(sys.argv[1:] if argv is None else list(argv))
    if parsed is None:
        print(USAGE)
        return 0
    lines, options, interactive = parsed
    from nordicstats.r import bridge
    from nordicstats.r._rpy2 import initialize, ri

    _install_callbacks(_prompt if interactive else _Lines(lines))
    initialize(interactive=interactive, args=options)
    try:
        bridge.attach()
    except ri.embedded.RRuntimeError as exc:
        sys.stderr.write(f"could not load the R package nordicstats: {exc}\nInstall it with "
                         "R CMD INSTALL <nordicstats repository> (or set R_LIBS).\n")
        return 2
    if not interactive:
        ri.baseenv["options"](warn=ri.IntSexpVector([1]))
    from rpy2.rinterface_lib import openrlib

    openrlib.rlib.run_Rmainloop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
