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
    "stats", "files", "figures", "config_io", "console", "cpu", "devdata", "distributed",
    "game", "sgf", "features", "data", "nets", "train", "search", "players", "gtp",
    "arena", "rl", "bench", "report", "suite", "api", "cli", "__main__",
)


def _package(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _imports(path: Path):
    """(imported package, imported names, line) for every ``harness.*`` import."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
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
