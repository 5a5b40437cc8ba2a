"""The examples in litm.retrieve's docstrings run, with the real model and retrievers (none is skipped)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import litm.retrieve

MODULES = ["litm.retrieve", *(f"litm.retrieve.{m.name}" for m in pkgutil.iter_modules(litm.retrieve.__path__))]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert result.failed == 0
    if name != "litm.retrieve.__init__":
        assert result.attempted > 0, f"{name} has no example"
