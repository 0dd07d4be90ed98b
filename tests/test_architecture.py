"""The stage chain of docs/architecture.md, read from the code's imports.

Every ``harness.X`` package may import only packages to its left in
:data:`CHAIN`, never one to its right, and never another package's private
(underscore) names. Imports inside functions count too: a lazy import still
couples the stages. A new package must be placed in the chain (and in the
document) before it can be imported by anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harness"

# Left to right: what a package may build on. Helpers every stage uses come first.
CHAIN = (
    "stats", "files", "figures", "config_io", "metrics", "console", "cpu", "devices", "devdata",
    "distributed",
    "game", "sgf", "features", "data", "nets", "train", "search", "players", "gtp",
    "arena", "rl", "bench", "report", "frontier", "suite", "api", "commands", "__init__", "cli",
    "__main__",
)


def _package(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _nodes(tree: ast.AST):
    """Every node, except those under ``if TYPE_CHECKING:`` (never run)."""
    for child in ast.iter_child_nodes(tree):
        test = child.test if isinstance(child, ast.If) else None
        if test is not None and "TYPE_CHECKING" in ast.unparse(test):
            continue
        yield child
        yield from _nodes(child)


def _imports(path: Path):
    """(imported package, imported names, line) for every ``harness.*`` import."""
    for node in _nodes(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith("harness."):
                yield node.module.split(".")[1], [a.name for a in node.names], node.lineno
            elif node.module == "harness":
                for alias in node.names:
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("harness."):
                    yield alias.name.split(".")[1], [], node.lineno


def _edges():
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _package(path)
        for target, names, line in _imports(path):
            if target != source and target != "__init__" and not target.startswith("__"):
                yield source, target, names, f"{path.relative_to(ROOT)}:{line}"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph() -> dict[str, set[str]]:
    """Module -> the harness modules it imports (``from pkg import sub`` names ``pkg.sub``)."""
    files = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        for node in _nodes(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in files:
                subs = {f"{node.module}.{a.name}" for a in node.names} & files.keys()
                graph[name] |= subs if len(subs) == len(node.names) else {*subs, node.module}
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names} & files.keys()
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a loop (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_no_modules_import_each_other_in_a_cycle():
    assert _cycles(_module_graph()) == []


def test_the_cycle_finder_finds_a_loop_of_three():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_every_package_has_a_place_in_the_chain():
    packages = {_package(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert packages - set(CHAIN) == set(), "place new packages in CHAIN and the document"


def test_no_stage_imports_one_to_its_right():
    order = {name: i for i, name in enumerate(CHAIN)}
    back = [f"{where}: {source} -> {target}" for source, target, _, where in _edges()
            if order.get(target, -1) > order[source]]
    assert back == []


def test_no_package_reaches_into_another_ones_private_names():
    private = [f"{where}: {source} takes {target}.{name}" for source, target, names, where
               in _edges() for name in names if name.startswith("_")]
    assert private == []


def test_the_document_states_this_chain():
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("```")[1]  # the first code block
    assert tuple(block.replace("->", " ").split()) == CHAIN[:-1]
