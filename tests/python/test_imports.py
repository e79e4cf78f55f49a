"""The package's import graph, read with `ast` (issue 13, must-pass 3): no module imports
another that (directly or through others) imports it back, and nothing below the CLI
imports the CLI. Every import counts, the ones inside functions too: a deferred import
hides a cycle from `import mptcplab` but not from a reader."""
from __future__ import annotations

import ast
from pathlib import Path

import mptcplab

PKG = Path(mptcplab.__file__).resolve().parent
# Extension modules: leaves of the graph (they import nothing of the package).
EXTENSIONS = {"mptcplab._core"}


def modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def targets(mod: str, path: Path, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The package modules an import statement loads: a name imported from a package is
    its submodule when there is one, else the package (the name is defined there)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        if node.level:
            base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
            origin = ".".join(base + ([node.module] if node.module else []))
        else:
            origin = node.module or ""
        names = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in known else origin for a in node.names]
    out = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != mod:
            out.append(name)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods) | EXTENSIONS
    g: dict[str, set[str]] = {m: set() for m in known}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        # Imports under `if TYPE_CHECKING:` never run: annotations only.
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                       for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in typing_only:
                g[mod].update(targets(mod, path, node, known))
    return g


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_the_package_and_its_imports():
    g = graph()
    assert {"mptcplab", "mptcplab.cli", "mptcplab.kernel.validate", "mptcplab.reproduce"} <= set(g)
    assert "mptcplab.api" in g["mptcplab"] and "mptcplab._core" in g["mptcplab.api"]
    # A deferred import inside a function counts.
    assert "mptcplab.tables" in g["mptcplab.kernel.validate"]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back():
    assert cycles(graph()) == []


def test_nothing_below_the_cli_imports_the_cli():
    g = graph()
    cli = {m for m in g if m == "mptcplab.cli" or m.startswith("mptcplab.cli.")}
    entry = {"mptcplab.__main__"}
    offenders = sorted(m for m, deps in g.items() if m not in cli | entry and deps & cli)
    assert offenders == []
