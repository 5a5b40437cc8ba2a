"""Every docstring example in src/litm runs, one test per docstring, so the examples cannot rot.

New modules are covered by default: the list below names the modules whose examples are *not yet* run
(they fail today; each owner removes a module from it with the fix), and a test fails if an entry there
starts passing or no longer exists, so the list only shrinks. Examples that need a model or a server are
marked ``# doctest: +SKIP`` in their module; a docstring made only of such examples is documentation, not
a test, and is not collected (so it never shows up as a skipped test).
"""

from __future__ import annotations

import doctest
import importlib
import io
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
FLAGS = doctest.ELLIPSIS

#: Modules whose examples fail today, with the reason; owned by other engineers (see the issue notes).
NOT_YET: dict[str, str] = {}


def _module_names() -> list[str]:
    names = []
    for path in sorted((SRC / "litm").rglob("*.py")):
        # ``__main__`` runs the command line when imported.
        if path.name == "__main__.py":
            continue
        rel = path.relative_to(SRC).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names.append(".".join(parts))
    return names


MODULES = _module_names()


def _runs(test: doctest.DocTest) -> bool:
    return any(not ex.options.get(doctest.SKIP, False) for ex in test.examples)


def _doctests(module: str) -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = finder.find(importlib.import_module(module), module)
    # A module's tests include those of objects it imports from elsewhere only if defined there.
    return [t for t in found if _runs(t)]


CASES = [(m, t.name) for m in MODULES if m not in NOT_YET for t in _doctests(m)]


def _run(test: doctest.DocTest) -> tuple[doctest.TestResults, str]:
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=out.write)
    return runner.summarize(verbose=False), out.getvalue()


@pytest.mark.parametrize(("module", "name"), CASES, ids=[name for _, name in CASES])
def test_docstring_examples(module: str, name: str) -> None:
    test = next(t for t in _doctests(module) if t.name == name)
    result, report = _run(test)
    assert result.failed == 0, report


def test_the_examples_cover_the_model_free_packages() -> None:
    covered = {m for m, _ in CASES}
    for package in ("litm.placement", "litm.util", "litm.eval", "litm.probe._corpus"):
        assert any(m == package or m.startswith(package + ".") for m in covered), package


def test_not_yet_list_only_shrinks() -> None:
    for module in sorted(NOT_YET):
        assert module in MODULES, f"{module} no longer exists: remove it from NOT_YET"
        results = [_run(t)[0] for t in _doctests(module)]
        assert any(r.failed for r in results), f"{module}'s examples pass now: remove it from NOT_YET"
