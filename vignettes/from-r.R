#' ---
#' title: "nordicstats from R"
#' ---
#'
#' # nordicstats from R
#'
#' The R package `nordicstats` is a formula front end to the Python package:
#' R builds the model frame and design matrix (formulas, factors, `subset`,
#' `na.action`), Python fits, predicts and computes standard errors, and the
#' results come back as ordinary R objects with `print`, `summary`, `coef`,
#' `confint`, `vcov`, `predict`, `fitted` and `nobs` methods.  This script
#' repeats the Python vignettes *Getting started* and *Inference* in R.
#'
#' Run it with `Rscript vignettes/from-r.R` after `bash scripts/setup_r.sh`,
#' or render it with `knitr::spin("vignettes/from-r.R")`.  Set
#' `NORDICSTATS_VIGNETTE_SIZE=small` for a quick run.

library(nordicstats)
SMALL <- identical(Sys.getenv("NORDICSTATS_VIGNETTE_SIZE"), "small")
n_train <- if (SMALL) 80L else 125L
n_toy <- if (SMALL) 100L else 160L
cat("size:", if (SMALL) "small" else "full", "\n")

#' ## The balance-scale data
#'
#' Every combination of left weight, left distance, right weight and right
#' distance in 1..5 (625 rows); the scale tips left (`L`) when
#' LW * LD > RW * RD, right (`R`) when it is smaller, and balances (`B`)
#' otherwise.  The response is an *ordered* factor: its levels give the order
#' of the classes.

balance <- expand.grid(right_distance = 1:5, right_weight = 1:5,
                       left_distance = 1:5, left_weight = 1:5)[, 4:1]
torque <- with(balance, left_weight * left_distance - right_weight * right_distance)
balance$balance <- factor(ifelse(torque > 0, "L", ifelse(torque < 0, "R", "B")),
                          levels = c("L", "B", "R"), ordered = TRUE)
print(table(balance$balance))

set.seed(2026)
train_rows <- unlist(lapply(split(seq_len(nrow(balance)), balance$balance), function(rows)
    sample(rows, round(n_train * length(rows) / nrow(balance)))))
train <- balance[train_rows, ]
test <- balance[-train_rows, ]

#' ## NORDIC-1 and NORDIC-2
#'
#' `nordic()` takes a formula and a data frame.  `method` is one of
#' `"nordic1"` (the default), `"nordic0"`, `"nordic2"` or `"bsvm"` (separate
#' SVMs); `kernel` is `"rbf"` (default, with the paper's median-distance width),
#' `"linear"` or `"poly"`; `C` weights the hinge loss.

fit1 <- nordic(balance ~ left_weight + left_distance + right_weight + right_distance,
               data = train, method = "nordic1", C = 1)
fit1
fit2 <- nordic(balance ~ left_weight + left_distance + right_weight + right_distance,
               data = train, method = "nordic2", C = 1)
summary(fit2)

#' ## Prediction
#'
#' `predict(fit, newdata)` returns an ordered factor; `type = "decision"`
#' returns the matrix of the K-1 decision values f_k(x), one column per
#' boundary.  The weighted error charges 2 for confusing `L` with `R`.

costs <- matrix(c(0, 1, 2, 1, 0, 1, 2, 1, 0), 3, dimnames = list(true = c("L", "B", "R"),
                                                                  predicted = c("L", "B", "R")))
weighted_error <- function(truth, pred) mean(costs[cbind(as.integer(truth), as.integer(pred))])
for (fit in list(fit1, fit2)) {
    pred <- predict(fit, test)
    cat(fit$method, ": error", round(mean(pred != test$balance), 4),
        " weighted error", round(weighted_error(test$balance, pred), 4), "\n")
}
print(table(predicted = predict(fit1, test), true = test$balance))
head(predict(fit1, test, type = "decision"))

#' ## Crossing boundaries
#'
#' Four ordered classes in the plane; the rare middle classes differ in the
#' second covariate.  Separate SVMs (`method = "bsvm"`) cross at some points,
#' NORDIC-1 does not.  A point is ambiguous when a negative f_k is followed by
#' a nonnegative f_{k+1}: then the K-1 binary rules have no class in common.

make_example <- function(n) {
    codes <- sample(1:4, n, replace = TRUE, prob = c(0.35, 0.15, 0.15, 0.35))
    centres <- rbind(c(-2, 0), c(0, 1.5), c(0, -1.5), c(2, 0))
    X <- centres[codes, ] + 0.7 * matrix(rnorm(2 * n), n)
    data.frame(x1 = X[, 1], x2 = X[, 2], y = factor(codes, levels = 1:4, ordered = TRUE))
}
crossing_rate <- function(fit, newdata) {
    F <- predict(fit, newdata, type = "decision")
    mean(apply(F[, -ncol(F), drop = FALSE] < 0 & F[, -1, drop = FALSE] >= 0, 1, any))
}
set.seed(4)
toy <- make_example(n_toy)
toy_new <- make_example(2000)
## (the linear fits warn that n is too small for Bahadur intervals; not used here)
bsvm <- suppressWarnings(nordic(y ~ x1 + x2, data = toy, method = "bsvm", kernel = "linear"))
nordic1 <- suppressWarnings(nordic(y ~ x1 + x2, data = toy, method = "nordic1",
                                   kernel = "linear"))
crossing <- rbind(
    BSVM = c(training = bsvm$crossing_rate, new = crossing_rate(bsvm, toy_new)),
    "NORDIC-1" = c(training = nordic1$crossing_rate, new = crossing_rate(nordic1, toy_new)))
print(round(crossing, 4))
cat("BSVM crossing rate on training rows:", bsvm$crossing_rate, "\n")
cat("NORDIC-1 crossing rate on training rows:", nordic1$crossing_rate, "\n")

#' ## Inference for linear NORDIC
#'
#' Three ordered classes `a < b < c`, X | class ~ N(mu, I) with
#' mu_a = (-1.5, 0), mu_b = (0, 0), mu_c = (1.5, 1), n = 400.  Arguments that
#' `nordic()` does not know are passed to the Python `fit()`.  The default,
#' `cov_type = "auto"`, checks per boundary whether the Bahadur sandwich standard
#' errors of the linear coefficients (Koo et al. 2008 with the paper's Theorem 1)
#' apply and uses the bootstrap where they do not; `summary()` says which one each
#' boundary got and why.  `cov_type = "bahadur"` forces the sandwich (NA where it
#' does not apply), and `cov_type = "bootstrap", cov_kwds = list(n_boot = 50,
#' random_state = 1)` asks for bootstrap standard errors everywhere.

simulate <- function(n) {
    codes <- sample(1:3, n, replace = TRUE, prob = c(0.35, 0.30, 0.35))
    means <- rbind(c(-1.5, 0), c(0, 0), c(1.5, 1))
    X <- means[codes, ] + matrix(rnorm(2 * n), n)
    data.frame(x1 = X[, 1], x2 = X[, 2],
               y = factor(c("a", "b", "c")[codes], levels = c("a", "b", "c"), ordered = TRUE))
}
set.seed(20261122)
sample_data <- simulate(400)
lin <- nordic(y ~ x1 + x2, data = sample_data, kernel = "linear", C = 1)
summary(lin)

#' `coef()` is a terms x boundaries matrix (row `(Intercept)` holds the b_k);
#' `confint()` and `vcov()` cover all coefficients of all boundaries, so
#' contrasts between boundaries can be formed by hand, e.g. a Wald test of
#' equal `x2` slopes (parallel boundaries in the `x2` direction).

coef(lin)
ci <- confint(lin)
print(round(ci, 4))
V <- vcov(lin)
slope <- grep("x2", rownames(V))       # the x2 rows of boundaries a|b and b|c, in order
contrast <- coef(lin)["x2", 1] - coef(lin)["x2", 2]
se <- sqrt(V[slope[1], slope[1]] + V[slope[2], slope[2]] - 2 * V[slope[1], slope[2]])
cat(sprintf("x2 slope difference %.4f (se %.4f), z = %.3f, p = %.4g\n", contrast, se,
            contrast / se, 2 * pnorm(-abs(contrast / se))))

#' Bootstrap standard errors for comparison (a small number of resamples in
#' the small size):

boot <- nordic(y ~ x1 + x2, data = sample_data, kernel = "linear", C = 1,
               cov_type = "bootstrap",
               cov_kwds = list(n_boot = if (SMALL) 25L else 200L, random_state = 1L))
se_table <- cbind(Bahadur = sqrt(diag(vcov(lin))), bootstrap = sqrt(diag(vcov(boot))))
print(round(se_table, 4))

#' Predictions carry the user's labels; `newdata` goes through the formula.

newpoints <- data.frame(x1 = c(-2, 0, 2), x2 = c(0, 0, 1))
print(predict(lin, newpoints))
print(predict(lin, newpoints, type = "decision"))
cat("nobs:", nobs(lin), "\n")
