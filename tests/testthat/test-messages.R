## Every error and warning an R user can reach speaks R: no Python argument names
## (which, endog, exog, sample_weight), Python classes, Python literals or tracebacks.

python_words <- c("'which'", "which=", "\\bendog\\b", "\\bexog\\b", "ndarray", "DataFrame",
                  "NORDICResults", "OrdinalSVR", "OrderedLogit", "OrderedModel",
                  "\\bNORDIC\\b(?!-)", "Traceback", "\\bTrue\\b", "\\bFalse\\b", "\\bNone\\b",
                  "sample_weight", "kwargs", "\\['", "\\bn_splits\\b", "random_state",
                  "cov_params", "conf_int", "test_parallel", "\\bdict\\b", "\\bfloat\\b")

## The messages of the errors and warnings `expr` raises.
messages_of <- function(expr) {
    seen <- character()
    withCallingHandlers(
        tryCatch(expr, error = function(e) seen <<- c(seen, conditionMessage(e))),
        warning = function(w) {
            seen <<- c(seen, conditionMessage(w))
            invokeRestart("muffleWarning")
        })
    seen
}

test_that("no error or warning message uses Python's vocabulary", {
    skip_without_python()
    d <- make_ordinal_data(n = 60)
    d$chr <- as.character(d$y)
    d$const <- 1
    two <- transform(d, y2 = factor(ifelse(x1 > 0, "hi", "lo"), levels = c("lo", "hi"),
                                    ordered = TRUE))
    lin <- quiet_inference(nordic(y ~ x1 + x2, data = d, kernel = "linear"))
    rbf <- nordic(y ~ x1 + x2, data = d)
    one <- transform(d, y = factor(rep("low", 60), levels = "low", ordered = TRUE))
    paths <- list(
        quote(nordic(y ~ x1, data = d, C = -1)),
        quote(nordic(y ~ x1, data = d, gamma = -2)),
        quote(nordic(y ~ x1, data = d, method = "nordic9")),
        quote(nordic(y ~ x1, data = d, kernel = "sigmoid")),
        quote(nordic(y ~ x1, data = one)),
        quote(nordic(chr ~ x1, data = d)),
        quote(nordic(y ~ x1, data = d, order = c("a", "b"))),
        quote(nordic(y ~ x1, data = d, weights = rep(-1, 60))),
        quote(nordic(y ~ x1, data = d, cost = matrix(1, 2, 2))),
        quote(nordic(y ~ x1, data = d, probability = NA)),
        quote(nordic(y ~ x1, data = d, cov_type = "sandwich-ish")),
        quote(ordinal_svr(y ~ x1, data = d, epsilon = -1)),
        quote(ordinal_svr(y ~ x1, data = d, scale = "yes")),
        quote(ordinal_svr(y ~ x1, data = d, weights = rep(-1, 60))),
        quote(ordered_logit(y ~ x1 + const, data = d)),
        quote(ordered_logit(chr ~ x1, data = d)),
        quote(ordered_logit(y ~ x1, data = d, maxiter = 1)),
        quote(predict(lin, d, type = "probs")),
        quote(predict(lin, d, type = "which")),
        quote(predict(lin, d[, "x1", drop = FALSE])),
        quote(vcov(rbf)),
        quote(confint(rbf)),
        quote(confint(lin, level = 2)),
        quote(confint(lin, parm = "nope")),
        quote(parallel_test(rbf)),
        quote(parallel_test(nordic(y2 ~ x1, data = two, kernel = "linear"))),
        quote(residuals(ordered_logit(y ~ x1, data = d))),
        quote(plot(nordic(y ~ x1 + x2 + g, d), type = "boundaries")),
        quote(tune_nordic(y ~ x1, data = d, C = 0)),
        quote(tune_nordic(y ~ x1, data = d, folds = 40)),
        quote(tune_nordic(y ~ x1, data = d, scoring = matrix(1, 2, 2))),
        quote(tune_nordic(y ~ x1, data = d, C = 1, probability = "yes")),
        quote(conditional_risk(c(0.5, 0.6), "median")),
        quote(fisher_consistency("nonsense", c(0.5, 0.5))),
        quote(.py("refit_model", key = "messages", state = lin$state,
                  fitted_decision = lin$fitted_decision + 1))
    )
    grDevices::pdf(NULL)                        # plot() paths draw nowhere
    on.exit(grDevices::dev.off())
    for (p in paths) {
        msgs <- messages_of(eval(p))
        if (nzchar(Sys.getenv("NORDICSTATS_SHOW_MESSAGES"))) cat(deparse1(p), msgs, sep = "\n  ")
        expect_true(length(msgs) > 0L, label = deparse1(p))
        for (m in msgs)
            for (word in python_words)
                expect_false(grepl(word, m, perl = TRUE),
                             label = sprintf("%s: '%s' in \"%s\"", deparse1(p), word, m))
    }
})

test_that("errors keep the Python class for tryCatch, the traceback out of the message", {
    skip_without_python()
    d <- make_ordinal_data(n = 30)
    err <- tryCatch(nordic(y ~ x1, data = d, C = -1), ValueError = identity)
    expect_s3_class(err, c("ValueError", "nordicstats_python_error", "error"))
    expect_identical(conditionMessage(err),
                     "The 'C' argument of nordic() must be a number in (0, Inf). Got -1 instead.")
    expect_match(err$traceback, "Traceback")
})

test_that("printed summaries and tests use R's vocabulary too", {
    skip_without_python()
    d <- make_ordinal_data(n = 60)
    set.seed(2)
    noise <- data.frame(x1 = rnorm(150), x2 = rnorm(150),
                        y = factor(sample(c("a", "b", "c"), 150, TRUE), ordered = TRUE))
    warned <- character()
    out <- withCallingHandlers(capture.output(
        print(summary(nordic(y ~ x1 + x2, data = d))),
        print(summary(nordic(y ~ x1 + x2, data = d, kernel = "linear"))),
        print(summary(ordinal_svr(y ~ x1 + x2, data = d))),
        print(summary(ordered_logit(y ~ x1 + x2, data = d))),
        print(parallel_test(nordic(y ~ x1 + x2, data = d, kernel = "linear"))),
        print(parallel_test(nordic(y ~ x1 + x2, data = noise, kernel = "linear"))),
        print(summary(tune_nordic(y ~ x1, data = d, C = c(1, 2), folds = 3, seed = 1)))),
        warning = function(w) {
            warned <<- c(warned, conditionMessage(w))
            invokeRestart("muffleWarning")
        })
    expect_true(any(grepl("fit kernel = \"linear\" for inference", out)))
    expect_true(any(grepl("^Not available:", out)))
    for (line in c(out, warned))
        for (word in python_words)
            expect_false(grepl(word, line, perl = TRUE),
                         label = sprintf("'%s' in \"%s\"", word, line))
})
