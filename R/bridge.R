## The R end of the bridge: find Python, start it once, call Python functions.
##
## Python functions are reached through one dispatcher that Python (rpy2)
## stores in the environment `.bridge` below.  Two hosts:
##  * R hosts Python: the first call starts Python through reticulate, used
##    only as a bootstrap (no data ever goes through reticulate); Python then
##    attaches rpy2 to this R process and registers the dispatcher.
##  * Python hosts R (`python -m nordicstats.r`): the dispatcher is registered
##    before any R code runs, so reticulate is never used.

.bridge <- new.env(parent = emptyenv())

## The repository the package was installed from: `R CMD INSTALL .` evaluates
## this line in the source directory, so the path is frozen into the installed
## code.  Empty when installed from a tarball (no pyproject.toml there).
.install_source <- if (file.exists("pyproject.toml") && file.exists("DESCRIPTION"))
    normalizePath(getwd()) else ""

## Which Python the bridge uses
##
## Order: option `nordicstats.python`, environment variable
## `NORDICSTATS_PYTHON`, then `.venv/bin/python` in the directory the package
## was installed from (`R CMD INSTALL .` in the repository).
nordic_python <- function() {
    candidates <- c(getOption("nordicstats.python", ""),
                    Sys.getenv("NORDICSTATS_PYTHON", ""),
                    if (nzchar(.install_source))
                        file.path(.install_source, ".venv", "bin", "python")
                    else "")
    for (path in candidates)
        if (nzchar(path)) return(path)
    ""
}

.bridge_ready <- function() is.function(.bridge$dispatch)

.start_python <- function() {
    python <- nordic_python()
    if (!nzchar(python) || !file.exists(python))
        stop("nordicstats needs a Python with the Python package nordicstats and rpy2 ",
             "(pip install 'nordicstats[r]'). None was found",
             if (nzchar(python)) paste0(" at '", python, "'") else "",
             ". Set Sys.setenv(NORDICSTATS_PYTHON = \"/path/to/python\") or ",
             "options(nordicstats.python = \"/path/to/python\") before the first call.",
             call. = FALSE)
    if (!requireNamespace("reticulate", quietly = TRUE))
        stop("starting Python from R needs the R package reticulate ",
             "(Debian: apt-get install r-cran-reticulate).", call. = FALSE)
    ## Tell rpy2 that R is already running in this process (it attaches instead
    ## of starting a second R).
    Sys.setenv(R_SESSION_INITIALIZED = sprintf("PID=%d:NAME=\"nordicstats\"", Sys.getpid()))
    res <- tryCatch(withCallingHandlers({
        reticulate::use_python(python, required = TRUE)
        reticulate::py_run_string(
            "import nordicstats.r.bridge as _nb\n_nb.attach()\ndel _nb",
            local = TRUE, convert = FALSE)
        NULL
    }, warning = .muffle_project_warning), error = function(e) conditionMessage(e))
    if (!is.null(res) || !.bridge_ready())
        stop("could not start the Python side of nordicstats with '", python, "': ",
             if (is.null(res)) "the bridge did not register" else res,
             call. = FALSE)
    invisible(TRUE)
}

## reticulate 1.28 warns about Poetry/Pipenv projects it finds in the working
## directory; the Python to use is chosen explicitly here, so that is noise.
.muffle_project_warning <- function(w)
    if (grepl("Poetry|Pipenv", conditionMessage(w))) invokeRestart("muffleWarning")

.ensure_bridge <- function() {
    if (!.bridge_ready()) .start_python()
    invisible(TRUE)
}

## Call the exposed Python function `name` with named arguments.  Python
## errors become R errors of class c(<Python class>, "nordicstats_python_error",
## "error", "condition"); Python warnings become R warnings.
.py <- function(name, ..., .call = sys.call(-1L))
    .py_list(name, list(...), .call)

.py_list <- function(name, args, call) {
    .ensure_bridge()
    out <- .bridge$dispatch(name, args)
    for (i in seq_along(out$warnings))
        warning(warningCondition(out$warnings[[i]], call = call,
                                 class = c(out$warning_classes[[i]],
                                           "nordicstats_python_warning")))
    if (!is.null(out$error))
        stop(errorCondition(out$error, call = call,
                            class = c(out$error_class, "nordicstats_python_error"),
                            traceback = out$traceback))
    out$value
}
