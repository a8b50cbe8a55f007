test_that("bayes_rule_ordinal is the conditional median, with level labels", {
    skip_without_python()
    set.seed(5)
    eta <- matrix(rexp(40 * 4), 40, 4)
    eta <- eta / rowSums(eta)
    median_class <- apply(eta, 1, function(p) which(cumsum(p) >= 0.5)[1])
    expect_identical(bayes_rule_ordinal(eta), median_class)
    expect_identical(bayes_rule_multiclass(eta), max.col(eta, ties.method = "first"))
    colnames(eta) <- c("a", "b", "c", "d")
    out <- bayes_rule_ordinal(eta)
    expect_true(is.ordered(out))
    expect_identical(as.integer(out), median_class)
    expect_identical(bayes_rule_ordinal(c(0.40, 0.15, 0.25, 0.20)), 2L)
})

test_that("conditional risks and upper tails match direct sums", {
    skip_without_python()
    eta <- c(0.40, 0.15, 0.25, 0.20)
    expect_equal(upper_tail(eta), rev(cumsum(rev(eta)))[-1])
    ## absolute loss of predicting class 2: sum_y eta_y |2 - y|
    expect_equal(conditional_risk(eta, "median", "absolute"), sum(eta * abs(2 - 1:4)))
    expect_equal(conditional_risk(eta, 3L, "zero_one"), 1 - eta[3])
    expect_error(conditional_risk(c(0.5, 0.6), "median"), class = "nordicstats_python_error")
})

test_that("fisher_consistency returns a table per boundary", {
    skip_without_python()
    res <- fisher_consistency("hinge", c(0.40, 0.15, 0.25, 0.20))
    expect_s3_class(res, "nordic_fisher")
    expect_identical(rownames(res$table), c("1|2", "2|3", "3|4"))
    expect_identical(sign(res$table$f_star), c(1, -1, -1))
    expect_output(print(res), "hinge")
})
