"""The spend cap: a hard dollar budget across threads, processes and machines, checked before each call.

See :class:`SpendCap` for the flow and the rules, ``docs/spend.md`` for the guarantees.

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
    LedgerBusyError,
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
from litm.spend._budget import SpendCap
from litm.spend._cost import Usage, price_completion, usage_from
from litm.spend._ledger import AsyncLedger, Ledger, SQLiteLedger, open_ledger
from litm.spend._model import charged
from litm.spend._money import parse_usd
from litm.spend._prices import PriceTable
from litm.spend._reservation import Reservation

SpendBudget = SpendCap  # the other name for it


def __getattr__(name: str) -> object:
    # RedisLedger needs the optional redis client: imported when asked for, so `import litm.spend` works without it.
    if name == "RedisLedger":
        from litm.spend._ledger.redis import RedisLedger

        return RedisLedger
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "AsyncLedger",
    "CorruptLedgerError",
    "Ledger",
    "LedgerBusyError",
    "LedgerNotFoundError",
    "LedgerUnavailableError",
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
    "Usage",
    "charged",
    "open_ledger",
    "parse_usd",
    "price_completion",
    "usage_from",
]
