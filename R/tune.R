## tune_nordic(): the paper's grid over C and the kernel width, scored by stratified
## k-fold cross-validation or on a tuning set.  The search is Python's
## nordicstats.tuning.tune (R builds the model frames and refits the chosen model).

tune_nordic <- function(formula, data, method = c("nordic1", "nordic0", "nordic2", "bsvm"),
                        kernel = c("rbf", "linear", "poly"), C = 2^(-4:4), gamma = NULL,
                        width_quantiles = c(0.1, 0.5, 0.9), folds = 5L, seed = NULL,
                        tune_data = NULL, scoring = c("error", "mae"), refit = TRUE, ...,
                        weights, subset, na.action)
{
    call <- match.call()
    method <- match.arg(method)
    kernel <- match.arg(kernel)
    dots <- list(...)
    if (isFALSE(dots$probability)) dots$probability <- NULL  # nordic()'s default
    if (missing(scoring) && !is.null(dots$cost)) scoring <- dots$cost  # the fit's own loss
    else if (is.character(scoring)) scoring <- match.arg(scoring)
    .check_number_vector(C, "C")
    if (!is.null(gamma)) .check_number_vector(gamma, "gamma")
    if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)  # set.seed() decides
    mf <- .model_frame(match.call(expand.dots = FALSE), parent.frame())
    data <- .model_data(mf, call)
    holdout <- if (is.null(tune_data)) list()
               else .tuning_set(attr(mf, "terms"), tune_data, mf, data$response, call)
    out <- .py_list("tune_model", c(list(
        y = data$y, X = data$X, args = c(list(method = method, kernel = kernel), dots),
        C = as.numeric(C), gamma = if (!is.null(gamma)) as.numeric(gamma),
        quantiles = as.numeric(width_quantiles), folds = as.integer(folds),
        seed = as.integer(seed), scoring = scoring, weights = data$weights,
        response = data$response), holdout), call)
    best <- out$best
    fit <- NULL
    if (refit) {
        args <- c(list(method = method, kernel = kernel, C = best$C,
                       gamma = if (!is.null(best$gamma)) best$gamma else gamma), dots)
        fit <- .fit_formula("nordic", "nordic", call, mf, args)
        fit$call <- .refit_call(call, best)
        fit$probability <- isTRUE(dots$probability)
    }
    structure(list(call = call, performances = out$scores,
                   best.parameters = as.data.frame(best),
                   best.performance = out$best_score, best.model = fit,
                   protocol = out$protocol, scoring = out$scoring, folds = out$fold,
                   seed = seed, method = method, kernel = kernel),
              class = "nordic_tune")
}

.check_number_vector <- function(x, name)
    if (!is.numeric(x) || !length(x) || anyNA(x) || any(x <= 0))
        stop(name, " must be a vector of positive numbers (the grid to search).", call. = FALSE)

## The tuning set's response and design matrix, in the training layout.
.tuning_set <- function(terms, tune_data, mf, response, call) {
    tmf <- model.frame(terms, as.data.frame(tune_data), xlev = .getXlevels(terms, mf))
    y <- .check_response(model.response(tmf), response, call)
    if (!identical(levels(y), levels(model.response(mf))))
        stop("the response of tune_data must have the levels of the training response (",
             paste(levels(model.response(mf)), collapse = " < "), ").", call. = FALSE)
    list(y_tune = unname(y), X_tune = unname(.design_matrix(terms, tmf)))
}

## The call that refits the chosen model: nordic() with the best C and gamma.
.refit_call <- function(call, best) {
    keep <- setdiff(names(call), c("C", "gamma", "width_quantiles", "folds", "seed",
                                   "tune_data", "scoring", "refit"))
    out <- call[c(1L, match(keep[nzchar(keep)], names(call)))]
    out[[1L]] <- as.name("nordic")
    out$C <- best$C
    if (!is.null(best$gamma)) out$gamma <- best$gamma
    out
}

print.nordic_tune <- function(x, digits = max(3L, getOption("digits") - 3L), ...)
{
    .print_call(x)
    what <- if (x$protocol == "cv") paste0(length(unique(x$folds)), "-fold cross-validation")
            else "the tuning set"
    cat("\nTuning of ", x$method, " (", x$kernel, " kernel) by ", what, "; criterion: ",
        x$scoring, "\n", sep = "")
    cat("\nBest parameters:\n")
    print(x$best.parameters, digits = digits, row.names = FALSE)
    cat("\nBest performance:", format(x$best.performance, digits = digits), "\n")
    invisible(x)
}

summary.nordic_tune <- function(object, ...) {
    class(object) <- c("summary.nordic_tune", class(object))
    object
}

print.summary.nordic_tune <- function(x, digits = max(3L, getOption("digits") - 3L), ...)
{
    print.nordic_tune(x, digits = digits, ...)
    cat("\nScores of the grid (rank 1 = chosen):\n")
    cols <- intersect(c("C", "gamma", "score", "rank", "message"), names(x$performances))
    print(x$performances[, cols], digits = digits, row.names = FALSE)
    invisible(x)
}

## Score against log2(C), one line per kernel width.
plot.nordic_tune <- function(x, xlab = expression(log[2](C)), ylab = x$scoring,
                             main = "Tuning NORDIC", ...)
{
    p <- x$performances
    widths <- if (is.null(p$gamma)) list(seq_len(nrow(p))) else split(seq_len(nrow(p)), p$gamma)
    ok <- is.finite(p$score)
    graphics::plot(log2(p$C[ok]), p$score[ok], type = "n", xlab = xlab, ylab = ylab,
                   main = main, ...)
    for (i in seq_along(widths)) {
        rows <- widths[[i]]
        graphics::lines(log2(p$C[rows]), p$score[rows], type = "b", col = i, pch = i)
    }
    best <- p$rank == 1L
    graphics::points(log2(p$C[best]), p$score[best], pch = 19, cex = 1.5)
    if (!is.null(p$gamma))
        graphics::legend("topright", legend = paste("gamma =", format(as.numeric(names(widths)),
                                                                     digits = 3)),
                         col = seq_along(widths), pch = seq_along(widths), lty = 1, bty = "n")
    invisible(x)
}
