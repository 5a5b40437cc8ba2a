"""``Reservation``: the handle ``SpendCap.reserve()`` returns for one call, and what it records.

The handle carries the rates the hold was priced with, so that its settle prices the reported usage with
the same table version, date and request context; ``max_tokens`` is what the call must send.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Protocol

from litm.errors import SpendRequestError
from litm.spend._cost import Estimate, price_usage, usage_from
from litm.spend._ledger.base import ReservationRecord, Settlement
from litm.spend._money import parse_usd
from litm.spend._prices import ModelRates

log = logging.getLogger("litm.spend")


class Closer(Protocol):
    """What a reservation needs from the cap that made it: booking its settle or refund (sync and async)."""

    def _close(self, reservation: Reservation, cost: int, *, refund: bool) -> Settlement: ...

    async def _aclose(self, reservation: Reservation, cost: int, *, refund: bool) -> Settlement: ...

__all__ = ["Money", "Reservation", "day_of", "split_version", "version_with_context"]

#: Dollars as the API accepts them: ``"12.50"``, ``Decimal("12.5")`` or whole dollars as an int.
Money = str | int | Decimal


def day_of(ts: float) -> date:
    """The UTC date of the instant ``ts`` (the date a price is looked up at)."""
    return datetime.fromtimestamp(ts, UTC).date()


_CONTEXT_RE = re.compile(r"^[A-Za-z0-9_.:/-]+$")


def version_with_context(version: str, context: Mapping[str, str] | None) -> str:
    """The price version a reservation records: the table's, plus the request context that picks rates
    (``genai-prices-0.2.3|service_tier=priority``), so that a settle by key elsewhere prices alike."""
    if not context:
        return version
    for k, v in context.items():
        if not (isinstance(k, str) and isinstance(v, str) and _CONTEXT_RE.match(k) and _CONTEXT_RE.match(v)):
            raise SpendRequestError(f"price_context entry {k!r}: {v!r} must be plain words (A-Z a-z 0-9 _ . : / -)")
    return version + "|" + "&".join(f"{k}={v}" for k, v in sorted(context.items()))


def split_version(recorded: str) -> tuple[str, dict[str, str] | None]:
    """The table version and request context a reservation recorded (the inverse of
    :func:`version_with_context`).

    >>> split_version("genai-prices-0.2.3|service_tier=priority")
    ('genai-prices-0.2.3', {'service_tier': 'priority'})
    """
    version, _, context = recorded.partition("|")
    return version, (dict(pair.split("=", 1) for pair in context.split("&")) if context else None)


@dataclass
class Reservation:
    """A hold in the ledger for one call. ``max_tokens`` is what the call must send.

    ``unbacked`` is True only for a call let through by ``fail_open`` while the ledger was down.
    """

    cap: Closer
    record: ReservationRecord
    rates: ModelRates | None
    estimate: Estimate | None
    max_tokens: int | None
    provider: str | None = None
    settlement: Settlement | None = None
    unbacked: bool = False

    @property
    def key(self) -> str:
        return self.record.key

    @property
    def amount(self) -> int:
        """The hold, in micro-dollars."""
        return self.record.amount

    @property
    def closed(self) -> bool:
        return self.settlement is not None

    def cost_of(self, usage: object = None, *, cost: Money | None = None) -> int:
        """What ``usage`` (or an explicit ``cost`` in dollars) costs at this reservation's rates.

        Without rates (a reservation made with an explicit ``amount``) and without ``cost``, the cost is
        the full hold: nothing else can be trusted.
        """
        if cost is not None:
            return parse_usd(cost, what="cost")
        if usage is None:
            raise SpendRequestError(f"settle({self.key!r}) needs the call's usage or an explicit cost")
        if self.rates is None:
            return self.amount
        return price_usage(self.rates, usage_from(usage, provider=self.provider))

    def settle(self, usage: object = None, *, cost: Money | None = None) -> Settlement:
        """Settle at the reported usage (OpenAI or Anthropic usage, a response, a dict, a Completion)."""
        self.settlement = self.cap._close(self, self.cost_of(usage, cost=cost), refund=False)
        return self.settlement

    def refund(self) -> Settlement:
        """Release the whole hold: the request was certainly not sent (nothing can have been billed)."""
        self.settlement = self.cap._close(self, 0, refund=True)
        return self.settlement

    def charge_in_full(self, why: str) -> Settlement:
        """Charge the whole hold, logged with ``why``: the call may have been billed up to its worst case
        and nothing says less (an exception after sending, an aborted stream, a response without usage)."""
        log.warning("call %s %s: charged its full hold", self.key, why)
        self.settlement = self.cap._close(self, self.amount, refund=False)
        return self.settlement

    async def acharge_in_full(self, why: str) -> Settlement:
        """:meth:`charge_in_full` without blocking the event loop."""
        log.warning("call %s %s: charged its full hold", self.key, why)
        self.settlement = await self.cap._aclose(self, self.amount, refund=False)
        return self.settlement

    async def asettle(self, usage: object = None, *, cost: Money | None = None) -> Settlement:
        """:meth:`settle` without blocking the event loop."""
        self.settlement = await self.cap._aclose(self, self.cost_of(usage, cost=cost), refund=False)
        return self.settlement

    async def arefund(self) -> Settlement:
        """:meth:`refund` without blocking the event loop."""
        self.settlement = await self.cap._aclose(self, 0, refund=True)
        return self.settlement
