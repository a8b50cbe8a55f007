#!/bin/sh
# Set up nordicstats' R interface:
#   1. Debian's R and the R packages used by the R package (generics and tibble
#      for the broom tidiers), its tests, its knitr vignettes and its pkgdown site,
#      with pandoc (skipped when they are installed already; CRAN is not needed);
#   2. rpy2 in the project's virtual environment, pinned to the versions that
#      work with Debian's R 4.2 (rpy2-rinterface >= 3.6.6 needs R >= 4.5);
#   3. the R package itself (R CMD INSTALL of this repository), so that
#      `Rscript -e 'library(nordicstats)'` works from any shell.
# Environment: PYTHON (default: <repo>/.venv/bin/python), NORDICSTATS_R_LIB
# (library for step 3; default: R's site library).
set -eu

ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
R_PACKAGES="r-base-core r-cran-e1071 r-cran-mass r-cran-ordinal r-cran-testthat r-cran-reticulate
            r-cran-knitr r-cran-rmarkdown pandoc r-cran-generics r-cran-tibble r-cran-broom
            r-cran-pkgdown"

# shellcheck disable=SC2086  # the list is split into package names on purpose
sh "$ROOT/scripts/apt_install.sh" setup_r.sh $R_PACKAGES

"$PYTHON" -m pip install --quiet 'rpy2>=3.6,<3.7' 'rpy2-rinterface>=3.6,<3.6.6'
"$PYTHON" -c "import nordicstats.r; nordicstats.r.initialize()" \
    || { echo "setup_r.sh: rpy2 cannot start R" >&2; exit 1; }

if [ -n "${NORDICSTATS_R_LIB:-}" ]; then
    mkdir -p "$NORDICSTATS_R_LIB"
    R CMD INSTALL --no-test-load --library="$NORDICSTATS_R_LIB" "$ROOT"
else
    R CMD INSTALL --no-test-load "$ROOT"
fi
echo "setup_r.sh: done (R package installed; Python: $PYTHON)"
