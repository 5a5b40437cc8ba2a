"""``SpendCap``: a hard dollar budget, debited with the worst case before a call and settled after it.

The flow of one guarded call::

    cap = SpendCap("spend.db", scopes=["project:acme", "user:42"])
    cap.set_limit("project:acme", "100", window="monthly")
    cap.set_limit("user:42", "5", window="daily")
    r = cap.reserve("gpt-4o-mini", provider="openai", input_tokens=n, input_exact=True, max_tokens=512)
    resp = client.chat.completions.create(..., max_completion_tokens=r.max_tokens)   # never more
    r.settle(resp.usage)                                                               # the real cost

``reserve`` refuses with :class:`~litm.errors.SpendBudgetExceeded` (status 402) before anything is sent
when the worst case does not fit every scope of the chain. How a token gate composes with it (the agent
loop of issue 13, whose prompt grows every step)::

    for step in range(30):
        messages = compact_or_raise(messages, max_input_tokens)      # the token gate: fits the context
        n, exact = counter.count(messages)                           # litm.tokens: exact or approximate
        with cap.hold("gpt-4o-mini", provider="openai", input_tokens=n, input_exact=exact,
                      max_tokens=1024, key=f"{run_id}:{step}") as r:  # stable key: a retry never holds twice
            resp = client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                  max_completion_tokens=r.max_tokens)
            r.settle(resp.usage)
        messages.append(tool_result(resp))

Twenty such agents in parallel share the chain's counters through the ledger; the one whose worst case
no longer fits gets the 402 and stops, and the others can never overspend together.

Rules a guard can rely on:

* an exception (or an aborted stream) inside ``hold()`` before ``settle`` charges the full hold: the
  provider may have billed up to the worst case, and the cap cannot know less; call ``r.refund()`` when
  the request was certainly not sent;
* ``settle`` prices usage with the reservation's own rates (same price-table version and date);
* a ledger that cannot be reached raises :class:`~litm.errors.LedgerUnavailableError` unless the cap was
  built with ``fail_open=True``, which logs a warning for every call let through unbacked.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import date
from pathlib import Path
from typing import TypedDict, TypeVar, Unpack

from litm.errors import (
    LedgerUnavailableError,
    PriceUnknownError,
    ReservationError,
    ReserveUncertainError,
    SpendRequestError,
)
from litm.models.tokenizers import TokenCount
from litm.spend._cost import APPROX_MARGIN, Estimate, check_margin, worst_case
from litm.spend._ledger import Ledger, open_ledger
from litm.spend._ledger.base import AsyncLedger, CounterStatus, Event, HoldRequest, ReservationRecord, Settlement
from litm.spend._ledger.rules import check_count, check_lease
from litm.spend._money import parse_usd
from litm.spend._prices import ModelRates, PriceTable, default_table
from litm.spend._reservation import Money, Reservation, day_of, split_version, version_with_context
from litm.spend._scopes import Window, check_chain, check_window

__all__ = ["SpendCap"]

log = logging.getLogger("litm.spend")
F = TypeVar("F", bound=Callable[..., object])


class HoldOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`SpendCap.reserve` besides the model, the prompt and the output limit."""

    provider: str | None
    input_exact: bool
    key: str | None
    scopes: Sequence[str] | None
    lease_s: float | None
    price_context: Mapping[str, str] | None
    cache_writes: bool
    amount: Money | None


class ReserveOptions(HoldOptions, total=False):
    """Every keyword argument of :meth:`SpendCap.reserve` (what ``areserve``, ``hold`` and ``ahold`` pass on)."""

    input_tokens: int | TokenCount | None
    max_tokens: int | None


class SpendCap:
    """A dollar budget over a ledger (an SQLite path, a ``redis://`` URL, or a ledger object).

    ``scopes``: the default chain, outermost first. ``prices``: a :class:`PriceTable` or a mapping of
    user prices merged over the shipped snapshot. ``lease_s``: how long a hold lives before it is charged
    in full. ``margin``: the fraction added to a bare-int prompt count not stated exact (default: the
    tokenizer layer's :data:`~litm.models.tokenizers._base.UNSTATED_MARGIN`, 0.25; a
    :class:`~litm.models.tokenizers.TokenCount` carries its own). ``fail_open``: let calls through, logged,
    while the ledger is unreachable (off by default: fail closed).

    >>> import os, tempfile
    >>> cap = SpendCap(os.path.join(tempfile.mkdtemp(), "s.db"), scopes=["project:demo"])
    >>> cap.set_limit("project:demo", "0.01")
    >>> r = cap.reserve("gpt-4o-mini", provider="openai", input_tokens=2000, input_exact=True, max_tokens=500)
    >>> r.amount                                    # 2000 x $0.15/M + 500 x $0.60/M
    600
    >>> r.settle({"prompt_tokens": 2000, "completion_tokens": 100}).cost
    360
    """

    def __init__(
        self,
        ledger: Ledger | str | Path,
        *,
        scopes: Sequence[str] = (),
        prices: PriceTable | Mapping[str, Mapping[str, object]] | None = None,
        lease_s: float = 900.0,
        margin: float = APPROX_MARGIN,
        fail_open: bool = False,
    ) -> None:
        if not isinstance(fail_open, bool):
            raise SpendRequestError(f"fail_open must be True or False, got {fail_open!r}")
        self.lease_s = check_lease(lease_s)
        self.margin = check_margin(margin)
        self.ledger: Ledger = open_ledger(ledger) if isinstance(ledger, str | Path) else ledger
        self.scopes = check_chain(scopes) if scopes else ()
        if prices is None or isinstance(prices, Mapping):
            table = default_table()
            self.prices = table.with_prices(prices) if prices else table
        else:
            self.prices = prices
        self.fail_open = fail_open
        self._clock: Callable[[], float] = getattr(self.ledger, "clock", None) or time.time
        self._aledger: AsyncLedger | None = None
        self._aloop: asyncio.AbstractEventLoop | None = None

    # -- configuration and reports -------------------------------------------------------------------

    def with_prices(self, prices: Mapping[str, Mapping[str, object]]) -> SpendCap:
        """A cap on the same ledger and scopes whose price table also has ``prices`` (model name -> USD per
        MTok rates, as in ``SpendCap(prices=...)``). Its table has its own version, so a reservation made
        through it is settled through it (or with an explicit ``cost=``)."""
        return SpendCap(self.ledger, scopes=self.scopes, prices=self.prices.with_prices(prices),
                        lease_s=self.lease_s, margin=self.margin, fail_open=self.fail_open)  # fmt: skip

    def set_limit(self, scope: str, amount: Money, window: Window = "total") -> None:
        """Set ``scope``'s limit for ``window`` to ``amount`` dollars (``"12.50"``, ``Decimal``, int dollars)."""
        self.ledger.set_limit(scope, check_window(window), parse_usd(amount, what="limit"))

    def status(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]:
        """The current window of every limit (micro-dollars); of ``scopes``' limits only, when given."""
        return self.ledger.status(scopes)

    async def astatus(self, scopes: Sequence[str] | None = None) -> list[CounterStatus]:
        """:meth:`status` for event loops (a thread for SQLite, ``redis.asyncio`` for Redis)."""
        return await self._async().status(scopes)

    def history(self, scope: str | None = None, limit: int = 50) -> list[Event]:
        """The latest ``limit`` ledger events (1 to 10^9), newest first."""
        return self.ledger.history(scope, check_count(limit, "history limit"))

    # -- pricing ----------------------------------------------------------------------------------------

    def rates(self, model: str, provider: str | None = None, *, on: date | None = None,
              price_context: Mapping[str, str] | None = None) -> ModelRates:  # fmt: skip
        """The rates a reservation for ``model`` would use today (or on ``on``)."""
        return self.prices.rates(model, provider, on=on or day_of(self._clock()), context=price_context)

    def estimate(self, model: str, *, provider: str | None = None, input_tokens: int | TokenCount,
                 input_exact: bool = False,
                 max_tokens: int | None, price_context: Mapping[str, str] | None = None,
                 cache_writes: bool = True) -> Estimate:  # fmt: skip
        """The worst case :meth:`reserve` would hold, without touching the ledger."""
        rates = self.rates(model, provider, price_context=price_context)
        return worst_case(rates, input_tokens=input_tokens, input_exact=input_exact, max_tokens=max_tokens,
                          cache_writes=cache_writes, margin=self.margin)  # fmt: skip

    # -- reserve -----------------------------------------------------------------------------------------

    def _prepare(self, model: str | None = None, *, provider: str | None = None,
                 input_tokens: int | TokenCount | None = None,
                 input_exact: bool = False, max_tokens: int | None = None, key: str | None = None,
                 scopes: Sequence[str] | None = None, lease_s: float | None = None,
                 price_context: Mapping[str, str] | None = None, cache_writes: bool = True,
                 amount: Money | None = None) -> tuple[HoldRequest, ModelRates | None, Estimate | None]:  # fmt: skip
        chain = check_chain(scopes) if scopes else self.scopes
        if not chain:
            raise SpendRequestError("no scopes: pass scopes=[...] here or to SpendCap(...)")
        if amount is not None:
            # The explicit opt-in for a model the table cannot price: the caller states the worst case.
            micros, rates, est = parse_usd(amount, what="amount"), None, None
        else:
            if model is None or input_tokens is None:
                raise SpendRequestError("reserve() needs model= and input_tokens= (or an explicit amount=)")
            rates = self.rates(model, provider, price_context=price_context)
            est = worst_case(rates, input_tokens=input_tokens, input_exact=input_exact, max_tokens=max_tokens,
                             cache_writes=cache_writes, margin=self.margin)  # fmt: skip
            micros = est.micros
        for name, flag in (("input_exact", input_exact), ("cache_writes", cache_writes)):
            if not isinstance(flag, bool):  # "no" is truthy: a string must not pass as a yes
                raise SpendRequestError(f"{name} must be True or False, got {flag!r}")
        # An empty key is refused, not replaced: a retry must find the same key (None asks for a new one).
        hold = HoldRequest(
            key=uuid.uuid4().hex if key is None else key, chain=chain, amount=micros,
            lease_s=self.lease_s if lease_s is None else check_lease(lease_s),
            price_version=version_with_context(self.prices.version, price_context) if rates else "",
            model=model or "", provider=provider or "",
        )  # fmt: skip
        return hold, rates, est

    def _unbacked(self, hold: HoldRequest, exc: LedgerUnavailableError) -> ReservationRecord:
        if not self.fail_open:
            raise exc
        log.warning("spend ledger unavailable, call %s let through UNBACKED (fail_open=True): %s", hold.key, exc)
        if isinstance(exc, ReserveUncertainError):
            log.warning("reserve %s may still be booked: release it with SpendCap.release(%r) once the ledger "
                        "answers", hold.key, hold.key)  # fmt: skip
        now = time.time()
        return ReservationRecord(hold.key, hold.chain, (), hold.amount, now, now + hold.lease_s,
                                 hold.price_version, hold.model, hold.provider)  # fmt: skip

    def reserve(
        self,
        model: str | None = None,
        *,
        provider: str | None = None,
        input_tokens: int | TokenCount | None = None,
        input_exact: bool = False,
        max_tokens: int | None = None,
        key: str | None = None,
        scopes: Sequence[str] | None = None,
        lease_s: float | None = None,
        price_context: Mapping[str, str] | None = None,
        cache_writes: bool = True,
        amount: Money | None = None,
    ) -> Reservation:
        """Hold the worst case of one call on every scope of the chain, or raise before anything is sent.

        ``input_tokens`` is a :class:`~litm.models.tokenizers.TokenCount` (from ``count_request`` or the
        token gate: its bound ``upper`` is held as it is, no second margin) or an int; ``input_exact`` says
        an int came from the model's own tokenizer, and defaults to False, so an unstated count gets the
        safety margin (fail closed).

        Raises :class:`~litm.errors.SpendBudgetExceeded` (402), :class:`~litm.errors.PriceUnknownError`
        (unknown model; pass ``amount=`` dollars to hold an explicit worst case instead),
        :class:`~litm.errors.SpendRequestError` (no ``max_tokens``, bad scopes),
        :class:`~litm.errors.LedgerUnavailableError` (store down, fail closed).
        """
        hold, rates, est = self._prepare(
            model, provider=provider, input_tokens=input_tokens, input_exact=input_exact, max_tokens=max_tokens,
            key=key, scopes=scopes, lease_s=lease_s, price_context=price_context, cache_writes=cache_writes,
            amount=amount,
        )  # fmt: skip
        try:
            record, unbacked = self.ledger.reserve(hold), False
        except LedgerUnavailableError as exc:
            record, unbacked = self._unbacked(hold, exc), True
        return Reservation(self, record, rates, est, max_tokens, provider, unbacked=unbacked)

    async def areserve(self, model: str | None = None, **kwargs: Unpack[ReserveOptions]) -> Reservation:
        """:meth:`reserve` for event loops (same arguments): SQLite work runs in a thread, Redis goes
        through ``redis.asyncio``."""
        hold, rates, est = self._prepare(model, **kwargs)
        try:
            record, unbacked = await self._async().reserve(hold), False
        except LedgerUnavailableError as exc:
            record, unbacked = self._unbacked(hold, exc), True
        max_tokens, provider = kwargs.get("max_tokens"), kwargs.get("provider")
        return Reservation(self, record, rates, est, max_tokens, provider, unbacked=unbacked)

    def _async(self) -> AsyncLedger:
        # One async view per event loop: redis.asyncio connections belong to the loop that opened them.
        loop = asyncio.get_running_loop()
        if self._aledger is None or self._aloop is not loop:
            self._aledger, self._aloop = self.ledger.asynchronous(), loop
        return self._aledger

    # -- settle -----------------------------------------------------------------------------------------

    def _close(self, r: Reservation, cost: int, *, refund: bool) -> Settlement:
        if r.unbacked:
            return self._close_unbacked(r, cost, refund)
        return self._flag(self.ledger.settle(r.key, cost, refund=refund))

    async def _aclose(self, r: Reservation, cost: int, *, refund: bool) -> Settlement:
        if r.unbacked:
            return self._close_unbacked(r, cost, refund)
        return self._flag(await self._async().settle(r.key, cost, refund=refund))

    @staticmethod
    def _close_unbacked(r: Reservation, cost: int, refund: bool) -> Settlement:
        log.warning("unbacked call %s cost %d micro-dollars, not recorded (ledger was unavailable)", r.key, cost)
        return Settlement(r.key, "refunded" if refund else "settled", r.amount, cost, over_hold=cost > r.amount)

    @staticmethod
    def _flag(outcome: Settlement) -> Settlement:
        if outcome.over_hold and not outcome.replayed:
            log.warning("call %s cost %d micro-dollars, above its hold of %d: recorded in full (over_hold)",
                        outcome.key, outcome.cost, outcome.amount)  # fmt: skip
        return outcome

    def settle(self, key: str, usage: object = None, *, cost: Money | None = None) -> Settlement:
        """Settle a reservation by key (from any process): priced with the table version, date and request
        context (``service_tier``, ...) it was reserved with.

        Refuses (:class:`~litm.errors.PriceUnknownError`) when this process's price table is another
        version than the reservation's: repricing with other rates would hide a difference.
        """
        record = self.ledger.get(key)
        if record is None:
            raise ReservationError(f"unknown reservation key {key!r}")
        rates = None
        if record.price_version and cost is None:
            version, ctx = split_version(record.price_version)
            if version != self.prices.version:
                raise PriceUnknownError(
                    f"reservation {key!r} was priced with table {version}, this process has "
                    f"{self.prices.version}; pass cost= or load that table"
                )
            rates = self.prices.rates(record.model, record.provider or None, on=day_of(record.created), context=ctx)
        r = Reservation(self, record, rates, None, None, record.provider or None)
        return r.settle(usage, cost=cost)

    def refund(self, key: str) -> Settlement:
        """Release reservation ``key`` in full (its request was not sent)."""
        return self._flag(self.ledger.settle(key, 0, refund=True))

    def release(self, key: str) -> Settlement | None:
        """The reconcile step for a call that was never sent: release hold ``key`` if the ledger has it.

        After :class:`~litm.errors.ReserveUncertainError` (a reserve sent to a ledger that did not answer in
        time), the hold may or may not exist. Once the ledger answers again, ``release(err.key)`` refunds it
        if it was booked (also after its lease expired and charged it: the charge goes back to $0, flagged
        ``late``), returns the first outcome (``replayed``) if the key was already settled or refunded, and
        returns None when the key was never booked. Release only what was never sent: a hold whose call ran
        must be settled with its usage.

        >>> import os, tempfile
        >>> cap = SpendCap(os.path.join(tempfile.mkdtemp(), "s.db"), scopes=["run:1"])
        >>> cap.set_limit("run:1", "1")
        >>> _ = cap.reserve(amount="0.50", key="call-7")
        >>> cap.release("call-7").refunded, cap.release("never-booked")
        (500000, None)
        """
        if not isinstance(key, str) or not key:
            raise SpendRequestError(f"release() needs a reservation key, got {key!r}")
        if self.ledger.get(key) is None:
            return None
        return self.refund(key)

    # -- the common case: a context manager and a decorator ---------------------------------------------

    @staticmethod
    def _why(exc: BaseException | None) -> str:
        if exc is None:
            return "had no settle() before its block ended"
        return f"ended without settle ({type(exc).__name__}: {exc})"

    @contextmanager
    def hold(self, model: str | None = None, **kwargs: Unpack[ReserveOptions]) -> Iterator[Reservation]:
        """:meth:`reserve` for a ``with`` block (same arguments); leaving it without ``settle`` or
        ``refund`` (an exception, an aborted stream, a forgotten settle) charges the full hold."""
        r = self.reserve(model, **kwargs)
        try:
            yield r
        except BaseException as exc:
            if not r.closed:
                r.charge_in_full(self._why(exc))
            raise
        if not r.closed:
            r.charge_in_full(self._why(None))

    @asynccontextmanager
    async def ahold(self, model: str | None = None, **kwargs: Unpack[ReserveOptions]) -> AsyncIterator[Reservation]:
        """The ``async with`` form of :meth:`hold`."""
        r = await self.areserve(model, **kwargs)
        try:
            yield r
        except BaseException as exc:
            if not r.closed:
                await r.acharge_in_full(self._why(exc))
            raise
        if not r.closed:
            await r.acharge_in_full(self._why(None))

    def charged(self, model: str, *, max_tokens: int, input_tokens: int | Callable[..., int | tuple[int, bool]],
                **reserve_kwargs: Unpack[HoldOptions]) -> Callable[[F], F]:  # fmt: skip
        """Decorate a function that makes one call and returns its response (or usage, or Completion).

        ``input_tokens`` is an int or a callable taking the function's arguments and returning the count
        (or ``(count, exact)``). The function runs only when the reservation fits; its return value is
        settled (a value with no readable usage is charged the full hold, logged, and still returned); an
        exception charges the full hold. Works on ``async def`` functions too.

        >>> import os, tempfile
        >>> cap = SpendCap(os.path.join(tempfile.mkdtemp(), "s.db"), scopes=["run:1"])
        >>> cap.set_limit("run:1", "1")
        >>> words = lambda q: (len(q.split()), True)       # (count, exact)
        >>> @cap.charged("gpt-4o-mini", provider="openai", max_tokens=100, input_tokens=words)
        ... def ask(q):
        ...     return {"prompt_tokens": len(q.split()), "completion_tokens": 7}
        >>> ask("what is the capital of France")["completion_tokens"]
        7
        """

        exact_default = reserve_kwargs.pop("input_exact", False)

        def counted(args: tuple[object, ...], kwargs: dict[str, object]) -> ReserveOptions:
            got = input_tokens(*args, **kwargs) if callable(input_tokens) else input_tokens
            n, exact = got if isinstance(got, tuple) else (got, exact_default)
            return {**reserve_kwargs, "input_tokens": n, "input_exact": exact, "max_tokens": max_tokens}

        def cost_of(r: Reservation, result: object) -> int:
            try:
                return r.cost_of(result)
            except SpendRequestError as exc:  # the call ran: keep its result, charge what it may have cost
                log.warning("call %s returned no readable usage (%s): charged its full hold", r.key, exc)
                return r.amount

        def wrap(fn: F) -> F:
            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def run_async(*args: object, **kwargs: object) -> object:
                    async with self.ahold(model, **counted(args, kwargs)) as r:
                        result = await fn(*args, **kwargs)
                        r.settlement = await self._aclose(r, cost_of(r, result), refund=False)
                    return result

                return run_async  # type: ignore[return-value]

            @functools.wraps(fn)
            def run(*args: object, **kwargs: object) -> object:
                with self.hold(model, **counted(args, kwargs)) as r:
                    result = fn(*args, **kwargs)
                    r.settlement = self._close(r, cost_of(r, result), refund=False)
                return result

            return run  # type: ignore[return-value]

        return wrap

    def close(self) -> None:
        self.ledger.close()

    async def aclose(self) -> None:
        """Close the async view's connections (Redis) of the running loop; :meth:`close` closes the rest."""
        view, self._aledger = self._aledger, None
        if view is not None:
            await view.aclose()
