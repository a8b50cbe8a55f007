## Conversions R -> Python -> R through the bridge's echo() must be identical().

every_type <- function() {
    data.frame(
        num = c(1.5, NA, NaN, -Inf, 2, 1e-300),
        int = c(1L, NA, 3L, -5L, .Machine$integer.max, -.Machine$integer.max),
        lgl = c(TRUE, NA, FALSE, TRUE, FALSE, NA),
        chr = c("a", NA, "\u00e9\u00df", "", "NA", "NULL"),
        fac = factor(c("x", NA, "y", "x", "y", "x"), levels = c("y", "x", "unused")),
        ord = factor(c("lo", "hi", NA, "mid", "lo", "hi"), levels = c("lo", "mid", "hi"),
                     ordered = TRUE),
        stringsAsFactors = FALSE)
}

test_that("a data.frame with every column type and NAs survives the round trip", {
    skip_without_python()
    d <- every_type()
    expect_identical(.py("echo", x = d), d)
    sub <- d[c(2, 4, 6), ]                       # integer row names 2, 4, 6
    expect_identical(.py("echo", x = sub), sub)
    named <- d
    rownames(named) <- letters[1:6]
    expect_identical(.py("echo", x = named), named)
    expect_identical(.py("echo", x = d[0, ]), d[0, ])
    all_na <- data.frame(a = c(NA_real_, NA), b = c(NA_integer_, NA), c = c(NA, NA),
                         d = c(NA_character_, NA))
    expect_identical(.py("echo", x = all_na), all_na)
})

test_that("vectors, factors, matrices and lists survive the round trip", {
    skip_without_python()
    for (v in list(c(1.5, NA, NaN), c(3L, NA), c(NA, TRUE), c("a", NA),
                   c(a = 1, b = 2), factor(c("b", NA, "a")),
                   factor(c("b", "a"), levels = c("b", "a"), ordered = TRUE),
                   matrix(c(1.5, NA, 3, 4), 2, dimnames = list(NULL, c("p", "q"))),
                   matrix(1:6 + 0.5, 2)))
        expect_identical(.py("echo", x = v), v)
    l <- list(a = c(1, 2), b = list(c = "x", d = NULL), e = factor("z"))
    expect_identical(.py("echo", x = l), l)
})

test_that("R's NA and NaN stay distinct in doubles", {
    skip_without_python()
    back <- .py("echo", x = c(NA, NaN))
    expect_true(is.na(back[1]) && !is.nan(back[1]))
    expect_true(is.nan(back[2]))
})

test_that("unsupported columns give an R error naming the column", {
    skip_without_python()
    d <- data.frame(when = as.Date("2020-01-01") + 0:1)
    expect_error(.py("echo", x = d), "column 'when'", class = "TypeError")
})
