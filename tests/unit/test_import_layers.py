"""The product's packages import in one direction: core ← nodes ← graphs ← app, with no cycle anywhere.

core holds records, ports, errors, filters and the text toolkit and imports nothing of ours; a flow's steps
(nodes/<flow>/) import core and prompts; graphs/<flow>.py wires the steps; app (services, adapters, routers,
CLI) may import everything. Imports under `if TYPE_CHECKING:` are for the type checker only and do not count;
imports inside functions do.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "core", "graphs", "nodes", "prompts")
# which of our packages each package may import at run time (itself always)
ALLOWED = {
    "core": set(),
    "prompts": set(),
    "nodes": {"core", "prompts"},
    "graphs": {"core", "nodes", "prompts"},
    "app": {"core", "nodes", "graphs", "prompts"},
}


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                skipped.update(id(n) for n in ast.walk(statement))
    return skipped


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in names:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
    return targets


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_back_through_a_cycle():
    assert _cycles(_graph()) == []


def test_each_package_imports_only_the_layers_below_it():
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in _graph().items()
        for target in targets
        if (top := target.split(".")[0]) != (own := name.split(".")[0]) and top not in ALLOWED[own]
    )
    assert wrong == []


def test_the_cycle_finder_finds_a_cycle():
    # the two tests above can only fail if the finder sees cycles at all
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_walk_sees_the_packages_and_their_imports():
    graph = _graph()
    assert {"core.records", "nodes.support.decide", "graphs.support", "app.main"} <= set(graph)
    assert "nodes.support.decide" in graph["graphs.support"]
    assert "graphs.support" not in graph["nodes.support.decide"]  # a type-checking import only
