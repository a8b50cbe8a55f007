## R CMD check runs this file; pytest runs the same tests through
## tests/test_r_bridge.py.  The tests need the Python side (see the README):
## set NORDICSTATS_PYTHON, or install the package from the repository.
library(testthat)
library(nordicstats)

test_check("nordicstats")
