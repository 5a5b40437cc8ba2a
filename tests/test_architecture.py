"""The package's import graph: no cycles, and imports only point down the layers of docs/architecture.md.

Every import statement counts, including those inside functions and under ``TYPE_CHECKING``: a late import
that would close a cycle hides the tangle without removing it. Lazy imports of *optional third-party*
packages are outside the graph (only ``litm.*`` modules are nodes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Layers from the bottom up; a module may import its own package and any package of a lower layer.
#: Packages in the same layer are siblings and must not import each other. Keep in step with
#: docs/architecture.md.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("litm._version", "litm.errors"),
    ("litm.util",),
    ("litm.placement",),
    ("litm.prompt",),
    ("litm.models",),
    ("litm.tokens", "litm.spend", "litm.retrieve"),
    # Compression scores with models and the retriever's embedder, counts with litm.tokens; the gate uses it.
    ("litm.compress",),
    ("litm.budget",),
    ("litm.code", "litm.eval", "litm.rag", "litm.serve"),
    # Permutation self-consistency calls models through the prompt builder and votes with litm.eval's
    # normalisation; the benchmark's psc arm and the CLI use it.
    ("litm.consistency",),
    ("litm.probe", "litm.bench"),
    ("litm.integrations",),
    # The Haystack shim (the path Pipeline.load imports components from) sits beside the CLI.
    ("litm.cli", "haystack_integrations"),
    # The public facade: the package root and ``python -m litm``.
    ("litm", "litm.__main__"),
)


#: The top-level packages under src/: litm, and the namespace package Haystack loads litm's components from.
TOP_LEVEL = ("litm", "haystack_integrations")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in (p for top in TOP_LEVEL for p in (SRC / top).rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The litm modules ``name`` imports (resolving relative imports and ``from package import module``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
    # An import of a package's own ancestors is the import system's doing, not a dependency.
    return {m for m in found if m in MODULES and m != name and not name.startswith(m + ".")}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> tuple[int, str]:
    best: tuple[int, str] | None = None
    for index, packages in enumerate(LAYERS):
        for package in packages:
            if (module == package or module.startswith(package + ".")) and (
                best is None or len(package) > len(best[1])
            ):
                best = (index, package)
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add its package to LAYERS and docs/architecture.md")
    return best


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        _layer(module)


def test_no_import_cycles() -> None:
    # Tarjan's strongly connected components: any component with more than one module is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_imports_point_down_the_layers() -> None:
    wrong = []
    for module, deps in sorted(GRAPH.items()):
        level, package = _layer(module)
        for dep in sorted(deps):
            dep_level, dep_package = _layer(dep)
            if dep_package == package or dep_level < level:
                continue
            wrong.append(f"{module} (layer {level}) imports {dep} (layer {dep_level})")
    assert not wrong, "imports that do not point down:\n" + "\n".join(wrong)


def test_the_haystack_shim_imports_only_the_integrations() -> None:
    shim = {m: deps for m, deps in GRAPH.items() if m.startswith("haystack_integrations.")}
    assert shim, "the Haystack shim was not scanned"
    wrong = {
        m: sorted(d for d in deps if d != "litm.integrations" and not d.startswith("litm.integrations."))
        for m, deps in shim.items()
    }
    assert not any(wrong.values()), wrong
    # A namespace package: no __init__.py above the component packages, as Haystack's own integrations do.
    for folder in (
        "haystack_integrations",
        "haystack_integrations/components",
        *(f"haystack_integrations/components/{kind}" for kind in ("rankers", "builders", "compressors")),
    ):
        assert not (SRC / folder / "__init__.py").exists(), folder


@pytest.mark.parametrize("module", ["litm.placement._strategy", "litm.prompt._messages", "litm.util._records"])
def test_graph_sees_real_edges(module: str) -> None:
    # Guard against a parser that finds nothing: these modules do import litm modules.
    assert GRAPH[module], f"{module} should import other litm modules"
