## What R users take for granted: weights/subset like polr, ordered responses only,
## predict(type = "probs"), residuals, model.frame/model.matrix, plot, parallel_test.

test_that("ordered_logit(weights = Freq) equals MASS::polr(weights = Freq) on housing", {
    skip_without_python()
    skip_if_not_installed("MASS")
    housing <- MASS::housing
    fit <- ordered_logit(Sat ~ Infl + Type + Cont, data = housing, weights = Freq)
    ref <- MASS::polr(Sat ~ Infl + Type + Cont, data = housing, weights = Freq, Hess = TRUE)
    ## one weighted likelihood, two optimisers (BFGS, polr's optim):
    ## measured differences 2.3e-7 (coefficients), 3.2e-8 (standard errors)
    expect_equal(coef(fit), coef(ref), tolerance = 1e-6)
    expect_equal(fit$zeta, ref$zeta, tolerance = 1e-6)
    expect_equal(unname(sqrt(diag(vcov(fit)))), unname(sqrt(diag(vcov(ref)))), tolerance = 1e-6)
    expect_equal(fit$logLik, as.numeric(logLik(ref)), tolerance = 1e-10)
    expect_equal(unname(predict(fit, housing, type = "probs")),
                 unname(predict(ref, housing, type = "probs")), tolerance = 1e-6)
    expect_identical(colnames(predict(fit, housing, type = "probs")), levels(housing$Sat))
    ## the unweighted fit to the expanded data is the same fit
    long <- housing[rep(seq_len(nrow(housing)), housing$Freq), ]
    expect_equal(coef(ordered_logit(Sat ~ Infl + Type + Cont, data = long)), coef(fit),
                 tolerance = 1e-6)
})

test_that("weights follow subset and na.action for ordered_logit and ordinal_svr", {
    skip_without_python()
    d <- make_ordinal_data(n = 90, seed = 6)
    d$w <- rep(c(1, 2, 3), 30)
    d$w[4] <- NA
    keep <- d$x1 > -1.5 & !is.na(d$w)
    fit <- ordered_logit(y ~ x1 + x2, data = d, weights = w, subset = x1 > -1.5)
    same <- ordered_logit(y ~ x1 + x2, data = d[keep, ], weights = w)
    expect_equal(coef(fit), coef(same), tolerance = 1e-10)
    expect_equal(nobs(fit), sum(keep))
    expect_identical(as.vector(fit$na.action), 4L)
    ## integer weights are frequencies: the fit to the repeated rows (libsvm at tol 1e-10)
    kept <- d[keep, ]
    long <- kept[rep(seq_len(nrow(kept)), kept$w), ]
    rep_fit <- ordinal_svr(y ~ x1 + x2, data = long, gamma = 0.5, tol = 1e-10)
    svr_tight <- ordinal_svr(y ~ x1 + x2, data = d, weights = w, subset = x1 > -1.5,
                             gamma = 0.5, tol = 1e-10)
    expect_equal(unname(predict(svr_tight, d, type = "score")),
                 unname(predict(rep_fit, d, type = "score")), tolerance = 1e-6)
    expect_equal(nobs(svr_tight), sum(keep))
    expect_error(ordinal_svr(y ~ x1, data = transform(d, w = -w), weights = w),
                 "'weights' argument of ordinal_svr\\(\\) must be nonnegative")
})

test_that("character, logical and unordered responses are refused with one message", {
    skip_without_python()
    d <- make_ordinal_data(n = 30)
    d$chr <- as.character(d$y)
    d$lgl <- d$x1 > 0
    d$fac <- factor(d$chr)
    for (f in list(chr ~ x1, lgl ~ x1, fac ~ x1)) {
        for (fitter in list(nordic, ordered_logit, ordinal_svr)) {
            err <- tryCatch(fitter(f, data = d), error = identity)
            expect_s3_class(err, "nordicstats_response_error")
            expect_match(conditionMessage(err),
                         "is an? (unordered factor|character vector|logical vector), so the order")
            expect_match(conditionMessage(err), "ordered\\(")
        }
    }
    expect_error(tune_nordic(chr ~ x1, data = d), "character vector, so the order")
})

test_that("predict() types are R's: class, decision, probs (score for the SVR)", {
    skip_without_python()
    d <- make_ordinal_data(n = 80, seed = 2)
    fit <- nordic(y ~ x1 + x2, data = d, kernel = "linear")
    expect_error(predict(fit, d, type = "which"), "'arg' should be one of")
    expect_error(predict(fit, d, type = "probs"), "refit with probability = TRUE")
    expect_error(predict(fit, type = "probs"), "refit with probability = TRUE")
    ol <- ordered_logit(y ~ x1 + x2, data = d)
    p <- predict(ol, d, type = "probs")
    expect_identical(colnames(p), levels(d$y))
    expect_equal(unname(rowSums(p)), rep(1, nrow(d)), tolerance = 1e-12)
    expect_identical(predict(ol, d, type = "prob"), p)          # partial matching, as R does
    expect_identical(unname(predict(ol, type = "probs")), unname(p))     # training rows
    expect_error(predict(ordinal_svr(y ~ x1, data = d), d, type = "probs"), "should be one of")
})

test_that("residuals: hinge slacks for nordic, level minus score for the SVR, none for the logit", {
    skip_without_python()
    d <- make_ordinal_data(n = 60, seed = 5)
    d$x2[3] <- NA
    fit <- nordic(y ~ x1 + x2, data = d, kernel = "linear", na.action = na.exclude,
                  cov_type = "none")
    r <- residuals(fit)
    expect_identical(dim(r), c(60L, 2L))
    expect_true(all(is.na(r[3, ])))
    ## xi_ik = max(0, 1 - s_ik f_k(x_i)), s_ik = +1 above boundary k
    dec <- predict(fit, type = "decision")
    s <- cbind(ifelse(as.integer(d$y) > 1, 1, -1), ifelse(as.integer(d$y) > 2, 1, -1))
    expect_equal(unname(r[-3, ]), unname(pmax(1 - s * dec, 0)[-3, ]), tolerance = 1e-12)
    svr <- ordinal_svr(y ~ x1 + x2, data = d)
    expect_equal(unname(residuals(svr)),
                 as.integer(d$y[-3]) - unname(predict(svr, d[-3, ], type = "score")),
                 tolerance = 1e-12)
    expect_error(residuals(ordered_logit(y ~ x1 + x2, data = d)),
                 "no residuals \\(nor have MASS::polr fits\\)")
})

test_that("model.frame and model.matrix give the fit's data; X %*% coef is the decision", {
    skip_without_python()
    housing <- MASS::housing
    fit <- nordic(Sat ~ Infl + Type + Cont, data = housing, weights = Freq, kernel = "linear",
                  cov_type = "none")
    mf <- model.frame(fit)
    expect_identical(nrow(mf), 72L)
    expect_identical(mf[["(weights)"]], housing$Freq)
    X <- model.matrix(fit)
    expect_identical(colnames(X)[1:3], c("(Intercept)", "InflMedium", "InflHigh"))
    expect_equal(unname(X %*% coef(fit)), unname(fitted(fit)), tolerance = 1e-8)
    expect_identical(dim(model.matrix(ordered_logit(Sat ~ Infl + Type + Cont, data = housing,
                                                    weights = Freq))), c(72L, 7L))
})

test_that("plot() draws decision values by class, or the boundaries of two covariates", {
    skip_without_python()
    d <- make_ordinal_data(n = 60)
    fit <- nordic(y ~ x1 + x2, data = d, kernel = "rbf")
    path <- tempfile(fileext = ".pdf")
    grDevices::pdf(path)
    expect_invisible(plot(fit))
    expect_invisible(plot(fit, type = "decision"))
    expect_invisible(plot(ordinal_svr(y ~ x1 + x2 + g, data = d)))
    grDevices::dev.off()
    expect_gt(file.size(path), 5000)
    three <- nordic(y ~ x1 + x2 + g, data = d)
    expect_error(plot(three, type = "boundaries"), "exactly two numeric covariates")
})

test_that("parallel_test says 'not available' and why instead of a NaN test", {
    skip_without_python()
    set.seed(2)
    d <- data.frame(x1 = rnorm(150), x2 = rnorm(150))
    d$y <- factor(sample(c("a", "b", "c"), 150, TRUE), levels = c("a", "b", "c"),
                  ordered = TRUE)        # y unrelated to x: no boundary has intervals
    fit <- suppressWarnings(nordic(y ~ x1 + x2, data = d, kernel = "linear"))
    tst <- expect_silent(parallel_test(fit))
    expect_s3_class(tst, c("nordic_parallel_test", "htest"))
    expect_true(is.na(tst$statistic) && is.na(tst$p.value))
    out <- capture.output(print(tst))
    expect_true(any(grepl("^Not available: the test needs standard errors with intervals", out)))
    expect_false(any(grepl("NaN", out)))
})

test_that("nordic(probability = TRUE) predicts class probabilities, also after readRDS", {
    skip_without_python()
    d <- make_ordinal_data(n = 90, seed = 11)
    fit <- nordic(y ~ x1 + x2, data = d, kernel = "linear", probability = TRUE,
                  cov_type = "none")
    p <- predict(fit, d, type = "probs")
    expect_identical(colnames(p), levels(d$y))
    expect_equal(unname(rowSums(p)), rep(1, nrow(d)), tolerance = 1e-12)
    expect_true(all(p >= 0))
    expect_equal(unname(predict(fit, type = "probs")), unname(p), tolerance = 0)
    path <- tempfile(fileext = ".rds")
    saveRDS(fit, path)
    .py("forget_fits")
    expect_identical(predict(readRDS(path), d, type = "probs"), p)
})
