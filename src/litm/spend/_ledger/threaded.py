"""An async view of a synchronous ledger whose calls run in worker threads, off the event loop.

SQLite calls block (disk, and the write lock other processes hold); ``asyncio.to_thread`` keeps the event
loop free while they wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from litm.spend._ledger.base import CounterStatus, HoldRequest, ReservationRecord, Settlement

if TYPE_CHECKING:
    from litm.spend._ledger.base import Ledger

__all__ = ["ThreadedAsyncLedger"]


class ThreadedAsyncLedger:
    """:class:`~litm.spend._ledger.base.AsyncLedger` over a thread-safe synchronous ledger."""

    def __init__(self, ledger: Ledger) -> None:
        self.sync = ledger

    async def reserve(self, hold: HoldRequest) -> ReservationRecord:
        return await asyncio.to_thread(self.sync.reserve, hold)

    async def settle(self, key: str, cost: int, *, refund: bool = False) -> Settlement:
        return await asyncio.to_thread(self.sync.settle, key, cost, refund=refund)

    async def get(self, key: str) -> ReservationRecord | None:
        return await asyncio.to_thread(self.sync.get, key)

    async def status(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]:
        return await asyncio.to_thread(self.sync.status, scopes)

    async def aclose(self) -> None:
        """Nothing to close: the synchronous ledger owns the connections."""
