"""litm.budget and litm.spend keep small surfaces (issue 43): what a user calls, implements or annotates.

The implementation modules are private; other litm packages and the tests import the rest from them.
"""

from __future__ import annotations

import importlib

import pytest

import litm.budget
import litm.spend
from litm.errors import LitmError

BUDGET = {"FitResult", "SpendStep", "Step", "TokenGate", "compact_history", "fit", "guard", "spend_key"}
SPEND = {
    "AsyncLedger",
    "Ledger",
    "PriceTable",
    "RedisLedger",
    "Reservation",
    "SQLiteLedger",
    "SpendBudget",
    "SpendCap",
    "Usage",
    "charged",
    "open_ledger",
    "parse_usd",
    "price_completion",
    "usage_from",
}


def _non_errors(module: object) -> set[str]:
    names: list[str] = module.__all__  # type: ignore[attr-defined]
    return {n for n in names if not (isinstance(obj := getattr(module, n, None), type) and issubclass(obj, LitmError))}


def test_budget_exports_what_a_user_calls() -> None:
    assert _non_errors(litm.budget) == BUDGET


def test_spend_exports_what_a_user_calls() -> None:
    # RedisLedger is handed out lazily (the optional redis client), so it is checked by name only.
    assert _non_errors(litm.spend) | {"RedisLedger"} == SPEND


@pytest.mark.parametrize(
    "old",
    [
        "litm.spend.budget",
        "litm.spend.cost",
        "litm.spend.model",
        "litm.spend.money",
        "litm.spend.outcome",
        "litm.spend.prices",
        "litm.spend.reservation",
        "litm.spend.scopes",
        "litm.spend.ledger",
        "litm.spend.ledger.redis",
    ],
)
def test_spend_implementation_modules_are_private(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_spend_budget_is_the_spend_cap() -> None:
    # The other name for the cap: one object, two names.
    assert litm.spend.SpendBudget is litm.spend.SpendCap
