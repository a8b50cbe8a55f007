#!/bin/sh
# Run (or resume) the three studies with one worker at low priority: first every method but
# NORDIC-0 (the slowest) in every study, then NORDIC-0.  Rerun the same command to resume.
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-python}
for study in balance nonlinear donut; do
    $PY -m benchmarks.paper_studies $study --reps 100 --n-jobs 1 --no-progress \
        --methods NORDIC-1 NORDIC-2 BSVM DR CK SVR OLR || exit 1
done
for study in balance nonlinear donut; do
    $PY -m benchmarks.paper_studies $study --reps 100 --n-jobs 1 --no-progress || exit 1
done
$PY -m benchmarks.paper_studies report
