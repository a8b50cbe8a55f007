## nordic(): the NORDIC front end and its methods.

## `weights` are case weights evaluated in the model frame like lm()'s (so subset and
## na.action apply to them; rows of weight 0 are left out of the fit but get fitted
## values); `cost` is a K x K matrix cost[true, predicted] with dimnames = the levels.
nordic <- function(formula, data, method = c("nordic1", "nordic0", "nordic2", "bsvm"),
                   kernel = c("rbf", "linear", "poly"), C = 1, gamma = NULL,
                   probability = FALSE, ..., weights, subset, na.action)
{
    call <- match.call()
    ## The first choice is the default.  Values are validated once, in Python
    ## (messages reworded for R by the bridge).
    if (missing(method)) method <- method[1L]
    if (missing(kernel)) kernel <- kernel[1L]
    if (!is.logical(probability) || length(probability) != 1L || is.na(probability))
        stop("probability must be TRUE or FALSE.", call. = FALSE)
    mf <- .model_frame(match.call(expand.dots = FALSE), parent.frame())
    args <- c(list(method = method, kernel = kernel, C = C, gamma = gamma),
              if (probability) list(probability = TRUE), list(...))
    fit <- .fit_formula("nordic", "nordic", call, mf, args)
    fit$probability <- probability
    fit
}

print.nordic <- function(x, digits = max(3L, getOption("digits") - 3L), ...)
{
    .print_call(x)
    cat("\nMethod:", x$method, "  Kernel:", x$kernel_description, "  C:", format(x$C), "\n")
    if (!is.null(x$coefficients)) {
        cat("\nCoefficients (one column per boundary):\n")
        print(x$coefficients, digits = digits, ...)
    }
    cat("\nIntercepts:\n")
    print(x$intercepts, digits = digits, ...)
    cat("\nObjective:", format(x$objective, digits = digits),
        "  Training crossing rate:", format(x$crossing_rate, digits = digits), "\n")
    if (nzchar(mess <- naprint(x$na.action))) cat("(", mess, ")\n", sep = "")
    invisible(x)
}

summary.nordic <- function(object, ...)
{
    keep <- c("call", "method", "kernel_description", "C", "levels", "boundaries", "nobs",
              "objective", "solver", "status", "crossing_rate", "na.action", "weighting")
    ans <- c(object[intersect(keep, names(object))], .coef_summary(object))
    ans$counts <- .class_counts(object$state)
    class(ans) <- "summary.nordic"
    ans
}

print.summary.nordic <- function(x, digits = max(3L, getOption("digits") - 3L),
                                 signif.stars = getOption("show.signif.stars"), ...)
{
    .print_call(x)
    cat("\nMethod:", x$method, "  Kernel:", x$kernel_description, "  C:", format(x$C), "\n")
    .print_class_counts(x$counts)
    is_int <- x$term == "(Intercept)"
    for (b in x$boundaries)
        .print_block(x, !is_int & x$block == b, x$term,
                     paste0("Coefficients, boundary ", b, ":"), digits, signif.stars, ...)
    .print_block(x, is_int, x$block, "Intercepts (one per boundary):", digits,
                 signif.stars, p_values = FALSE, ...)
    if (!is.null(x$note)) cat("\nStandard errors not available:", x$note, "\n")
    .print_se_sources(x$se_sources)
    cat("\nObjective:", format(x$objective, digits = digits), "  Solver:", x$solver,
        paste0("(", x$status, ")"), "  Training crossing rate:",
        format(x$crossing_rate, digits = digits), "\n")
    cat("Number of observations:", x$nobs, "\n")
    if (length(x$weighting) && nzchar(x$weighting)) cat(x$weighting, "\n")
    if (nzchar(mess <- naprint(x$na.action))) cat("(", mess, ")\n", sep = "")
    invisible(x)
}

## Terms x boundaries; row "(Intercept)" holds b_k.  Kernel fits have only that row.
coef.nordic <- function(object, ...)
{
    b <- matrix(object$intercepts, nrow = 1L,
                dimnames = list("(Intercept)", names(object$intercepts)))
    if (is.null(object$coefficients)) b else rbind(b, object$coefficients)
}

## Observations per level (lowest first); with case weights (frequencies) their
## weighted totals, as the Python summary gives them.
.class_counts <- function(state)
{
    w <- state$args$weights
    if (is.null(w)) return(table(state$y, dnn = NULL))
    totals <- as.table(vapply(split(w, state$y), sum, numeric(1)))
    attr(totals, "weighted") <- TRUE
    totals
}

.print_class_counts <- function(counts)
{
    weighted <- isTRUE(attr(counts, "weighted"))
    cat("\nClasses (lowest first", if (weighted) ", weighted counts", "):\n", sep = "")
    attr(counts, "weighted") <- NULL
    print(counts)
}

## Which estimator gave each boundary's standard errors, and why (cov_type = "auto").
.print_se_sources <- function(src)
{
    if (is.null(src) || !NROW(src)) return(invisible())
    cat("\nStandard errors by boundary:\n")
    for (i in seq_len(NROW(src))) {
        why <- if (nzchar(src$reason[i])) paste0(" (", src$reason[i], ")") else ""
        what <- src$estimator[i]
        if (!is.null(src$intervals) && !src$intervals[i] && what != "none")
            what <- paste(what, "(no z values, p-values or intervals)")
        cat("  ", src$boundary[i], ": ", what, why, "\n", sep = "")
    }
    invisible()
}
