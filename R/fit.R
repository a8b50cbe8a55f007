## Shared machinery of the model front ends (nordic, ordinal_svr, ordered_logit):
## R builds the model frame and design matrix (R's formula semantics, contrasts,
## subset and na.action); Python fits, predicts and does the inference.

## Model frame of the caller's call `mc` (from match.call(expand.dots = FALSE)).
.model_frame <- function(mc, envir) {
    mf <- mc[c(1L, match(c("formula", "data", "subset", "weights", "na.action"), names(mc), 0L))]
    mf[[1L]] <- quote(stats::model.frame)
    eval(mf, envir)
}

## Design matrix without the intercept column (the boundaries have their own).
.design_matrix <- function(terms, mf, contrasts = NULL) {
    X <- model.matrix(terms, mf, contrasts.arg = contrasts)
    out <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    attr(out, "contrasts") <- attr(X, "contrasts")
    attr(out, "assign") <- NULL
    out
}

## Fit `family` in Python and return the classed R object.  Everything needed
## to re-create the Python fit is kept in `$state` (see .ensure_fit()).
.fit_formula <- function(family, class, call, mf, args) {
    terms <- attr(mf, "terms")
    data <- .model_data(mf, call)
    X <- data$X
    if (!is.null(data$weights)) args$weights <- data$weights
    state <- list(family = family, y = data$y, X = X, args = args, response = data$response)
    fit <- .py_list("fit_model", state, call)
    fit$call <- call
    fit$terms <- terms
    fit$model <- mf
    fit$xlevels <- .getXlevels(terms, mf)
    fit$contrasts <- attr(X, "contrasts")
    fit$na.action <- attr(mf, "na.action")
    fit$response <- data$response
    fit$state <- state
    class(fit) <- c(class, "nordicstats_fit")
    fit
}

## What Python gets from a model frame: the response (checked), the design matrix
## without row names, the case weights (or NULL) and the response's name.
.model_data <- function(mf, call) {
    terms <- attr(mf, "terms")
    response <- deparse1(terms[[2L]])
    X <- .design_matrix(terms, mf)
    rownames(X) <- NULL
    w <- model.weights(mf)
    list(y = unname(.check_response(model.response(mf), response, call)), X = X,
         weights = if (!is.null(w)) as.numeric(w), response = response)
}

## The response must say its order: an ordered factor, or numbers.  Unordered factors,
## character and logical vectors are refused with one message (as MASS::polr does).
.check_response <- function(y, name, call) {
    what <- if (is.factor(y) && !is.ordered(y)) "an unordered factor"
            else if (is.character(y)) "a character vector"
            else if (is.logical(y)) "a logical vector"
    if (is.null(what)) return(y)
    values <- if (is.factor(y)) levels(y) else sort(unique(as.character(y[!is.na(y)])))
    stop(errorCondition(sprintf(paste0(
        "the response '%s' is %s, so the order of its levels (%s) is not known. Make it ",
        "an ordered factor, e.g. %s <- ordered(%s, levels = c(...)), or ",
        "factor(..., ordered = TRUE)."), name, what, paste(values, collapse = ", "), name,
        name), class = "nordicstats_response_error", call = call))
}

## Make sure Python holds the fit behind `object`.  After readRDS() in a new
## session (or when Python's cache evicted it) the fit is re-created from
## object$state; fits are deterministic, and Python checks that the refit's
## training decision values equal the stored ones exactly.
.ensure_fit <- function(object) {
    if (!isTRUE(.py("has_fit", key = object$key)))
        .py("refit_model", key = object$key, state = object$state,
            fitted_decision = object$fitted_decision)
    invisible(object)
}

## newdata as a design matrix in the training layout; rows with NA are flagged.
.new_design <- function(object, newdata) {
    tt <- delete.response(object$terms)
    mf <- model.frame(tt, as.data.frame(newdata), na.action = na.pass,
                      xlev = object$xlevels)
    if (!is.null(cl <- attr(tt, "dataClasses"))) .checkMFClasses(cl, mf)
    X <- .design_matrix(tt, mf, object$contrasts)
    list(X = X, ok = stats::complete.cases(X), rows = rownames(mf))
}

## The prediction types of each family, the default first.
.PREDICT_TYPES <- list(nordic = c("class", "decision", "probs"),
                       ologit = c("class", "probs", "decision"),
                       svr = c("class", "decision", "score"))

predict.nordicstats_fit <- function(object, newdata, type = "class", ...)
{
    type <- match.arg(type, .PREDICT_TYPES[[object$family]])
    if (type == "probs" && identical(object$family, "nordic") && !isTRUE(object$probability))
        stop("this fit has no class probabilities: refit with probability = TRUE, e.g. ",
             "nordic(", deparse1(formula(object)), ", data = ..., probability = TRUE).",
             call. = FALSE)
    if (missing(newdata) || is.null(newdata)) {
        if (type %in% c("class", "decision")) {
            out <- if (type == "class") object$fitted_class else object$fitted_decision
            return(napredict(object$na.action, out))
        }
        newdata <- NULL
    }
    .ensure_fit(object)
    if (is.null(newdata)) {
        value <- .py("predict_model", key = object$key, X = object$state$X, type = type)
        return(napredict(object$na.action, value))
    }
    nd <- .new_design(object, newdata)
    value <- .py("predict_model", key = object$key, X = nd$X[nd$ok, , drop = FALSE],
                 type = type)
    .pad_rows(value, nd$ok, nd$rows)
}

## Put predictions for the complete rows back in place; NA elsewhere.
.pad_rows <- function(value, ok, rows) {
    if (is.factor(value)) {
        out <- factor(rep(NA_character_, length(ok)), levels = levels(value),
                      ordered = is.ordered(value))
        out[ok] <- value
        return(out)
    }
    if (is.matrix(value)) {
        out <- matrix(NA_real_, length(ok), ncol(value),
                      dimnames = list(rows, colnames(value)))
        out[ok, ] <- value
        return(out)
    }
    out <- rep(NA_real_, length(ok))
    out[ok] <- value
    names(out) <- rows
    out
}

fitted.nordicstats_fit <- function(object, ...)
    napredict(object$na.action, object$fitted_decision)

## Hinge slacks per boundary (nordic), level number minus score (ordinal_svr); the
## ordered logit has none (Python says so).  Computed in Python.
residuals.nordicstats_fit <- function(object, ...)
    napredict(object$na.action, .model_residuals(object))

## Residuals of the rows of the model frame (no na.exclude padding).
.model_residuals <- function(object) {
    .ensure_fit(object)
    .py("residuals_model", key = object$key, X = object$state$X, y = object$state$y)
}

model.frame.nordicstats_fit <- function(formula, ...) formula$model

model.matrix.nordicstats_fit <- function(object, ...)
    model.matrix(object$terms, object$model, contrasts.arg = object$contrasts)

nobs.nordicstats_fit <- function(object, ...) object$nobs

formula.nordicstats_fit <- function(x, ...) formula(x$terms)

vcov.nordicstats_fit <- function(object, ...)
{
    .ensure_fit(object)
    .py("vcov_model", key = object$key)
}

confint.nordicstats_fit <- function(object, parm, level = 0.95, ...)
{
    .ensure_fit(object)
    ci <- .py("confint_model", key = object$key, level = as.numeric(level))
    a <- (1 - level) / 2
    colnames(ci) <- paste(format(100 * c(a, 1 - a), trim = TRUE, scientific = FALSE,
                                 digits = 3L), "%")
    if (missing(parm)) return(ci)
    if (is.character(parm) && !all(parm %in% rownames(ci)))
        stop("parm has names that are not parameters: ",
             paste(setdiff(parm, rownames(ci)), collapse = ", "),
             ". Parameters: ", paste(rownames(ci), collapse = ", "), call. = FALSE)
    ci[parm, , drop = FALSE]
}

## Coefficient table from Python, as a matrix with blocks (R only formats).
.coef_summary <- function(object) {
    .ensure_fit(object)
    out <- .py("coef_table", key = object$key)
    tab <- out$table
    est <- as.matrix(tab[, setdiff(names(tab), c("block", "term")), drop = FALSE])
    rownames(est) <- paste(tab$block, tab$term, sep = ":")
    list(coefficients = est, block = tab$block, term = tab$term, note = out$note,
         se_sources = out$sources)
}

## printCoefmat() of the rows of one block, named by `names`.
.print_block <- function(s, rows, names, title, digits, signif.stars, p_values = TRUE, ...) {
    if (!any(rows)) return(invisible())
    cat("\n", title, "\n", sep = "")
    m <- s$coefficients[rows, , drop = FALSE]
    rownames(m) <- names[rows]
    has_p <- p_values && ncol(m) == 4L
    if (!p_values) m <- m[, seq_len(min(3L, ncol(m))), drop = FALSE]
    printCoefmat(m, digits = digits, signif.stars = signif.stars && has_p,
                 has.Pvalue = has_p, P.values = has_p, na.print = "NA", ...)
}

.print_call <- function(x) {
    if (!is.null(cl <- x$call)) {
        cat("Call:\n")
        dput(cl, control = NULL)
    }
}

## Wald test of parallel boundaries, H0: w_1 = ... = w_{K-1}, computed in Python
## (test_parallel()); documented in man/parallel_test.Rd.
parallel_test <- function(object)
{
    if (!inherits(object, "nordic"))
        stop("parallel_test() needs a fit from nordic(kernel = \"linear\").", call. = FALSE)
    .ensure_fit(object)
    out <- .py("parallel_test_model", key = object$key)
    available <- is.null(out$reason)
    structure(list(statistic = c("X-squared" = if (available) out$statistic else NA_real_),
                   parameter = c(df = out$df),
                   p.value = if (available) out$p_value else NA_real_, method = out$method,
                   data.name = deparse1(substitute(object)), reason = out$reason),
              class = c("nordic_parallel_test", "htest"))
}

print.nordic_parallel_test <- function(x, ...)
{
    if (is.null(x$reason)) return(NextMethod())
    cat("\n\t", x$method, "\n\ndata:  ", x$data.name, "\n", sep = "")
    cat("Not available:", x$reason, "\n\n")
    invisible(x)
}
