"""The examples in the spend modules' docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "litm.spend", "litm.spend.money", "litm.spend.scopes", "litm.spend.prices", "litm.spend.cost",
    "litm.spend.reservation", "litm.spend.budget", "litm.spend.ledger", "litm.spend.ledger.rules",
    "litm.spend.ledger.sqlite",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
