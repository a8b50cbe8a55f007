## broom's tidy(), glance() and augment() (generics), as tibbles with broom's column
## names.  Every number comes from the fit or from Python (summary, confint, predict).

## One row per (boundary or block, term): estimate, std.error, statistic, p.value and,
## with conf.int = TRUE, the Wald interval.  `group` names the block column.
.tidy_fit <- function(x, group, conf.int, conf.level) {
    s <- .coef_summary(x)
    cf <- s$coefficients
    col <- function(name) if (name %in% colnames(cf)) .na_for_nan(cf[, name]) else NA_real_
    out <- data.frame(term = s$term, estimate = col("Estimate"),
                      std.error = col("Std. Error"), statistic = col("z value"),
                      p.value = col("Pr(>|z|)"), stringsAsFactors = FALSE)
    out[[group]] <- s$block
    if (conf.int) {
        ci <- if (is.null(s$note)) confint(x, level = conf.level) else NULL
        key <- if (group == "boundary")
            paste0(sub("^\\(Intercept\\)$", "Intercept", s$term), "@", s$block) else s$term
        out$conf.low <- if (is.null(ci)) NA_real_ else .na_for_nan(ci[key, 1L])
        out$conf.high <- if (is.null(ci)) NA_real_ else .na_for_nan(ci[key, 2L])
    }
    tibble::as_tibble(out)
}

## A withheld number (NaN on the Python side) is NA, as in broom's tables.
.na_for_nan <- function(value) {
    value <- unname(value)
    value[is.nan(value)] <- NA_real_
    value
}

tidy.nordic <- function(x, conf.int = FALSE, conf.level = 0.95, ...)
    .tidy_fit(x, "boundary", conf.int, conf.level)

tidy.ordered_logit <- function(x, conf.int = FALSE, conf.level = 0.95, ...) {
    out <- .tidy_fit(x, "coef.type", conf.int, conf.level)
    out$coef.type <- unname(c(coefficients = "coefficient",
                              thresholds = "threshold")[out$coef.type])
    out
}

## The SVR has no inference: its intercept and the cut-offs, without standard errors.
tidy.ordinal_svr <- function(x, ...)
    tibble::tibble(term = c("(Intercept)", names(x$cutoffs)),
                   estimate = c(x$intercept, unname(x$cutoffs)),
                   coef.type = c("intercept", rep("cutoff", length(x$cutoffs))))

glance.nordic <- function(x, ...)
    tibble::tibble(method = x$method, kernel = x$kernel, C = x$C,
                   gamma = if (is.null(x$gamma)) NA_real_ else x$gamma,
                   objective = x$objective, crossing.rate = x$crossing_rate,
                   n.support = sum(x$n_support), nobs = x$nobs)

glance.ordered_logit <- function(x, ...) {
    ll <- logLik(x)
    tibble::tibble(edf = attr(ll, "df"), logLik = as.numeric(ll), AIC = stats::AIC(ll),
                   BIC = stats::BIC(ll), deviance = -2 * as.numeric(ll), nobs = x$nobs)
}

glance.ordinal_svr <- function(x, ...)
    tibble::tibble(kernel = x$kernel, C = x$C, epsilon = x$epsilon,
                   n.support = x$n_support, nobs = x$nobs)

## The data with `.fitted` (the predicted class) and, for the SVR, `.resid` (level
## number minus score); `newdata` instead of the training data gives `.fitted` only.
augment.nordicstats_fit <- function(x, data = model.frame(x), newdata = NULL, ...) {
    if (!is.null(newdata)) {
        out <- as.data.frame(newdata)
        out$.fitted <- predict(x, newdata = out)
        return(tibble::as_tibble(out))
    }
    out <- as.data.frame(data)
    out$.fitted <- predict(x, newdata = out)
    if (identical(x$family, "svr") && nrow(out) == nrow(x$model))
        out$.resid <- .model_residuals(x)
    tibble::as_tibble(out)
}
