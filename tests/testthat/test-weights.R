test_that("weights = Freq fits MASS::housing from counts exactly as the expanded data", {
    skip_without_python()
    skip_if_not_installed("MASS")
    housing <- MASS::housing
    fit <- quiet_inference(nordic(Sat ~ Infl + Type + Cont, data = housing, weights = Freq,
                                  kernel = "linear"))
    long <- housing[rep(seq_len(nrow(housing)), housing$Freq), ]
    full <- quiet_inference(nordic(Sat ~ Infl + Type + Cont, data = long, kernel = "linear"))
    expect_equal(fit$objective, full$objective, tolerance = 1e-7)
    expect_equal(coef(fit), coef(full), tolerance = 1e-5)
    expect_equal(nobs(fit), nrow(housing))
    ## the kernel default: the rbf width rule counts the weights as frequencies
    ## (1 / (2 median^2) over the positive distances of all pairs of the expanded data)
    rbf <- nordic(Sat ~ Infl + Type + Cont, data = housing, weights = Freq)
    dd <- dist(model.matrix(~ Infl + Type + Cont, long)[, -1])
    expect_equal(rbf$gamma, 1 / (2 * median(dd[dd > 0])^2), tolerance = 1e-12)
    expect_match(paste(capture.output(quiet_inference(print(summary(fit)))), collapse = "\n"),
                 "case weights \\(sum 1681 over 72 rows\\)")
})

test_that("weights follow subset and na.action like lm's; bad weights name the argument", {
    skip_without_python()
    d <- make_ordinal_data(n = 60, seed = 3)
    d$w <- rep(c(1, 2, 3), 20)
    d$w[5] <- NA
    fit <- quiet_inference(nordic(y ~ x1 + x2, data = d, weights = w, kernel = "linear",
                                  subset = x1 > -2))
    keep <- d$x1 > -2 & !is.na(d$w)
    same <- quiet_inference(nordic(y ~ x1 + x2, data = d[keep, ], weights = w,
                                   kernel = "linear"))
    expect_equal(nobs(fit), sum(keep))
    expect_equal(coef(fit), coef(same), tolerance = 1e-10)
    expect_identical(as.vector(fit$na.action), 5L)
    expect_error(nordic(y ~ x1 + x2, data = d, weights = w, na.action = na.fail))
    d$w[5] <- -1
    expect_error(nordic(y ~ x1 + x2, data = d, weights = w),
                 "'weights' argument of nordic\\(\\) must be nonnegative and finite",
                 class = "nordicstats_python_error")
    ## weight 0 drops a row from the fit; it still gets a fitted value, as in lm()
    d$w[5] <- 0
    zero <- quiet_inference(nordic(y ~ x1 + x2, data = d, weights = w, kernel = "linear"))
    drop <- quiet_inference(nordic(y ~ x1 + x2, data = d[-5, ], weights = w,
                                   kernel = "linear"))
    expect_equal(coef(zero), coef(drop), tolerance = 1e-10)
    expect_equal(nrow(fitted(zero)), 60L)
    expect_equal(nobs(zero), 59L)
})

test_that("cost = a matrix with dimnames = levels trains with the cost increments", {
    skip_without_python()
    d <- make_ordinal_data(n = 60, seed = 4)
    lv <- levels(d$y)
    unit <- abs(outer(1:3, 1:3, "-"))
    dimnames(unit) <- list(lv, lv)
    plain <- nordic(y ~ x1 + x2, data = d, gamma = 0.5)
    same <- nordic(y ~ x1 + x2, data = d, gamma = 0.5, cost = unit[c(3, 1, 2), c(2, 3, 1)])
    expect_equal(same$objective, plain$objective, tolerance = 1e-10)
    cost <- matrix(c(0, 1, 2, 3, 0, 1, 4, 2, 0), 3, byrow = TRUE, dimnames = list(lv, lv))
    fit <- nordic(y ~ x1 + x2, data = d, gamma = 0.5, cost = cost)
    expect_false(isTRUE(all.equal(fit$objective, plain$objective)))
    expect_match(paste(capture.output(print(summary(fit))), collapse = "\n"), "cost matrix")
    bad <- cost
    bad["low", ] <- c(0, 4, 1)
    expect_error(nordic(y ~ x1 + x2, data = d, cost = bad),
                 "row 1 \\(level 'low'\\)", class = "nordicstats_python_error")
    wrong <- cost
    dimnames(wrong) <- list(c("a", "b", "c"), lv)
    expect_error(nordic(y ~ x1 + x2, data = d, cost = wrong), "labelled by the levels",
                 class = "nordicstats_python_error")
})
