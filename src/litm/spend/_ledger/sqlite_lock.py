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

from litm.errors import CorruptLedgerError, LedgerBusyError, LedgerUnavailableError

__all__ = ["REPAIR", "ledger_error", "one_line", "retry_locked"]

#: What a damaged ledger's error tells the user to do (``docs/spend.md``, "A damaged ledger file").
REPAIR = "move it and its -wal and -shm files aside and start a new ledger (docs/spend.md: 'A damaged ledger file')"
# SQLite's own words for a file whose bytes are not a consistent database.
_DAMAGED = ("malformed", "not a database", "file is encrypted", "corrupt", "decode")


def one_line(text: str, limit: int = 400) -> str:
    r"""``text`` on one line, cut at ``limit`` characters (SQLite's integrity report spans many lines).

    >>> one_line("*** in database main ***\nPage 3: btree")
    '*** in database main *** Page 3: btree'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def ledger_error(message: str, exc: BaseException) -> LedgerUnavailableError:
    """The typed error for a failed ledger operation (``message`` already names it and ``exc``):
    :class:`CorruptLedgerError` with the repair when SQLite says the file is damaged, else
    :class:`LedgerUnavailableError`."""
    message = one_line(message)
    if isinstance(exc, UnicodeDecodeError) or (
        isinstance(exc, sqlite3.DatabaseError) and any(word in str(exc) for word in _DAMAGED)
    ):
        return CorruptLedgerError(f"{message}: the file is damaged or not a spend ledger; if it is a ledger, {REPAIR}")
    return LedgerUnavailableError(message)


_T = TypeVar("_T")


def retry_locked(action: Callable[[], _T], *, timeout_s: float, where: str, failing: str = "",
                 busy: bool = False) -> _T:  # fmt: skip
    """``action()``, retried while SQLite reports the database locked or busy, for up to ``timeout_s``.

    Errors read ``"{where}: {failing} (reason)"``, or ``"{where}: reason"`` without ``failing``. With ``busy``,
    a lock still held after ``timeout_s`` is a :class:`~litm.errors.LedgerBusyError` (the caller asked for a
    short wait and will try again elsewhere).
    """
    deadline = time.monotonic() + timeout_s
    delay = 50e-6
    while True:
        try:
            return action()
        except (sqlite3.Error, UnicodeDecodeError) as exc:  # text SQLite hands back from damaged bytes
            reason = str(exc)
            locked = isinstance(exc, sqlite3.OperationalError) and ("locked" in reason or "busy" in reason)
            if locked and time.monotonic() <= deadline:
                time.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(delay * 1.5, 2e-3)
                continue
            if locked:
                reason = f"still locked after {timeout_s:g} s"
            message = f"{where}: {failing} ({reason})" if failing else f"{where}: {reason}"
            if locked and busy:
                raise LedgerBusyError(one_line(message)) from None
            raise ledger_error(message, exc) from None
