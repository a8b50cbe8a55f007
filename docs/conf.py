"""Sphinx configuration of the nordicstats documentation site.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (after
``pip install -e ".[docs]"``); ``NORDICSTATS_VIGNETTE_SIZE=small`` runs the
vignettes at their reduced size.

* API reference: ``api/index.rst`` lists the public modules; each module page
  documents the names in the module's ``__all__`` (see ``api_members``), every
  object once, at the first listed module that exports it (later modules link
  to it).  A public module that is not listed, or a public class or function
  that no listed module documents, fails the build (``-W``).
* Vignettes: every percent-format script ``vignettes/*.py`` (``# %%`` cells,
  jupytext) is read by MyST-NB through jupytext and executed in a Jupyter
  kernel; ``docs/vignettes`` is a link to the repository's ``vignettes/``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import shutil
import sys
from pathlib import Path

from sphinx.ext.autodoc.mock import mock

DOCS = Path(__file__).resolve().parent
# Document and run this checkout's package (the vignette kernels inherit PYTHONPATH).
sys.path.insert(0, str(DOCS.parent))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(DOCS.parent)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

import nordicstats  # noqa: E402

VIGNETTES = DOCS / "vignettes"

project = "nordicstats"
author = "the nordicstats authors"
copyright = "the nordicstats authors; GPL-3.0-or-later"
release = version = nordicstats.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "conf.py", "**/.ipynb_checkpoints", "vignettes/_build"]


# --------------------------------------------------------------------------- vignettes
def _is_percent_script(path):
    """True for a percent-format script (a line that starts with ``# %%``)."""
    return re.search(r"^# %%", path.read_text(encoding="utf-8"), re.MULTILINE) is not None


# Python files in vignettes/ that are not percent-format notebooks are not pages.
exclude_patterns += [f"vignettes/{p.name}" for p in sorted(VIGNETTES.glob("*.py"))
                     if not _is_percent_script(p)]

# The kernels inherit this environment: a non-interactive MPLBACKEND (Agg, as the test
# suite sets) would stop the inline backend from putting the figures on the pages.
os.environ.pop("MPLBACKEND", None)
nb_custom_formats = {".py": ["jupytext.reads", {"fmt": "py:percent"}]}
nb_execution_mode = "force"
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_timeout = int(os.environ.get("NORDICSTATS_VIGNETTE_TIMEOUT", "1800"))
nb_execution_show_tb = True
nb_kernel_rgx_aliases = {".*": "python3"}
nb_output_stderr = "show"  # warnings the vignettes raise are part of the page
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# --------------------------------------------------------------------------- API reference
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc sections carry the types
numpydoc_show_class_members = False  # the class template lists the members
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# The R bridge is documented without R: rpy2 is mocked when it is not installed.
autodoc_mock_imports = [] if importlib.util.find_spec("rpy2") else ["rpy2"]


def _listed_modules():
    """Modules named in the autosummary lists of ``api/index.rst``, in page order."""
    text = (DOCS / "api" / "index.rst").read_text(encoding="utf-8")
    return re.findall(r"^   (nordicstats(?:\.\w+)*)\s*$", text, re.MULTILINE)


def _public_names(module):
    """``__all__``, or the public classes and functions defined in the module."""
    if hasattr(module, "__all__"):
        return [n for n in module.__all__ if not n.startswith("__")]
    return [n for n, v in vars(module).items()
            if not n.startswith("_") and (inspect.isclass(v) or inspect.isfunction(v))
            and v.__module__ == module.__name__]


def _is_documentable(value):
    return inspect.isclass(value) or inspect.isfunction(value)


def api_members(modules):
    """Map each listed module to the names its page documents and the names it re-exports.

    Every object is documented once, at the first listed module that exports it
    (constants: the same object under the same name); a later module that exports it
    links to that page.  Returns (members, also, seen): members[module] lists the
    names documented there, also[module] the full names of its re-exported objects.
    """
    home, members, also = {}, {}, {}
    for name in modules:
        module = importlib.import_module(name)
        members[name], also[name] = [], []
        for attr in _public_names(module):
            value = getattr(module, attr)
            key = id(value) if _is_documentable(value) else (attr, id(value))
            if key in home:
                also[name].append(home[key])
                continue
            home[key] = f"{name}.{attr}"
            members[name].append(attr)
    return members, also, set(home)


def _public_modules():
    """Names of the package's public modules (no part starting with an underscore)."""
    names = ["nordicstats"]
    for info in pkgutil.walk_packages(nordicstats.__path__, "nordicstats."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def _undocumented(seen, listed):
    """Public modules not listed in ``api/index.rst``, and public classes and functions
    of public modules that no listed module documents."""
    missing = [name for name in _public_modules() if name not in listed]
    for name in _public_modules():
        module = importlib.import_module(name)
        for attr in _public_names(module):
            value = getattr(module, attr, None)
            if (_is_documentable(value) and value.__module__ == name
                    and id(value) not in seen):
                missing.append(f"{name}.{attr}")
    return missing


API_MODULES = _listed_modules()
# autosummary writes the pages under api/generated/ and reads back whatever is there: start
# from none, so that a page of a module that was renamed or removed cannot linger.
shutil.rmtree(DOCS / "api" / "generated", ignore_errors=True)
with mock(autodoc_mock_imports):
    API_MEMBERS, API_ALSO, _DOCUMENTED = api_members(API_MODULES)
    UNDOCUMENTED = _undocumented(_DOCUMENTED, set(API_MODULES))
autosummary_context = {"api_members": API_MEMBERS, "api_also": API_ALSO}


def _check_api_coverage(app):
    from sphinx.util import logging

    for name in UNDOCUMENTED:
        logging.getLogger("nordicstats.docs").warning(
            "%s is public but not in the API reference: add it (a module) or its module "
            "(or a module that exports it in __all__) to docs/api/index.rst", name)


# --------------------------------------------------------------------------- HTML
html_theme = "pydata_sphinx_theme"
html_title = f"nordicstats {version}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"vignettes/*": []}

intersphinx_mapping = {}  # no network on the build machines: no external inventories

suppress_warnings = ["mystnb.unknown_mime_type"]


def _skip_foreign_member(app, what, name, obj, skip, options):
    """Skip methods other libraries generate on our classes (scikit-learn's set_*_request)."""
    module = getattr(obj, "__module__", None) or ""
    if what == "class" and callable(obj) and module and not module.startswith("nordicstats"):
        return True
    return None


def setup(app):
    app.connect("builder-inited", _check_api_coverage)
    app.connect("autodoc-skip-member", _skip_foreign_member)
