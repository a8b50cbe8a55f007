## Theory helpers (paper, Section 5.1), computed by nordicstats.theory in Python.
## R's classes are 1..K (Python's codes are 0..K-1); when eta has level names
## (column names, or names of a vector) the rules return ordered factors.

.theory <- function(name, ..., .call = sys.call(-1L))
    .py_list("theory", list(name = name, args = list(...)), .call)

.as_classes <- function(codes, eta) {
    labels <- if (is.matrix(eta)) colnames(eta) else names(eta)
    classes <- as.integer(codes) + 1L
    if (is.null(labels)) return(classes)
    factor(labels[classes], levels = labels, ordered = TRUE)
}

.eta <- function(eta) if (is.matrix(eta)) unname(eta) else unname(as.numeric(eta))

bayes_rule_ordinal <- function(eta)
    .as_classes(.theory("bayes_rule_ordinal", eta = .eta(eta)), eta)

bayes_rule_multiclass <- function(eta)
    .as_classes(.theory("bayes_rule_multiclass", eta = .eta(eta)), eta)

upper_tail <- function(eta) .theory("upper_tail", eta = .eta(eta))

conditional_risk <- function(eta, rule = c("ordinal", "median", "multiclass", "mode"),
                             loss = "zero_one")
{
    if (is.character(rule)) rule <- rule[1L]
    else rule <- as.integer(rule) - 1L        # R classes 1..K -> Python codes
    .theory("conditional_risk", eta = .eta(eta), rule_or_predictions = rule, loss = loss)
}

fisher_consistency <- function(loss, eta, constrained = TRUE, bound = 20, n_grid = 4001L)
{
    out <- .theory("fisher_consistency", loss = loss, eta = .eta(eta),
                   constrained = constrained, bound = bound, n_grid = as.integer(n_grid))
    class(out) <- "nordic_fisher"
    out
}

print.nordic_fisher <- function(x, ...)
{
    cat("Generalized Fisher consistency of the", x$loss, "loss",
        if (isTRUE(x$constrained)) "(noncrossing constraints imposed)" else "(unconstrained)",
        "\n")
    cat("eta:", format(x$eta), "\n\n")
    print(x$table, ...)
    invisible(x)
}
