## Skip (R CMD check without Python) unless NORDICSTATS_REQUIRE_BRIDGE=1, which
## tests/test_r_bridge.py sets so that a broken bridge fails instead.
skip_without_python <- function() {
    if (identical(Sys.getenv("NORDICSTATS_REQUIRE_BRIDGE"), "1")) return(invisible())
    python <- nordicstats::nordic_python()
    if (!nzchar(python) || !file.exists(python))
        skip("no Python for nordicstats (set NORDICSTATS_PYTHON)")
}

## Three ordered classes driven by x1 + x2; a factor covariate; deterministic.
make_ordinal_data <- function(n = 60, seed = 1) {
    set.seed(seed)
    d <- data.frame(x1 = rnorm(n), x2 = rnorm(n),
                    g = factor(sample(c("u", "v"), n, replace = TRUE)))
    d$y <- cut(d$x1 + 0.5 * d$x2 + rnorm(n, sd = 0.3), c(-Inf, -0.5, 0.5, Inf),
               labels = c("low", "mid", "high"), ordered_result = TRUE)
    d
}

## Small samples make the Python side warn that Wald intervals under-cover
## (class "InferenceWarning"); muffle just that class where it is not the point.
quiet_inference <- function(expr)
    withCallingHandlers(expr, InferenceWarning = function(w) invokeRestart("muffleWarning"))
