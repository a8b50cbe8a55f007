"""Render the nordicstats vignettes to HTML with their figures.

A Python vignette is a percent-format script (jupytext-compatible): ``# %%``
starts a code cell and ``# %% [markdown]`` a prose cell whose lines are
markdown behind ``# ``.  :func:`render` executes the code cells top to bottom in
one namespace, capturing what they print and the value of a cell's last
expression, saves every open matplotlib figure after each cell as
``_build/<name>/fig-<cell>-<k>.png`` and writes ``_build/<name>.html``.  The
markdown of prose cells is converted by :func:`markdown_to_html`, a small
converter for headings, paragraphs, lists, inline code, emphasis, links and
fenced code blocks (enough for these vignettes; no extra dependency).

The R vignette (``from-r.R``, ``#'`` prose comments in :func:`knitr::spin`
format) is rendered by knitr when the R packages knitr and rmarkdown and
pandoc are installed; otherwise the script is run with ``Rscript`` and the
page shows its prose and code followed by its console output.

Usage::

    python vignettes/render.py [--small] [--build-dir DIR] [names ...]

``--small`` (or the environment variable ``NORDICSTATS_VIGNETTE_SIZE=small``)
asks every vignette for its reduced size (smaller n, fewer replications and
grids) so that all of them run in about a minute each on a busy machine.
Names are file stems (``getting-started``); without names all are rendered.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import html
import io
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZE_VARIABLE = "NORDICSTATS_VIGNETTE_SIZE"
CELL_MARKER = re.compile(r"^# %%(?P<rest>.*)$")

__all__ = ["Cell", "RenderResult", "VignetteError", "parse_cells", "markdown_to_html",
           "render", "render_r", "vignette_paths", "main"]


class VignetteError(RuntimeError):
    """A vignette cell raised; the message names the vignette, the cell and its first line."""


@dataclass(frozen=True)
class Cell:
    """One cell of a percent-format script: ``kind`` is "code" or "markdown"."""

    kind: str
    source: str
    line: int


@dataclass
class RenderResult:
    """What :func:`render` produced.

    Attributes
    ----------
    name : str
        The vignette's file stem.
    html : pathlib.Path
        The written page.
    figures : list of pathlib.Path
        PNG files, in the order they were drawn.
    namespace : dict
        The vignette's global namespace after the last cell (for tests).
    seconds : float
        Wall time of the execution.
    output : str
        Everything the cells printed, concatenated.
    """

    name: str
    html: Path
    figures: list = field(default_factory=list)
    namespace: dict = field(default_factory=dict, repr=False)
    seconds: float = 0.0
    output: str = field(default="", repr=False)


# --------------------------------------------------------------------------- parsing
def parse_cells(text):
    """Split a percent-format script into :class:`Cell` objects.

    Lines before the first ``# %%`` marker (a jupytext header or a module
    docstring) form a code cell only if they hold code.  Markdown lines lose
    their leading ``# `` (or a bare ``#``).

    Examples
    --------
    >>> cells = parse_cells("# %% [markdown]\\n# # Title\\n# %%\\nx = 1\\n")
    >>> [(c.kind, c.source) for c in cells]
    [('markdown', '# Title'), ('code', 'x = 1')]
    """
    cells, kind, lines, start = [], "code", [], 1
    for number, line in enumerate(text.splitlines(), start=1):
        match = CELL_MARKER.match(line)
        if match:
            cells.append(_make_cell(kind, lines, start, first=not cells))
            kind = "markdown" if "[markdown]" in match.group("rest") else "code"
            lines, start = [], number + 1
        else:
            lines.append(line)
    cells.append(_make_cell(kind, lines, start, first=not cells))
    return [cell for cell in cells if cell is not None]


def _make_cell(kind, lines, start, first=False):
    if kind == "markdown":
        body = [re.sub(r"^# ?", "", line) if line.startswith("#") else line for line in lines]
        source = "\n".join(body).strip("\n")
    else:
        source = "\n".join(lines).strip("\n")
        if first and all(not ln.strip() or ln.lstrip().startswith("#") for ln in lines):
            return None  # header comments only
    return Cell(kind, source, start) if source.strip() else None


# --------------------------------------------------------------------------- markdown
_INLINE = [
    (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), r'<a href="\2">\1</a>'),
]


def _inline(text):
    """Inline markdown: `code`, **bold**, *italic*, [links](url); everything else escaped."""
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for part in parts:
        if len(part) > 1 and part.startswith("`") and part.endswith("`"):
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        piece = html.escape(part, quote=False)
        for pattern, repl in _INLINE:
            piece = pattern.sub(repl, piece)
        out.append(piece)
    return "".join(out)


_LIST_ITEM = re.compile(r"^\s*(?P<mark>[-*+]|\d+[.)])\s+(?P<text>.*)$")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")


def markdown_to_html(text):
    """Convert the markdown subset used by the vignettes to HTML.

    Handles ATX headings, paragraphs, unordered (``-``, ``*``) and ordered
    (``1.``) lists with continuation lines, fenced code blocks, inline code,
    ``**bold**``, ``*italic*`` and ``[links](url)``.  Raw HTML is escaped.

    Examples
    --------
    >>> markdown_to_html("## Fit\\nCall `fit()`.")
    '<h2 id="fit">Fit</h2>\\n<p>Call <code>fit()</code>.</p>'
    """
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.lstrip().startswith("```"):
            i = _fenced(lines, i, blocks)
        elif _HEADING.match(line):
            m = _HEADING.match(line)
            level, title = len(m.group("hashes")), m.group("text")
            blocks.append(f'<h{level} id="{_slug(title)}">{_inline(title)}</h{level}>')
            i += 1
        elif _LIST_ITEM.match(line):
            i = _list(lines, i, blocks)
        else:
            para = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                para.append(lines[i].strip())
                i += 1
            blocks.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(blocks)


def _starts_block(line):
    return bool(_HEADING.match(line) or _LIST_ITEM.match(line)
                or line.lstrip().startswith("```"))


def _fenced(lines, i, blocks):
    language = lines[i].strip()[3:].strip()
    body, i = [], i + 1
    while i < len(lines) and not lines[i].lstrip().startswith("```"):
        body.append(lines[i])
        i += 1
    cls = f' class="language-{html.escape(language)}"' if language else ""
    blocks.append(f"<pre><code{cls}>{html.escape(chr(10).join(body))}</code></pre>")
    return i + 1


def _list(lines, i, blocks):
    ordered = _LIST_ITEM.match(lines[i]).group("mark")[0].isdigit()
    items = []
    while i < len(lines) and lines[i].strip():
        m = _LIST_ITEM.match(lines[i])
        if m:
            items.append([m.group("text")])
        elif lines[i].startswith((" ", "\t")) and items:
            items[-1].append(lines[i].strip())
        else:
            break
        i += 1
    tag = "ol" if ordered else "ul"
    body = "\n".join(f"<li>{_inline(' '.join(item))}</li>" for item in items)
    blocks.append(f"<{tag}>\n{body}\n</{tag}>")
    return i


def _slug(title):
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


# --------------------------------------------------------------------------- execution
@contextlib.contextmanager
def _size(small):
    """Set NORDICSTATS_VIGNETTE_SIZE=small for the duration (when asked), then restore it."""
    old = os.environ.get(SIZE_VARIABLE)
    if small:
        os.environ[SIZE_VARIABLE] = "small"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(SIZE_VARIABLE, None)
        else:
            os.environ[SIZE_VARIABLE] = old


def _run_code(source, namespace, filename):
    """Execute ``source``; return the value of a trailing expression (or None)."""
    tree = ast.parse(source, filename=filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - the vignette is the program
    if last is not None:
        return eval(compile(last, filename, "eval"), namespace)  # noqa: S307
    return None


def _display(value):
    """HTML for a cell's last value: rich HTML when the object offers it, else its repr."""
    if value is None:
        return ""
    rich = getattr(value, "_repr_html_", None)
    if callable(rich):
        try:
            text = rich()
        except Exception:  # noqa: BLE001 - fall back to repr for a broken _repr_html_
            text = None
        if text:
            return f'<div class="value">{text}</div>'
    return f'<pre class="value">{html.escape(repr(value))}</pre>'


def _save_figures(directory, cell_index):
    import matplotlib.pyplot as plt

    paths = []
    for k, number in enumerate(plt.get_fignums(), start=1):
        fig = plt.figure(number)
        path = directory / f"fig-{cell_index:02d}-{k}.png"
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        paths.append(path)
    return paths


def render(path, small=None, build_dir=None):
    """Execute a percent-format vignette and write its HTML page and figures.

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.py`` vignette.
    small : bool, optional
        Run at the reduced size (sets ``NORDICSTATS_VIGNETTE_SIZE=small`` while
        the vignette runs); default: leave the environment as it is.
    build_dir : str or pathlib.Path, optional
        Output directory; default ``vignettes/_build``.

    Returns
    -------
    RenderResult

    Raises
    ------
    VignetteError
        A cell raised; the message has the cell's line number and the traceback.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path).resolve()
    name = path.stem
    build = Path(build_dir) if build_dir is not None else HERE / "_build"
    fig_dir = build / name
    shutil.rmtree(fig_dir, ignore_errors=True)
    fig_dir.mkdir(parents=True)
    cells = parse_cells(path.read_text(encoding="utf-8"))
    namespace = {"__name__": "__main__", "__file__": str(path)}
    result = RenderResult(name=name, html=build / f"{name}.html", namespace=namespace)
    pieces, printed = [], []
    plt.close("all")
    start = time.perf_counter()
    with _size(small):
        for index, cell in enumerate(cells):
            if cell.kind == "markdown":
                pieces.append(f'<section class="prose">{markdown_to_html(cell.source)}</section>')
                continue
            out, value = _execute_cell(cell, index, namespace, path)
            printed.append(out)
            figures = _save_figures(fig_dir, index)
            result.figures.extend(figures)
            pieces.append(_code_block(cell, out, value, figures, build))
    result.seconds = time.perf_counter() - start
    result.output = "".join(printed)
    _write_page(result.html, name, pieces, small=os.environ.get(SIZE_VARIABLE) == "small"
                or bool(small), seconds=result.seconds)
    return result


def _execute_cell(cell, index, namespace, path):
    """Run one code cell; return (printed text plus its warnings, last value)."""
    buffer = io.StringIO()
    filename = f"{path.name} (cell {index}, line {cell.line})"
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = _run_code(cell.source, namespace, filename)
    except Exception as exc:
        import matplotlib.pyplot as plt

        plt.close("all")
        first = cell.source.strip().splitlines()[0]
        raise VignetteError(
            f"{path.name}: the cell at line {cell.line} ({first!r}) raised "
            f"{type(exc).__name__}: {exc}\n--- output so far ---\n{buffer.getvalue()}\n"
            f"--- traceback ---\n{traceback.format_exc()}"
        ) from exc
    messages = dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught)
    return buffer.getvalue() + "".join(f"[{m}]\n" for m in messages), value


def _code_block(cell, out, value, figures, build):
    parts = [f'<pre class="code"><code class="language-python">{html.escape(cell.source)}'
             "</code></pre>"]
    if out.strip():
        parts.append(f'<pre class="output">{html.escape(out.rstrip())}</pre>')
    parts.append(_display(value))
    for fig in figures:
        rel = fig.relative_to(build).as_posix()
        parts.append(f'<figure><img src="{html.escape(rel)}" alt="{html.escape(fig.stem)}">'
                     "</figure>")
    return '<section class="cell">' + "\n".join(p for p in parts if p) + "</section>"


_CSS = """
body { max-width: 60rem; margin: 2rem auto; padding: 0 1rem; font-family: sans-serif;
       line-height: 1.5; color: #222; }
pre { background: #f6f8fa; padding: .6rem .8rem; overflow-x: auto; font-size: .85rem; }
pre.output, pre.value { background: #fff; border-left: 3px solid #9ab; }
div.value { overflow-x: auto; font-size: .85rem; }
div.value table { border-collapse: collapse; }
div.value td, div.value th { padding: .15rem .5rem; border-bottom: 1px solid #ddd; }
figure { margin: 1rem 0; } figure img { max-width: 100%; }
code { font-family: monospace; } footer { color: #777; font-size: .8rem; margin-top: 3rem; }
"""


def _write_page(target, name, pieces, small, seconds):
    size = "reduced size (NORDICSTATS_VIGNETTE_SIZE=small)" if small else "full size"
    page = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>nordicstats: {html.escape(name)}</title>\n<style>{_CSS}</style>\n"
            "</head>\n<body>\n" + "\n".join(pieces)
            + f"\n<footer>Rendered by vignettes/render.py at {size} in {seconds:.1f} s."
            "</footer>\n</body>\n</html>\n")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")


# --------------------------------------------------------------------------- R vignette
def r_available():
    """``(ok, reason)``: whether Rscript and the installed R package nordicstats are there."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        return False, "Rscript is not on PATH"
    probe = subprocess.run([rscript, "-e", "cat(requireNamespace('nordicstats', quietly=TRUE))"],
                           capture_output=True, text=True, timeout=120)
    if probe.stdout.strip() != "TRUE":
        return False, "the R package nordicstats is not installed (bash scripts/setup_r.sh)"
    return True, ""


def knitr_available():
    """Whether knitr::spin can render HTML here (knitr, rmarkdown and pandoc)."""
    if shutil.which("Rscript") is None or shutil.which("pandoc") is None:
        return False
    probe = subprocess.run(
        ["Rscript", "-e", "cat(all(sapply(c('knitr','rmarkdown'), requireNamespace, "
                          "quietly=TRUE)))"], capture_output=True, text=True, timeout=120)
    return probe.stdout.strip() == "TRUE"


def render_r(path, small=None, build_dir=None, timeout=900):
    """Render the R vignette (knitr::spin when possible, else run it and page its output).

    Returns
    -------
    RenderResult
        ``output`` holds the console output; ``namespace`` is empty.

    Raises
    ------
    VignetteError
        Rscript exited with an error (its stderr is in the message).
    """
    path = Path(path).resolve()
    build = Path(build_dir) if build_dir is not None else HERE / "_build"
    build.mkdir(parents=True, exist_ok=True)
    target = build / f"{path.stem}.html"
    env = dict(os.environ)
    if small:
        env[SIZE_VARIABLE] = "small"
    start = time.perf_counter()
    if knitr_available():  # spin a copy, so that the .Rmd lands in the build directory
        copy = build / path.name
        shutil.copyfile(path, copy)
        expr = (f"rmarkdown::render(knitr::spin({str(copy)!r}, knit = FALSE), "
                f"output_file = {target.name!r}, output_dir = {str(build)!r}, quiet = TRUE)")
        proc = subprocess.run(["Rscript", "-e", expr], capture_output=True, text=True,
                              env=env, timeout=timeout, cwd=build)
    else:
        proc = subprocess.run(["Rscript", str(path)], capture_output=True, text=True, env=env,
                              timeout=timeout, cwd=HERE.parent)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise VignetteError(f"{path.name}: Rscript exited with status {proc.returncode}\n"
                            f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")
    if not target.exists():  # fallback page: prose and code, then the console output
        pieces = [_spin_fallback(path.read_text(encoding="utf-8")),
                  '<section class="cell"><h2 id="console-output">Console output</h2>'
                  f'<pre class="output">{html.escape(proc.stdout.rstrip())}</pre></section>']
        _write_page(target, path.stem, pieces, small=bool(small), seconds=seconds)
    return RenderResult(name=path.stem, html=target, seconds=seconds, output=proc.stdout)


def _spin_fallback(text):
    """knitr::spin's layout without knitr: ``#'`` lines are markdown, the rest code."""
    pieces, kind, block = [], None, []

    def flush():
        if not block or not "".join(block).strip():
            return
        body = "\n".join(block).strip("\n")
        pieces.append(f'<section class="prose">{markdown_to_html(body)}</section>'
                      if kind == "prose" else
                      f'<pre class="code"><code class="language-r">{html.escape(body)}'
                      "</code></pre>")

    lines = text.splitlines()
    if lines and lines[0].strip() == "#' ---":  # YAML front matter: knitr's, not ours
        closing = [i for i, line in enumerate(lines[1:], 1) if line.strip() == "#' ---"]
        lines = lines[closing[0] + 1:] if closing else lines
    for line in lines:
        this = "prose" if line.startswith("#'") else "code"
        if this != kind:
            flush()
            kind, block = this, []
        block.append(re.sub(r"^#' ?", "", line) if this == "prose" else line)
    flush()
    return "\n".join(pieces)


# --------------------------------------------------------------------------- CLI
def vignette_paths(names=None):
    """The vignette files (``*.py`` except this renderer, and ``*.R``), optionally by stem."""
    found = {p.stem: p for p in sorted(HERE.glob("*.py")) if p.name != "render.py"}
    found.update({p.stem: p for p in sorted(HERE.glob("*.R"))})
    if not names:
        return list(found.values())
    unknown = [n for n in names if n not in found]
    if unknown:
        raise SystemExit(f"unknown vignette(s) {unknown}; available: {sorted(found)}")
    return [found[n] for n in names]


def main(argv=None):
    """Command line: render the named vignettes (all by default)."""
    parser = argparse.ArgumentParser(description="Render the nordicstats vignettes to HTML.")
    parser.add_argument("names", nargs="*", help="vignette file stems (default: all)")
    parser.add_argument("--small", action="store_true",
                        help=f"reduced size (same as {SIZE_VARIABLE}=small)")
    parser.add_argument("--build-dir", default=None, help="output directory (default: _build)")
    args = parser.parse_args(argv)
    small = args.small or os.environ.get(SIZE_VARIABLE) == "small"
    status = 0
    for path in vignette_paths(args.names):
        if path.suffix == ".R":
            ok, reason = r_available()
            if not ok:
                print(f"skipped {path.name}: {reason}")
                continue
            runner = render_r
        else:
            runner = render
        try:
            res = runner(path, small=small, build_dir=args.build_dir)
        except VignetteError as exc:
            print(exc, file=sys.stderr)
            status = 1
            continue
        print(f"{path.name}: {res.html} ({len(res.figures)} figures, {res.seconds:.1f} s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
