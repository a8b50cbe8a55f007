## plot() of a fit: the decision values by observed class (one panel per boundary), or,
## for a fit on two numeric covariates, the fitted boundaries f_k(x) = 0 over the data.
## The decision values come from Python (fitted values and predict()).

plot.nordicstats_fit <- function(x, type = c("decision", "boundaries"), grid = 150L, ...)
{
    if (missing(type)) type <- if (length(.two_covariates(x))) "boundaries" else "decision"
    type <- match.arg(type)
    if (type == "decision") .plot_decision(x, ...) else .plot_boundaries(x, grid, ...)
    invisible(x)
}

## Names of the two numeric covariates of the formula, or NULL.
.two_covariates <- function(x) {
    vars <- all.vars(delete.response(x$terms))
    if (length(vars) == 2L && all(vapply(x$model[vars], is.numeric, logical(1)))) vars
}

.plot_decision <- function(x, ...) {
    dec <- x$fitted_decision
    y <- model.response(x$model)
    old <- graphics::par(mfrow = c(1L, ncol(dec)))
    on.exit(graphics::par(old))
    for (k in seq_len(ncol(dec))) {
        graphics::boxplot(dec[, k] ~ y, xlab = "observed class", ylab = "decision value",
                          main = paste("boundary", colnames(dec)[k]), ...)
        graphics::abline(h = 0, lty = 2)
    }
}

.plot_boundaries <- function(x, grid, ...) {
    vars <- .two_covariates(x)
    if (is.null(vars))
        stop("type = \"boundaries\" needs a fit on exactly two numeric covariates; ",
             "this one has ", paste(all.vars(delete.response(x$terms)), collapse = ", "),
             ". Use type = \"decision\".", call. = FALSE)
    mf <- x$model
    axes <- lapply(mf[vars], function(v) seq(min(v), max(v), length.out = grid))
    new <- do.call(expand.grid, axes)
    dec <- predict(x, newdata = new, type = "decision")
    y <- model.response(mf)
    graphics::plot(mf[[vars[1L]]], mf[[vars[2L]]], col = as.integer(y), pch = as.integer(y),
                   xlab = vars[1L], ylab = vars[2L], ...)
    for (k in seq_len(ncol(dec)))
        graphics::contour(axes[[1L]], axes[[2L]], matrix(dec[, k], grid), levels = 0,
                          labels = colnames(dec)[k], add = TRUE, lty = k)
    graphics::legend("topright", legend = levels(y), col = seq_along(levels(y)),
                     pch = seq_along(levels(y)), bty = "n")
}
