## Comparators of the paper, fitted by nordicstats.compare in Python:
## ordinal_svr() (epsilon-SVR on the level numbers, cut-offs k + 1/2) and
## ordered_logit() (proportional odds, MASS::polr's sign convention).

ordinal_svr <- function(formula, data, kernel = c("rbf", "linear", "poly"), C = 1,
                        gamma = NULL, epsilon = 0.1, scale = FALSE, ..., weights, subset,
                        na.action)
{
    call <- match.call()
    if (missing(kernel)) kernel <- kernel[1L]
    mf <- .model_frame(match.call(expand.dots = FALSE), parent.frame())
    args <- c(list(kernel = kernel, C = C, gamma = gamma, epsilon = epsilon, scale = scale),
              list(...))
    .fit_formula("svr", "ordinal_svr", call, mf, args)
}

ordered_logit <- function(formula, data, ..., weights, subset, na.action)
{
    call <- match.call()
    mf <- .model_frame(match.call(expand.dots = FALSE), parent.frame())
    .fit_formula("ologit", "ordered_logit", call, mf, list(...))
}

print.ordinal_svr <- function(x, digits = max(3L, getOption("digits") - 3L), ...)
{
    .print_call(x)
    cat("\nEpsilon-SVR on the level numbers 1..K; class = 1 + #{k: g(x) >= k + 1/2}\n")
    cat("Kernel:", x$kernel_description, "  C:", format(x$C), "  epsilon:",
        format(x$epsilon), "  scaled:", x$scale, "\n")
    cat("Intercept:", format(x$intercept, digits = digits), "  Support vectors:",
        x$n_support, "\n")
    cat("\nCut-offs:\n")
    print(x$cutoffs, digits = digits, ...)
    if (nzchar(mess <- naprint(x$na.action))) cat("(", mess, ")\n", sep = "")
    invisible(x)
}

summary.ordinal_svr <- function(object, ...)
{
    object$counts <- .class_counts(object$state)
    class(object) <- c("summary.ordinal_svr", class(object))
    object
}

print.summary.ordinal_svr <- function(x, ...)
{
    print.ordinal_svr(x, ...)
    .print_class_counts(x$counts)
    cat("Number of observations:", x$nobs, "\n")
    invisible(x)
}

coef.ordinal_svr <- function(object, ...) c("(Intercept)" = object$intercept)

print.ordered_logit <- function(x, digits = max(3L, getOption("digits") - 3L), ...)
{
    .print_call(x)
    if (length(x$coefficients)) {
        cat("\nCoefficients:\n")
        print(x$coefficients, digits = digits, ...)
    } else cat("\nNo coefficients\n")
    cat("\nIntercepts:\n")
    print(x$zeta, digits = digits, ...)
    cat("\nResidual Deviance:", format(-2 * x$logLik, nsmall = 2L), "\n")
    cat("AIC:", format(x$aic, nsmall = 2L), "\n")
    if (nzchar(mess <- naprint(x$na.action))) cat("(", mess, ")\n", sep = "")
    invisible(x)
}

summary.ordered_logit <- function(object, ...)
{
    keep <- c("call", "nobs", "logLik", "aic", "na.action")
    ans <- c(object[intersect(keep, names(object))], .coef_summary(object))
    class(ans) <- "summary.ordered_logit"
    ans
}

print.summary.ordered_logit <- function(x, digits = max(3L, getOption("digits") - 3L),
                                        signif.stars = getOption("show.signif.stars"), ...)
{
    .print_call(x)
    .print_block(x, x$block == "coefficients", x$term, "Coefficients:", digits,
                 signif.stars, ...)
    .print_block(x, x$block == "thresholds", x$term, "Intercepts:", digits, signif.stars,
                 p_values = FALSE, ...)
    if (!is.null(x$note)) cat("\nStandard errors not available:", x$note, "\n")
    cat("\nResidual Deviance:", format(-2 * x$logLik, nsmall = 2L), "\n")
    cat("AIC:", format(x$aic, nsmall = 2L), "\n")
    if (nzchar(mess <- naprint(x$na.action))) cat("(", mess, ")\n", sep = "")
    invisible(x)
}

coef.ordered_logit <- function(object, ...) object$coefficients

## The maximised log-likelihood (Python's), so that AIC() and BIC() work as for polr:
## with case weights the number of observations is their sum, as in MASS::polr.
logLik.ordered_logit <- function(object, ...)
{
    w <- object$state$args$weights
    structure(object$logLik, df = length(object$coefficients) + length(object$zeta),
              nobs = if (is.null(w)) object$nobs else sum(w), class = "logLik")
}
