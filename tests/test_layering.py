"""The package's import graph: no cycles, and layers that point one way (docs/notes/layering.md).

The library is closed below its users: no module of ``nordicstats`` imports the study
harness (``studies/``) or the benchmark scripts, and the code beside it (``studies/``,
``benchmarks/``, ``vignettes/``, ``docs/``) imports only public names from it.

Every ``import`` statement of every module is read with ``ast`` -- function-local imports
included -- and resolved to modules of the package.  Importing ``a.b.c`` from outside the
package ``a.b`` also runs ``a/b/__init__.py``, so that edge is added as well.  Modules of
the package loaded by name (``importlib.import_module("nordicstats....")``, and the
module strings of the solver registry that it loads that way) count as imports too.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import nordicstats

PACKAGE = Path(nordicstats.__file__).parent
ROOT = "nordicstats"
REPOSITORY = PACKAGE.parent
#: Top-level folders of the repository that use the library as its users do.
USERS = ("studies", "benchmarks", "vignettes", "docs")

#: Layer of each module (longest matching prefix wins); a module may import only from
#: its own layer or below.  Keep in sync with docs/notes/layering.md.
LAYERS = {
    "nordicstats.exceptions": 0, "nordicstats._validation": 0, "nordicstats.data": 0,
    "nordicstats.kernels": 0, "nordicstats.metrics": 0, "nordicstats.datasets": 0,
    "nordicstats.costs": 0, "nordicstats.weighting": 0, "nordicstats.probability": 0,
    "nordicstats.class_rule": 0,
    "nordicstats.solvers": 1,
    "nordicstats.bootstrap": 2, "nordicstats.covariance": 2, "nordicstats.hypotheses": 2,
    "nordicstats.diagnostics": 2, "nordicstats.auto_covariance": 2,
    "nordicstats.fit_covariance": 2,
    "nordicstats.ordinal": 3, "nordicstats._summary": 3, "nordicstats.wald": 3,
    "nordicstats.adapter": 3,
    "nordicstats.results": 4,
    "nordicstats.model": 5,
    "nordicstats.compare": 6,
    "nordicstats.sklearn": 7, "nordicstats.tuning": 7,
    "nordicstats.theory": 9,
    "nordicstats.plotting": 10,
    "nordicstats.r": 11,
    "nordicstats": 12,
}


def module_names():
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _resolve(name, modules):
    """The module ``name`` refers to: itself, or its parent when it names an attribute."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node, importer, is_package, modules):
    if isinstance(node, ast.Import):
        return [_resolve(alias.name, modules) for alias in node.names]
    base = node.module or ""
    if node.level:
        anchor = importer if is_package else importer.rpartition(".")[0]
        for _ in range(node.level - 1):
            anchor = anchor.rpartition(".")[0]
        base = f"{anchor}.{base}" if base else anchor
    return [_resolve(f"{base}.{alias.name}", modules) for alias in node.names]


def _loaded_by_name(tree, modules):
    """Modules of the package a file names in string constants: the targets of
    ``importlib.import_module("nordicstats....")`` and the module strings of a registry
    that loads them by name (any string that is exactly a module of the package)."""
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.startswith(ROOT + ".") and node.value in modules]


@functools.cache
def import_graph():
    """module -> set of package modules it imports (directly, by name or as parent packages)."""
    modules = module_names()
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges = set()
        tree = ast.parse(path.read_text(), filename=str(path))
        statements = [_targets(node, name, is_package, modules) for node in ast.walk(tree)
                      if isinstance(node, (ast.Import, ast.ImportFrom))]
        for target_list in [*statements, _loaded_by_name(tree, modules)]:
            for target in target_list:
                if target is None or target == name or not target.startswith(ROOT):
                    continue
                edges.add(target)
                parent = target.rpartition(".")[0]
                while parent and parent not in (ROOT, name) and not name.startswith(parent + "."):
                    edges.add(parent)  # importing a.b.c runs a/b/__init__.py first
                    parent = parent.rpartition(".")[0]
        graph[name] = edges
    return graph


def layer(name):
    prefix = name
    while prefix not in LAYERS:
        prefix = prefix.rpartition(".")[0]
    return LAYERS[prefix]


def find_cycle(graph):
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_graph_sees_function_local_imports():
    graph = import_graph()
    # the solver path loads NORDIC-2's module inside a function: still an edge
    assert "nordicstats.solvers.milp" in graph["nordicstats.solvers.path"]
    assert "nordicstats.solvers" in graph["nordicstats.model"]  # parent package edge
    # r.api loads the theory helpers inside a function: still an edge
    assert "nordicstats.theory" in graph["nordicstats.r.api"]


def test_graph_sees_loads_by_name():
    graph = import_graph()
    # the solver registry loads every solver module by name; none imports it back
    assert {"nordicstats.solvers.milp", "nordicstats.solvers.smo",
            "nordicstats.solvers.nordic0"} <= graph["nordicstats.solvers.registry"]
    for solver_module in ("milp", "smo", "polish", "qp", "decomposition", "linear_primal",
                          "nordic0"):
        imported = graph[f"nordicstats.solvers.{solver_module}"]
        assert not {"nordicstats.solvers", "nordicstats.solvers.registry"} & imported


@pytest.mark.parametrize("name", ["nordicstats.model", "nordicstats.results",
                                  "nordicstats.ordinal", "nordicstats.tuning"])
def test_model_results_and_tuning_name_no_solver(name):
    """Solver choice, warm starts and the C path belong to the solver layer: these modules
    import the package ``nordicstats.solvers`` (its public questions and ``solve``,
    ``SolverPath``) but no solver module, and spell no solver's name."""
    from nordicstats.solvers import SOLVERS

    assert not {t for t in import_graph()[name] if t.startswith("nordicstats.solvers.")}
    tree = ast.parse(module_names()[name].read_text())
    named = {node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and node.value in SOLVERS}
    assert not named, f"{name} names solvers {sorted(named)}"


def test_loads_by_name_are_detected():
    modules = {"nordicstats.a": None, "nordicstats.b": None}
    tree = ast.parse('import importlib\n'
                     'importlib.import_module("nordicstats.a")\n'
                     'TABLE = {"x": ("nordicstats.b", "function")}\n'
                     'TEXT = "nordicstats.c"\n')
    assert sorted(_loaded_by_name(tree, modules)) == ["nordicstats.a", "nordicstats.b"]


def test_no_import_cycles():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_find_cycle_detects_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_module_has_a_layer():
    for name in module_names():
        assert isinstance(layer(name), int), name


@pytest.mark.parametrize("name", sorted(module_names()))
def test_layers_point_one_way(name):
    upward = sorted(target for target in import_graph()[name] if layer(target) > layer(name))
    assert not upward, (f"{name} (layer {layer(name)}) imports higher layers: "
                        + ", ".join(f"{t} ({layer(t)})" for t in upward))


def imported_modules(path):
    """``(line, module, names)`` of every import statement of the file at ``path``
    (absolute module names; ``names`` empty for ``import a.b``)."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, tuple(alias.name for alias in node.names)


def private_imports(path):
    """``"line: module.name"`` for each private module or name the file imports from the
    library (a part or an imported name starting with ``_``)."""
    found = []
    for line, module, names in imported_modules(path):
        if module.split(".")[0] != ROOT:
            continue
        if any(part.startswith("_") for part in module.split(".")):
            found.append(f"{line}: {module}")
        found += [f"{line}: {module}.{name}" for name in names if name.startswith("_")]
    return found


def user_files():
    for folder in USERS:
        for path in sorted((REPOSITORY / folder).rglob("*.py")):
            if not {"_build", "generated"} & set(path.parts):
                yield path


def test_library_does_not_import_its_users():
    offending = [f"{name}:{line} imports {module}"
                 for name, path in module_names().items()
                 for line, module, _ in imported_modules(path)
                 if module.split(".")[0] in USERS]
    assert not offending, "\n".join(offending)


def test_users_import_public_names_only():
    files = list(user_files())
    assert any(path.parts[-2:] == ("studies", "experiments.py") for path in files)
    offending = {str(path.relative_to(REPOSITORY)): private_imports(path) for path in files}
    offending = {name: found for name, found in offending.items() if found}
    assert not offending, f"private names of {ROOT} imported from outside it: {offending}"


def test_private_imports_are_detected(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("import nordicstats._summary\n"
                      "from nordicstats.results import NORDICResults, _active_note\n"
                      "from nordicstats import NORDIC\n"
                      "from other._private import _thing\n")
    assert private_imports(script) == ["1: nordicstats._summary",
                                       "2: nordicstats.results._active_note"]
