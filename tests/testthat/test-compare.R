## The comparators against R's own implementations (independent code).

test_that("ordered_logit agrees with ordinal::clm / MASS::polr", {
    skip_without_python()
    skip_if_not_installed("MASS")
    d <- make_ordinal_data(n = 200, seed = 3)
    fit <- ordered_logit(y ~ x1 + x2 + g, data = d)
    expect_s3_class(fit, c("ordered_logit", "nordicstats_fit"))
    ref <- MASS::polr(y ~ x1 + x2 + g, data = d, Hess = TRUE,
                      control = list(reltol = 1e-12, maxit = 1000))
    ## both maximise the same likelihood; optimiser tolerances limit agreement
    expect_equal(coef(fit), coef(ref), tolerance = 1e-4)
    expect_equal(fit$zeta, ref$zeta, tolerance = 1e-4)
    expect_equal(fit$logLik, as.numeric(logLik(ref)), tolerance = 1e-8)
    expect_identical(predict(fit, newdata = d),
                     factor(predict(ref, newdata = d), ordered = TRUE))
    expect_equal(unname(predict(fit, newdata = d, type = "prob")),
                 unname(predict(ref, newdata = d, type = "probs")), tolerance = 1e-4)
    expect_equal(unname(sqrt(diag(vcov(fit)))), unname(sqrt(diag(vcov(ref)))),
                 tolerance = 1e-3)
    out <- capture.output(print(summary(fit)))
    expect_true(any(grepl("^Intercepts:", out)))
})

test_that("ordinal_svr predicts like e1071::svm eps-regression", {
    skip_without_python()
    skip_if_not_installed("e1071")
    d <- make_ordinal_data(n = 80, seed = 4)
    fit <- ordinal_svr(y ~ x1 + x2, data = d, kernel = "rbf", gamma = 0.5, C = 2)
    ref <- e1071::svm(as.numeric(y) ~ x1 + x2, data = d, type = "eps-regression",
                      kernel = "radial", gamma = 0.5, cost = 2, epsilon = 0.1,
                      scale = FALSE, tolerance = 1e-3)
    score <- predict(fit, newdata = d, type = "score")
    ## both are libsvm with the same data and options
    expect_equal(unname(score), unname(predict(ref, d)), tolerance = 1e-8)
    cls <- predict(fit, newdata = d)
    expect_identical(levels(cls), levels(d$y))
    expect_identical(as.integer(cls),
                     as.integer(pmin(3, pmax(1, floor(score + 0.5)))))
})
