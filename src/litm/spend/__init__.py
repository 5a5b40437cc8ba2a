"""The spend cap: a hard dollar budget across threads, processes and machines, checked before each call.

See :mod:`litm.spend.budget` for the flow and the rules, ``docs/spend.md`` for the guarantees.

>>> import os, tempfile
>>> from litm.spend import SpendCap
>>> cap = SpendCap(os.path.join(tempfile.mkdtemp(), "spend.db"), scopes=["project:acme", "user:42"])
>>> cap.set_limit("project:acme", "100", window="monthly")
>>> cap.set_limit("user:42", "0.0001", window="daily")
>>> cap.reserve("gpt-4o-mini", provider="openai", input_tokens=100_000, input_exact=True, max_tokens=1000)
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
litm.errors.SpendBudgetExceeded: spend limit of scope 'user:42' (daily ...) exceeded: ... requested $0.0156
"""

from litm.errors import (
    CorruptLedgerError,
    LedgerNotFoundError,
    LedgerUnavailableError,
    PriceTableError,
    PriceUnknownError,
    ReservationError,
    ReserveUncertainError,
    SpendBudgetExceeded,
    SpendLimitNotSetError,
    SpendRequestError,
)
from litm.spend.budget import SpendCap
from litm.spend.cost import (
    APPROX_MARGIN,
    Estimate,
    Usage,
    input_bound,
    price_completion,
    price_usage,
    usage_from,
    worst_case,
)
from litm.spend.ledger import Ledger, SQLiteLedger, open_ledger
from litm.spend.model import ChargedModel, charged
from litm.spend.money import format_usd, parse_usd
from litm.spend.outcome import may_be_billed
from litm.spend.prices import ModelRates, PriceTable, TokenRates, default_table
from litm.spend.reservation import Reservation

SpendBudget = SpendCap  # the other name for it


def __getattr__(name: str) -> object:
    # RedisLedger needs the optional redis client: imported when asked for, so `import litm.spend` works without it.
    if name == "RedisLedger":
        from litm.spend.ledger.redis import RedisLedger

        return RedisLedger
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "APPROX_MARGIN",
    "ChargedModel",
    "CorruptLedgerError",
    "Estimate",
    "Ledger",
    "LedgerNotFoundError",
    "LedgerUnavailableError",
    "ModelRates",
    "PriceTable",
    "PriceTableError",
    "PriceUnknownError",
    "RedisLedger",
    "Reservation",
    "ReservationError",
    "ReserveUncertainError",
    "SQLiteLedger",
    "SpendBudget",
    "SpendBudgetExceeded",
    "SpendCap",
    "SpendLimitNotSetError",
    "SpendRequestError",
    "TokenRates",
    "Usage",
    "charged",
    "default_table",
    "format_usd",
    "input_bound",
    "may_be_billed",
    "open_ledger",
    "parse_usd",
    "price_completion",
    "price_usage",
    "usage_from",
    "worst_case",
]
