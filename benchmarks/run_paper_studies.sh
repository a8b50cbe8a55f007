#!/bin/sh
# Run (or resume) the three studies at low priority with two workers and one BLAS thread:
# the balance scale (Section 7) at the paper's 100 splits, then the two simulations
# (Sections 6.1, 6.2) in stages of 10, 20, 50 and 100 replications so that both studies have
# rows early.  Rerun the same command to resume; finished rows are skipped.
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-python}
JOBS=${JOBS:-2}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
$PY -m benchmarks.paper_studies balance --reps 100 --n-jobs "$JOBS" --no-progress || exit 1
for reps in 10 20 50 100; do
    for study in nonlinear donut; do
        $PY -m benchmarks.paper_studies $study --reps $reps --n-jobs "$JOBS" --no-progress \
            || exit 1
    done
done
$PY -m benchmarks.paper_studies report
