test_that("nordic fits, prints, summarises and predicts with the user's levels", {
    skip_without_python()
    d <- make_ordinal_data()
    fit <- quiet_inference(nordic(y ~ x1 + x2 + g, data = d, kernel = "linear"))
    expect_s3_class(fit, c("nordic", "nordicstats_fit"))
    expect_identical(fit$levels, c("low", "mid", "high"))
    expect_identical(fit$boundaries, c("low|mid", "mid|high"))
    expect_equal(nobs(fit), 60L)
    expect_output(print(fit), "Coefficients \\(one column per boundary\\)")
    s <- summary(fit)
    expect_s3_class(s, "summary.nordic")
    out <- capture.output(print(s))
    expect_true(any(grepl("^Intercepts \\(one per boundary\\):", out)))
    expect_true(any(grepl("Coefficients, boundary low\\|mid:", out)))
    ## n = 60: fewer than 100 rows on a side, so cov_type = "auto" bootstraps both boundaries
    ## and the summary says so, with the reason
    expect_identical(s$se_sources$estimator, c("bootstrap", "bootstrap"))
    expect_true(any(grepl("^Standard errors by boundary:", out)))
    expect_true(any(grepl("low\\|mid: bootstrap \\(only [0-9]+ observations on one side", out)))
    cf <- coef(fit)
    expect_identical(dimnames(cf), list(c("(Intercept)", "x1", "x2", "gv"),
                                        c("low|mid", "mid|high")))
    p <- predict(fit, newdata = d)
    expect_true(is.ordered(p))
    expect_identical(levels(p), levels(d$y))
    expect_identical(p, fit$fitted_class)            # Python's own training predictions
    dec <- predict(fit, newdata = d, type = "decision")
    expect_identical(unname(dec), unname(fit$fitted_decision))
    ## the class is the number of boundaries with f_k >= 0 (no crossings here)
    expect_identical(as.integer(p), as.integer(rowSums(dec >= 0)) + 1L)
    expect_equal(unname(dec[, "low|mid"]),
                 drop(cbind(1, as.matrix(d[, c("x1", "x2")]), d$g == "v") %*% cf[, "low|mid"]),
                 tolerance = 1e-10)
})

test_that("vcov and confint come from Python, or say why they cannot", {
    skip_without_python()
    d <- make_ordinal_data(n = 100, seed = 2)
    fit <- quiet_inference(nordic(y ~ x1 + x2, data = d, kernel = "linear"))
    V <- tryCatch(vcov(fit), nordicstats_python_error = function(e) e)
    if (inherits(V, "error")) {
        expect_match(conditionMessage(V), "cov_params")
        expect_error(confint(fit), class = "nordicstats_python_error")
        skip("NORDICResults has no cov_params() in this version")
    }
    expect_true(isSymmetric(unname(V)))
    ci <- confint(fit)
    expect_identical(colnames(ci), c("2.5 %", "97.5 %"))
    se <- sqrt(diag(V))
    est <- (ci[, 1] + ci[, 2]) / 2
    ## Wald intervals from Python: half-width = z * se (checks the level is passed on)
    expect_equal(unname(ci[, 2] - ci[, 1]), unname(2 * qnorm(0.975) * se), tolerance = 1e-8)
    ci90 <- confint(fit, level = 0.9)
    expect_equal(unname(ci90[, 2] - ci90[, 1]), unname(2 * qnorm(0.95) * se),
                 tolerance = 1e-8)
    expect_identical(rownames(ci)[1:3], c("Intercept@low|mid", "x1@low|mid", "x2@low|mid"))
    expect_identical(rownames(V), rownames(ci))
    expect_identical(confint(fit, parm = "x1@low|mid"), ci[2, , drop = FALSE])
    expect_error(confint(fit, parm = "nope"), "not parameters")
    expect_error(vcov(nordic(y ~ x1 + x2, data = d[1:40, ])), "linear",
                 class = "nordicstats_python_error")
})

test_that("missing values: na.omit by default, na.fail errors, na.exclude pads", {
    skip_without_python()
    d <- make_ordinal_data()
    d$x2[c(3, 7)] <- NA
    d$y[10] <- NA
    fit <- quiet_inference(nordic(y ~ x1 + x2, data = d, kernel = "linear"))
    expect_equal(nobs(fit), 57L)
    expect_identical(as.integer(fit$na.action), c(3L, 7L, 10L))
    expect_output(print(fit), "3 observations deleted due to missingness")
    expect_error(nordic(y ~ x1 + x2, data = d, na.action = na.fail), "missing values")
    fit_ex <- quiet_inference(nordic(y ~ x1 + x2, data = d, kernel = "linear",
                                     na.action = na.exclude))
    pe <- predict(fit_ex)
    expect_length(pe, 60L)
    expect_true(all(is.na(pe[c(3, 7, 10)])))
    fit_sub <- nordic(y ~ x1, data = d, subset = x1 > -1.5)
    expect_equal(nobs(fit_sub), sum(d$x1 > -1.5 & !is.na(d$y)))
    pn <- predict(fit, newdata = d)                 # NA covariates -> NA predictions
    expect_length(pn, 60L)
    expect_true(all(is.na(pn[c(3, 7)])))
    expect_false(is.na(pn[10]))
    expect_identical(pn[-c(3, 7, 10)], predict(fit))
})

test_that("bad input gives R errors carrying the Python message", {
    skip_without_python()
    d <- make_ordinal_data()
    expect_error(nordic(y ~ x1, data = d, C = -1),
                 "The 'C' argument of nordic\\(\\) must be a number in \\(0, Inf\\)",
                 class = "ValueError")
    expect_error(nordic(y ~ x1, data = d, method = "nordic9"),
                 "The 'method' argument of nordic\\(\\) must be one of",
                 class = "nordicstats_python_error")
    expect_error(nordic(y ~ x1, data = d, kernel = "sigmoid"), "kernel",
                 class = "nordicstats_python_error")
    one <- d
    one$y <- factor(rep("low", nrow(d)), levels = "low", ordered = TRUE)
    expect_error(nordic(y ~ x1, data = one), "needs at least two",
                 class = "nordicstats_python_error")
    unordered <- d
    unordered$y <- factor(as.character(d$y))
    expect_error(nordic(y ~ x1, data = unordered), "unordered factor.*ordered\\(")
    err <- tryCatch(nordic(y ~ x1, data = d, C = -1), error = identity)
    expect_s3_class(err, c("ValueError", "nordicstats_python_error", "error", "condition"))
    expect_match(err$traceback, "Traceback")
})

test_that("Python warnings become R warnings", {
    skip_without_python()
    d <- make_ordinal_data()
    expect_warning(quiet_inference(.py("refit_model", key = "test-warning",
                       state = list(family = "nordic", y = d$y,
                                    X = as.matrix(d[, c("x1", "x2")]),
                                    args = list(kernel = "linear")),
                       fitted_decision = matrix(0, 60, 2))),
                   "different decision values", class = "nordicstats_python_warning")
})

test_that("a fit saved with saveRDS predicts identically after readRDS", {
    skip_without_python()
    d <- make_ordinal_data()
    for (kernel in c("rbf", "linear")) {
        fit <- quiet_inference(nordic(y ~ x1 + x2 + g, data = d, kernel = kernel))
        before <- predict(fit, newdata = d, type = "decision")
        path <- tempfile(fileext = ".rds")
        saveRDS(fit, path)
        .py("forget_fits")                  # as in a new session: Python lost the fit
        back <- readRDS(path)
        expect_false(.py("has_fit", key = back$key))
        expect_identical(predict(back, newdata = d, type = "decision"), before)
        expect_identical(predict(back, newdata = d), predict(fit, newdata = d))
    }
})

test_that("kernels, methods and extra arguments reach Python", {
    skip_without_python()
    d <- make_ordinal_data(n = 40)
    fit <- nordic(y ~ x1 + x2, data = d, method = "bsvm", kernel = "poly", degree = 2,
                  gamma = 0.5, C = 2)
    expect_identical(fit$method, "bsvm")
    expect_identical(fit$kernel, "poly")
    expect_equal(fit$gamma, 0.5)
    expect_equal(fit$C, 2)
    expect_null(fit$coefficients)
    expect_identical(rownames(coef(fit)), "(Intercept)")
    expect_error(nordic(y ~ x1, data = d, order = c("a", "b")), "cannot be set from R")
})

test_that("parallel_test is Python's test_parallel as an htest", {
    skip_without_python()
    d <- make_ordinal_data(n = 100, seed = 2)
    fit <- quiet_inference(nordic(y ~ x1 + x2, data = d, kernel = "linear"))
    tst <- parallel_test(fit)
    expect_s3_class(tst, "htest")
    expect_identical(unname(tst$parameter), 2L)  # two slopes, K - 2 = 1 contrast each
    ## the statistic from R's own algebra on vcov/coef: (R b)' (R V R')^-1 (R b)
    V <- vcov(fit)
    b <- setNames(as.vector(coef(fit)), rownames(V))
    R <- rbind(as.numeric(rownames(V) == "x1@low|mid") - (rownames(V) == "x1@mid|high"),
               as.numeric(rownames(V) == "x2@low|mid") - (rownames(V) == "x2@mid|high"))
    W <- drop(t(R %*% b) %*% solve(R %*% V %*% t(R)) %*% (R %*% b))
    expect_equal(unname(tst$statistic), W, tolerance = 1e-8)
    expect_equal(tst$p.value, pchisq(W, df = 2, lower.tail = FALSE), tolerance = 1e-8)
    expect_error(parallel_test(lm(x1 ~ x2, data = d)), "needs a fit from nordic")
})

test_that("a boundary set by the noncrossing constraints has SEs but no intervals", {
    skip_without_python()
    ## latent logistic model, four levels: the separate SVM of the top boundary is constant
    set.seed(4)
    n <- 800
    d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = rnorm(n))
    z <- d$x1 - 0.5 * d$x2 + 0.25 * d$x3 + rlogis(n)
    d$y <- cut(z, c(-Inf, -1, 0.5, 2, Inf), labels = c("a", "b", "c", "d"),
               ordered_result = TRUE)
    fit <- quiet_inference(nordic(y ~ x1 + x2 + x3, data = d, kernel = "linear",
                                  cov_kwds = list(n_boot = 30, random_state = 1)))
    s <- summary(fit)
    src <- s$se_sources
    expect_identical(src$boundary, c("a|b", "b|c", "c|d"))
    expect_identical(src$estimator[[3]], "bootstrap")
    expect_false(src$intervals[[3]])
    expect_true(src$intervals[[2]])
    out <- capture.output(print(s))
    expect_true(any(grepl("c\\|d: bootstrap \\(no z values, p-values or intervals\\)", out)))
    ## intervals missing exactly for the boundaries without them (a|b, a weak boundary at
    ## n = 800, may be one too: its separate SVM is not always distinguishable from a constant)
    ci <- confint(fit)
    boundary <- sub("^.*@", "", rownames(ci))
    withheld <- boundary %in% src$boundary[!src$intervals]
    expect_true(all(is.na(ci[withheld, ])) && !anyNA(ci[!withheld, ]))
    top <- boundary == "c|d"
    expect_true(all(sqrt(diag(vcov(fit)))[top] > 0))     # its standard errors are given
})

test_that("with case weights the summary counts the weighted classes", {
    skip_without_python()
    d <- make_ordinal_data(n = 60, seed = 3)
    d$w <- rep(c(1, 3), 30)
    fit <- quiet_inference(nordic(y ~ x1 + x2, data = d, weights = w, kernel = "linear",
                                  cov_type = "none"))
    s <- summary(fit)
    expect_equal(as.vector(s$counts), as.vector(xtabs(w ~ y, data = d)))
    expect_identical(names(s$counts), levels(d$y))
    expect_true(any(grepl("^Classes \\(lowest first, weighted counts\\):",
                          capture.output(print(s)))))
    unweighted <- summary(quiet_inference(nordic(y ~ x1 + x2, data = d, kernel = "linear",
                                                 cov_type = "none")))
    expect_equal(as.vector(unweighted$counts), as.vector(table(d$y)))
})
