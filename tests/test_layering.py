"""The package's import graph: no cycles, and layers that point one way (docs/notes/layering.md).

Every ``import`` statement of every module is read with ``ast`` -- function-local imports
included -- and resolved to modules of the package.  Importing ``a.b.c`` from outside the
package ``a.b`` also runs ``a/b/__init__.py``, so that edge is added as well.  Optional
heavy dependencies loaded through ``importlib`` by name (the solver registry) are not
``import`` statements and are not part of the graph, on purpose.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import nordicstats

PACKAGE = Path(nordicstats.__file__).parent
ROOT = "nordicstats"

#: Layer of each module (longest matching prefix wins); a module may import only from
#: its own layer or below.  Keep in sync with docs/notes/layering.md.
LAYERS = {
    "nordicstats.exceptions": 0, "nordicstats._validation": 0, "nordicstats.data": 0,
    "nordicstats.kernels": 0, "nordicstats.metrics": 0, "nordicstats.datasets": 0,
    "nordicstats.costs": 0, "nordicstats.weighting": 0, "nordicstats.probability": 0,
    "nordicstats.solvers": 1,
    "nordicstats.bootstrap": 2, "nordicstats.covariance": 2, "nordicstats.hypotheses": 2,
    "nordicstats.diagnostics": 2, "nordicstats.auto_covariance": 2,
    "nordicstats.ordinal": 3, "nordicstats._summary": 3,
    "nordicstats.results": 4,
    "nordicstats.model": 5,
    "nordicstats.compare": 6,
    "nordicstats.sklearn": 7, "nordicstats.tuning": 7,
    "nordicstats.experiments": 8, "nordicstats.demo": 8,
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


@functools.cache
def import_graph():
    """module -> set of package modules it imports (directly or as parent packages)."""
    modules = module_names()
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(node, name, is_package, modules):
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
    assert "nordicstats.covariance" in graph["nordicstats.results"]
    assert "nordicstats.solvers" in graph["nordicstats.model"]  # parent package edge
    # r.api loads the theory helpers inside a function: still an edge
    assert "nordicstats.theory" in graph["nordicstats.r.api"]


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
