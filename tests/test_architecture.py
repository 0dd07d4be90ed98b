"""The stage chain of docs/architecture.md, read from the code's imports.

Every ``harness.X`` package may import only packages to its left in
:data:`CHAIN`, never one to its right, and never another package's private
(underscore) names. Imports inside functions count too: a lazy import still
couples the stages. A new package must be placed in the chain (and in the
document) before it can be imported by anything.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harness"

# Left to right: what a package may build on. Helpers every stage uses come first.
CHAIN = (
    "stats", "files", "figures", "config_io", "metrics", "console", "cpu", "devices", "devdata",
    "distributed",
    "game", "sgf", "features", "data", "nets", "train", "search", "jaxgo", "players", "gtp",
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


# --- the document names files and names that exist --------------------------

DOC = ROOT / "docs" / "architecture.md"
_TICKED = re.compile(r"`([^`]+)`")
DATA_FILES = (".csv", ".html", ".json", ".jsonl", ".png", ".keras", ".npz", ".h5", ".md",
              ".toml", ".txt", ".sgf")  # file names, not modules
_DOTTED = re.compile(r"^(?:harness\.)?[a-z_]+(?:[./][A-Za-z_]+)+(?:\(.*\))?$")


def _section_packages(line: str) -> list[Path] | None:
    """The package folders a section header names (``## Rules (`harness/game/`)``)."""
    if not line.startswith("#"):
        return None
    return [ROOT / t.rstrip("/") for t in _TICKED.findall(line) if t.startswith("harness/")
            and (ROOT / t).is_dir()]


def _defined(module: Path) -> set[str]:
    """Names a module defines at its top level (a package also the names it publishes)."""
    names: set[str] = set()
    tree = ast.parse(module.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
            if module.name == "__init__.py" and isinstance(node.value, ast.Dict):
                names |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
        elif module.name == "__init__.py" and isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
    return names


def _resolve(reference: str, bases: list[Path]) -> str | None:
    """Why a dotted or slashed reference (``rl/gating.play_match``,
    ``harness.rl.selfplay.filled_for_device``) names nothing; None if it does or
    if it does not start at a harness package or module."""
    parts = re.split(r"[./]", reference.split("(")[0].removeprefix("harness."))
    for base in [PACKAGE, *bases]:
        path, i = base, 0
        while i < len(parts) and (path / parts[i]).is_dir():
            path, i = path / parts[i], i + 1
        if i < len(parts) and (path / f"{parts[i]}.py").is_file():
            module, i = path / f"{parts[i]}.py", i + 1
        elif i and (path / "__init__.py").is_file():
            module = path / "__init__.py"
        else:
            continue
        if i == len(parts) or parts[i] in _defined(module):
            return None
        return f"{module.relative_to(ROOT)} defines no {parts[i]}"
    return None


def doc_problems(text: str) -> list[str]:
    """Module paths (``search/game_driver.py``, ``board.py`` under its section's
    package) that do not exist, and dotted names no module defines."""
    problems, bases = [], []
    for line in text.splitlines():
        packages = _section_packages(line)
        if packages is not None:
            bases = packages
            continue
        for token in _TICKED.findall(line):
            if re.fullmatch(r"[\w/]+\.py", token):
                if token.startswith(("harness/", "tests/")):
                    places = [ROOT / token]
                elif "/" in token:
                    places = [PACKAGE / token]
                else:
                    places = [b / token for b in bases] or [PACKAGE / token]
                if not any(p.is_file() for p in places):
                    problems.append(f"{token}: no such module "
                                    f"({', '.join(str(p.relative_to(ROOT)) for p in places)})")
            elif _DOTTED.fullmatch(token) and not token.endswith(DATA_FILES):
                why = _resolve(token, bases)
                if why:
                    problems.append(f"{token}: {why}")
    return problems


def test_every_module_and_name_the_document_names_exists():
    assert doc_problems(DOC.read_text()) == []


def test_the_document_check_finds_a_moved_module_and_a_missing_name():
    text = ("## Rules (`harness/game/`)\n`board.py` and `nosuch.py`; `position.Game`, "
            "`position.NoSuch` and `arena.tournament.NoSuchWorker`\n")
    assert doc_problems(text) == [
        "nosuch.py: no such module (harness/game/nosuch.py)",
        "position.NoSuch: harness/game/position.py defines no NoSuch",
        "arena.tournament.NoSuchWorker: harness/arena/tournament.py defines no NoSuchWorker",
    ]
