"""Waiting for a SQLite lock held by another connection, with a deadline, and failing closed after it.

SQLite's own busy handler sleeps in steps of milliseconds, which under contention between processes costs
more than the ledger's transactions themselves, so the ledger's connections never wait inside SQLite
(``timeout=0``) and :func:`retry_locked` retries instead, with short randomised sleeps that grow from 50 µs
to 2 ms. Past the deadline, and on any other SQLite error, it raises
:class:`~litm.errors.LedgerUnavailableError`: a ledger that cannot be read or written refuses the call.

Example:
    >>> import sqlite3
    >>> conn = sqlite3.connect(":memory:")
    >>> retry_locked(lambda: conn.execute("SELECT 1").fetchone(), timeout_s=1.0, where="demo")
    (1,)
    >>> retry_locked(lambda: conn.execute("SELECT nope"), timeout_s=1.0, where="demo")
    Traceback (most recent call last):
    litm.errors.LedgerUnavailableError: demo: no such column: nope
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from typing import TypeVar

from litm.errors import LedgerUnavailableError

__all__ = ["retry_locked"]

_T = TypeVar("_T")


def retry_locked(action: Callable[[], _T], *, timeout_s: float, where: str, failing: str = "") -> _T:
    """``action()``, retried while SQLite reports the database locked or busy, for up to ``timeout_s``.

    Errors read ``"{where}: {failing} (reason)"``, or ``"{where}: reason"`` without ``failing``.
    """
    deadline = time.monotonic() + timeout_s
    delay = 50e-6
    while True:
        try:
            return action()
        except sqlite3.Error as exc:
            reason = str(exc)
            locked = isinstance(exc, sqlite3.OperationalError) and ("locked" in reason or "busy" in reason)
            if locked and time.monotonic() <= deadline:
                time.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(delay * 1.5, 2e-3)
                continue
            if locked:
                reason = f"still locked after {timeout_s:g} s"
            message = f"{where}: {failing} ({reason})" if failing else f"{where}: {reason}"
            raise LedgerUnavailableError(message) from None
