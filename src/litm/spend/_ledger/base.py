"""The store protocol every ledger implements, and the records it exchanges.

A ledger keeps, per counter (scope, window, window id), two integers of micro-dollars: ``settled``
(billed, or charged because a lease expired) and ``held`` (reserved by calls in flight). Every change is
also appended to an event log in the same atomic step, so the counters always equal the sums of the
events (:meth:`Ledger.verify` checks it).

Operations and their guarantees (both stores, same test suite):

* :meth:`Ledger.reserve` checks every counter of every scope in the chain against its limit and either
  adds the hold to all of them or writes nothing (:class:`~litm.errors.SpendBudgetExceeded`). It first
  sweeps a bounded number of expired leases. A key already reserved with the same terms returns the
  existing reservation (``replayed=True``): a retried reserve never holds twice.
* :meth:`Ledger.settle` moves a hold to settled at the given cost, once per key; a cost above the hold is
  recorded in full and flagged ``over_hold``. After the lease expired (charged in full) a late settle may
  lower the charge to the real cost; it is flagged ``late``.
* Time is the store's: the SQLite ledger's injectable clock (``time.time`` by default), the Redis
  server's ``TIME``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from litm.spend._scopes import Window

__all__ = [
    "AsyncLedger",
    "CounterStatus",
    "Event",
    "HoldRequest",
    "Hooks",
    "Ledger",
    "Limit",
    "Mismatch",
    "ReservationRecord",
    "Settlement",
    "State",
]

State = Literal["held", "settled", "refunded", "expired"]
#: Fault-injection points for crash tests, by name (``"reserve:in_txn"``, ``"reserve:sent"``,
#: ``"settle:in_txn"``, ``"settle:sent"``). Never set in production code.
Hooks = Mapping[str, Callable[[], None]]


@dataclass(frozen=True)
class Limit:
    """One limit of one scope: ``micros`` per ``window``."""

    scope: str
    window: Window
    micros: int


@dataclass(frozen=True)
class HoldRequest:
    """What :meth:`Ledger.reserve` is asked to hold; ``lease_s`` is how long until the hold is charged."""

    key: str
    chain: tuple[str, ...]
    amount: int
    lease_s: float
    price_version: str = ""
    model: str = ""
    provider: str = ""

    def same_terms(self, other: ReservationRecord) -> bool:
        return (self.chain, self.amount, self.price_version, self.model, self.provider) == (
            other.chain, other.amount, other.price_version, other.model, other.provider,
        )  # fmt: skip


@dataclass(frozen=True)
class ReservationRecord:
    """A reservation as the ledger stores it.

    ``counters`` are the counter names (``scope|window|window id``) it was booked to at reserve time;
    its settle, refund or expiry is booked to the same counters (the window rollover rule of
    :mod:`litm.spend._scopes`). ``charged`` is what it costs now (0 while held).
    """

    key: str
    chain: tuple[str, ...]
    counters: tuple[str, ...]
    amount: int
    created: float
    deadline: float
    price_version: str
    model: str
    provider: str
    state: State = "held"
    charged: int = 0
    over_hold: bool = False
    late: bool = False
    replayed: bool = False


@dataclass(frozen=True)
class Settlement:
    """The outcome of a settle or refund: ``cost`` charged against a hold of ``amount``.

    ``replayed``: this key was already settled, nothing changed (``cost`` is the first settle's).
    ``late``: the lease had expired and been charged in full; the charge moved to ``cost``.
    ``over_hold``: the reported cost is above the hold; it is recorded in full, never clipped.
    ``status``: the counters of the reservation's chain as this settlement left them (as ``status(chain)``
    would give them), where the ledger reads them in the same step (the Redis ledger does, saving a round
    trip); empty otherwise, and on a replay.
    """

    key: str
    state: State
    amount: int
    cost: int
    over_hold: bool = False
    late: bool = False
    replayed: bool = False
    status: tuple[CounterStatus, ...] = ()

    @property
    def refunded(self) -> int:
        """What went back to the budget (0 when the cost reached or passed the hold)."""
        return max(0, self.amount - self.cost)


@dataclass(frozen=True)
class CounterStatus:
    """One counter in a window, against its scope's limit for that window."""

    scope: str
    window: Window
    wid: str
    limit: int
    settled: int
    held: int

    @property
    def available(self) -> int:
        return self.limit - self.settled - self.held


@dataclass(frozen=True)
class Event:
    """One append-only ledger event (a reserve, settle, refund, expiry, reset or limit change)."""

    seq: str
    ts: float
    kind: str
    key: str
    deltas: tuple[tuple[str, int, int], ...] = field(default=())  # (counter, d_held, d_settled)
    detail: str = ""


@dataclass(frozen=True)
class Mismatch:
    """A counter whose value differs from the sum of its events (must never happen)."""

    counter: str
    held: int
    settled: int
    event_held: int
    event_settled: int


@runtime_checkable
class Ledger(Protocol):
    """A synchronous spend ledger (see the module docstring for the guarantees)."""

    def reserve(self, hold: HoldRequest) -> ReservationRecord: ...

    def settle(self, key: str, cost: int, *, refund: bool = False) -> Settlement: ...

    def get(self, key: str) -> ReservationRecord | None: ...

    def sweep(self, max_items: int = 64) -> int: ...

    def set_limit(self, scope: str, window: Window, micros: int) -> None: ...

    def remove_limit(self, scope: str, window: Window) -> bool: ...

    def limits(self) -> list[Limit]: ...

    def status(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]: ...

    def history(self, scope: str | None = None, limit: int = 50) -> list[Event]: ...

    def reset(self, scope: str, window: Window) -> int: ...

    def verify(self) -> list[Mismatch]: ...

    def now(self) -> float: ...

    def asynchronous(self) -> AsyncLedger: ...

    def close(self) -> None: ...


@runtime_checkable
class AsyncLedger(Protocol):
    """The asynchronous twin of :class:`Ledger` (the operations a call path needs)."""

    async def reserve(self, hold: HoldRequest) -> ReservationRecord: ...

    async def settle(self, key: str, cost: int, *, refund: bool = False) -> Settlement: ...

    async def get(self, key: str) -> ReservationRecord | None: ...

    async def status(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]: ...

    async def aclose(self) -> None: ...
