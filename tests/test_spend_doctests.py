"""The examples in the spend modules' docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "litm.spend", "litm.spend._money", "litm.spend._scopes", "litm.spend._prices", "litm.spend._cost",
    "litm.spend._reservation", "litm.spend._budget", "litm.spend._ledger", "litm.spend._ledger.rules",
    "litm.spend._ledger.sqlite",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
