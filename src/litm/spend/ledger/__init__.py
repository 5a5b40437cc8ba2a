"""Spend ledgers: the store protocol, SQLite (one host) and Redis (many machines).

>>> import tempfile, os
>>> open_ledger(os.path.join(tempfile.mkdtemp(), "spend.db"))  # doctest: +ELLIPSIS
SQLiteLedger('...spend.db')
"""

from __future__ import annotations

from pathlib import Path

from litm.spend.ledger.base import (
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
from litm.spend.ledger.sqlite import SQLiteLedger

__all__ = [
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

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def open_ledger(spec: str | Path, *, namespace: str = "default") -> Ledger:
    """A ledger from a spec: a ``redis://`` / ``rediss://`` / ``unix://`` URL, or an SQLite file path."""
    text = str(spec)
    if text.startswith(REDIS_SCHEMES):
        from litm.spend.ledger.redis import RedisLedger

        return RedisLedger(text, namespace=namespace)
    return SQLiteLedger(text)
