"""docs/architecture.md's rule for function-level imports, checked: a function may import a litm module only in
the CLI (a command loads its library when it runs, so ``litm --help`` stays fast) or when that module is on the
list below, each for the reason given. Anything else is an import that belongs at the top of its module (or a
cycle being hidden, which test_architecture forbids)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: litm modules that may be imported inside a function, and why.
LAZY = {
    "litm.serve._app": "the gateway's web stack (starlette, httpx): loaded only when a gateway runs",
    "litm.spend._ledger.redis": "the Redis ledger and its client (the spend-redis extra)",
    "litm.code._pyjedi": "jedi (the code extra), only for Python targets",
    "litm.retrieve._embedder": "the MiniLM embedder and its ONNX runtime, only for dense retrieval",
    "litm.probe._plots": "the plots (matplotlib on first draw): outputs written without plots never load them",
    "litm.bench._plots": "the plots (matplotlib on first draw): outputs written without plots never load them",
    "litm.probe._report": "the HTML report, written only when a probe's outputs are",
    "litm.bench._report": "the HTML report, written only when a benchmark's outputs are",
}


def _function_level_litm_imports() -> list[tuple[str, str]]:
    found = []
    for path in sorted((SRC / "litm").rglob("*.py")):
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        for func in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                else:
                    continue
                found += [(module, name) for name in names if name == "litm" or name.startswith("litm.")]
    return found


def test_function_level_imports_of_litm_follow_the_rule() -> None:
    stray = [(where, what) for where, what in _function_level_litm_imports()
             if not where.startswith("litm.cli.") and what not in LAZY]  # fmt: skip
    assert not stray, f"import these at the top of their module, or add them to LAZY with a reason: {stray}"


def test_the_list_has_no_stale_entry() -> None:
    used = {what for _, what in _function_level_litm_imports()}
    assert set(LAZY) <= used, f"no longer imported lazily: {sorted(set(LAZY) - used)}"
