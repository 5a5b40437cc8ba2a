"""Spend ledgers: the store protocol, SQLite (one host) and Redis (many machines).

>>> import tempfile, os
>>> open_ledger(os.path.join(tempfile.mkdtemp(), "spend.db"))  # doctest: +ELLIPSIS
SQLiteLedger('...spend.db')
"""

from __future__ import annotations

from pathlib import Path

from litm.errors import SpendRequestError
from litm.spend._ledger.base import (
    AsyncLedger,
    CounterStatus,
    Event,
    HoldRequest,
    Ledger,
    Limit,
    Mismatch,
    ReservationRecord,
    Settlement,
)
from litm.spend._ledger.redis_url import REDIS_SCHEMES
from litm.spend._ledger.sqlite import SQLiteLedger

__all__ = [
    "REDIS_SCHEMES",
    "AsyncLedger",
    "CounterStatus",
    "Event",
    "HoldRequest",
    "Ledger",
    "Limit",
    "Mismatch",
    "ReservationRecord",
    "SQLiteLedger",
    "Settlement",
    "open_ledger",
]


def open_ledger(spec: str | Path, *, namespace: str = "default", create: bool = True) -> Ledger:
    """A ledger from a spec: a ``redis://`` / ``rediss://`` / ``unix://`` URL, or an SQLite file path.

    ``create=False`` opens only an SQLite ledger that exists (:class:`~litm.errors.LedgerNotFoundError`
    otherwise, and no file is made): what every command that reads a ledger uses.
    """
    text = str(spec)
    if text.startswith(REDIS_SCHEMES):
        from litm.spend._ledger.redis import RedisLedger

        return RedisLedger(text, namespace=namespace)
    if "://" in text:  # a mistyped URL ("Redis://", "redis:/") must not become a file of that name
        raise SpendRequestError(f"ledger {text!r} looks like a URL but is not redis://, rediss:// or unix://")
    return SQLiteLedger(text, create=create)
