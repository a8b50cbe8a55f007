## tune_nordic(): Python's tune through the bridge (the balance-scale comparison with
## Python at n = 208 is in tests/test_r_bridge.py, where both sides are reachable).

test_that("tune_nordic searches the paper's grid by CV and refits the best model", {
    skip_without_python()
    d <- make_ordinal_data(n = 60, seed = 7)
    set.seed(3)
    tu <- tune_nordic(y ~ x1 + x2, data = d, C = c(0.5, 2), folds = 3)
    expect_s3_class(tu, "nordic_tune")
    p <- tu$performances
    expect_identical(nrow(p), 6L)                      # 2 C x 3 widths
    expect_identical(sort(unique(p$C)), c(0.5, 2))
    ## the widths: 1 / (2 q^2) at the 10/50/90% quantiles of the pairwise distances
    dd <- dist(as.matrix(d[, c("x1", "x2")]))
    expect_equal(sort(unique(p$gamma)),
                 sort(1 / (2 * quantile(dd, c(0.1, 0.5, 0.9), type = 7, names = FALSE)^2)),
                 tolerance = 1e-12)
    ## the pooled score is the mean of the fold scores weighted by fold size
    sizes <- tabulate(tu$folds)
    expect_equal(p$score, drop(as.matrix(p[, paste0("fold", 1:3)]) %*% sizes) / sum(sizes),
                 tolerance = 1e-12)
    best <- p[p$rank == 1L, ]
    expect_identical(nrow(best), 1L)
    expect_equal(best$score, min(p$score))
    expect_identical(tu$best.parameters$C, best$C)
    expect_s3_class(tu$best.model, "nordic")
    expect_identical(tu$best.model$C, best$C)
    expect_equal(tu$best.model$gamma, best$gamma)
    expect_identical(tu$best.model$call[[1L]], as.name("nordic"))
    ## set.seed() makes the folds reproducible, as for R's own resampling
    set.seed(3)
    again <- tune_nordic(y ~ x1 + x2, data = d, C = c(0.5, 2), folds = 3)
    expect_identical(again$performances, p)
    expect_output(print(tu), "3-fold cross-validation")
    expect_output(print(summary(tu)), "Scores of the grid")
    path <- tempfile(fileext = ".pdf")
    grDevices::pdf(path)
    expect_invisible(plot(tu))
    grDevices::dev.off()
    expect_gt(file.size(path), 3000)
})

test_that("tune_nordic on a tuning set, with weights and a cost matrix", {
    skip_without_python()
    d <- make_ordinal_data(n = 60, seed = 8)
    holdout <- make_ordinal_data(n = 40, seed = 9)
    tu <- tune_nordic(y ~ x1 + x2, data = d, kernel = "linear", C = c(0.25, 1, 4),
                      tune_data = holdout, refit = FALSE)
    expect_identical(tu$protocol, "holdout")
    expect_null(tu$best.model)
    expect_false("gamma" %in% names(tu$performances))    # a linear kernel tunes C only
    ## each score is the error rate on the tuning set of nordic() at that C
    for (i in seq_len(nrow(tu$performances))) {
        fit <- nordic(y ~ x1 + x2, data = d, kernel = "linear", C = tu$performances$C[i],
                      cov_type = "none")
        expect_equal(tu$performances$score[i], mean(predict(fit, holdout) != holdout$y))
    }
    ## integer case weights: the same scores as the repeated rows
    d$w <- rep(1:2, 30)
    long <- d[rep(seq_len(60), d$w), ]
    tw <- tune_nordic(y ~ x1 + x2, data = d, weights = w, kernel = "linear",
                      C = c(0.25, 1, 4), tune_data = holdout, refit = FALSE)
    tl <- tune_nordic(y ~ x1 + x2, data = long, kernel = "linear", C = c(0.25, 1, 4),
                      tune_data = holdout, refit = FALSE)
    expect_equal(tw$performances$score, tl$performances$score)
    ## a cost matrix is fitted and scored: mean cost[true, predicted] on the tuning set
    cost <- matrix(c(0, 1, 4, 1, 0, 1, 4, 1, 0), 3, dimnames = list(levels(d$y), levels(d$y)))
    tc <- tune_nordic(y ~ x1 + x2, data = d, kernel = "linear", C = c(0.25, 1, 4),
                      tune_data = holdout, cost = cost)
    expect_identical(tc$scoring, "weighted_error")
    pred <- predict(tc$best.model, holdout)
    expect_equal(tc$best.performance, mean(cost[cbind(as.integer(holdout$y),
                                                      as.integer(pred))]))
})

test_that("tune_nordic errors speak R", {
    skip_without_python()
    d <- make_ordinal_data(n = 30, seed = 1)
    expect_error(tune_nordic(y ~ x1, data = d, C = c(-1, 1)), "C must be a vector of positive")
    expect_error(tune_nordic(y ~ x1, data = d, folds = 50), "fewer than folds=50")
    expect_error(tune_nordic(y ~ x1, data = d, method = "svm"), "'arg' should be one of")
    expect_error(tune_nordic(y ~ x1, data = d, tune_data = transform(d, y = factor(as.character(y)))),
                 "unordered factor")
})
