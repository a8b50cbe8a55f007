"""The paper's study harness: the experiments of Sections 6 and 7, their report and the demo.

This package lives beside ``benchmarks/`` in the repository and is not part of the
installed ``nordicstats`` distribution; import it from the repository root.  It uses the
public API of ``nordicstats`` only (``tests/test_layering.py`` checks that no module here
imports a name starting with ``_`` from the library, and that the library never imports
this package).

* :mod:`studies.experiments` -- designs x methods x replications, resumable JSON-lines rows;
* :mod:`studies.replication`, :mod:`studies.replication_claims`,
  :mod:`studies.replication_deviations` -- the specifications of the paper's studies, the
  tests of its claims and the report ``benchmarks/results/REPLICATION.md``;
* :mod:`studies.plotting` -- the figures of the studies;
* :mod:`studies.demo` -- ``python -m studies.demo``, every method on the balance scale.
"""
