"""The spend step: a guarded call reserves its worst-case cost on a :class:`~litm.spend.SpendCap` first.

``guard(client, budget=cap, ...)`` puts :class:`SpendStep` right after the token gate. For each gated call:

* ``before`` reserves the worst case: the gate's bound on the prompt (``call.count``, whose ``upper`` the cap
  holds as it is: no second margin), the request's output limit (``max_completion_tokens`` or ``max_tokens``
  for Chat Completions, times ``n``; ``max_output_tokens`` for Responses; ``max_tokens`` for Anthropic),
  the model from the body and the provider from the client. A request without an output limit is refused
  (:class:`~litm.errors.SpendRequestError`): the guard never adds a limit of its own, so what is sent is
  what was reserved. An Anthropic request is held at cache-write rates only when it asks for caching
  (``cache_control`` anywhere in it). The request context that picks rates (``service_tier``, ``speed``)
  comes from the body. A streamed Chat Completions request gets ``stream_options={"include_usage": True}``
  (its usage arrives in a last chunk, which the caller does not see unless it asked for it).
* ``after`` settles from ``response.usage`` (cached tokens included), or for a stream when it ends
  (:mod:`litm.budget._guard.metering`). A response without readable usage is charged its full hold.
* ``retrying`` (the SDK retries a failed attempt): when the failed attempt may have been billed, its hold
  is charged in full and the retry reserves its own (key ``KEY~1``, ``KEY~2``, ...; refused like any
  reservation); when the provider refused it (429, 503, ...) the same hold covers the retry.
* ``failed`` refunds only when nothing can have been billed (nothing sent, a connection never made, a
  refusal status); otherwise the hold is charged in full (the rule of :mod:`litm.spend._outcome`).

The reservation key is ``key(call)`` when the step has a ``key`` function, else the key set by
:func:`spend_key` around the call, else generated. A key names one call: a key already in the ledger is
refused (:class:`~litm.errors.ReservationError`) before anything is sent.

A ledger that cannot be reached refuses the call before it is sent (fail closed). After a call was sent, a
settle that cannot be written is logged and the response still returned: the hold stays, and its lease
charges it in full.

Example:
    >>> import os, tempfile
    >>> from litm.spend import SpendCap
    >>> cap = SpendCap(os.path.join(tempfile.mkdtemp(), "s.db"), scopes=["run:1"])
    >>> cap.set_limit("run:1", "0.01")
    >>> step = SpendStep(cap, provider="openai")
    >>> body = {"model": "gpt-4o-mini", "messages": [], "max_tokens": 500}
    >>> from litm.models.tokenizers import TokenCount
    >>> call = step.before(Call("openai-chat", "/chat/completions", body, count=TokenCount(2000, True), upper=2000))
    >>> step.reservation(call).amount                        # 2000 x $0.15/M + 500 x $0.60/M
    600
    >>> step.after(call, {"usage": {"prompt_tokens": 2000, "completion_tokens": 100}})["usage"]["completion_tokens"]
    100
    >>> step.reservation(call).settlement.cost
    360
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

from litm.budget._guard.metering import StreamMeter, StreamUsage, is_raw_response, meter_stream, stream_kind
from litm.budget._guard.pipeline import Attempt, Call, Step
from litm.errors import LedgerBusyError, LedgerUnavailableError, ReservationError, SpendRequestError
from litm.spend import Reservation, SpendCap
from litm.spend._budget import ReserveOptions
from litm.spend._outcome import may_be_billed, refused_status

__all__ = ["OUTPUT_LIMITS", "SpendStep", "spend_key"]

log = logging.getLogger("litm.spend")

#: Where each request shape states the most output tokens the provider may bill, in order of preference.
OUTPUT_LIMITS: dict[str, tuple[str, ...]] = {
    "openai-chat": ("max_completion_tokens", "max_tokens"),
    "openai-responses": ("max_output_tokens",),
    "anthropic": ("max_tokens",),
}
#: Body fields that select a price variant, per request shape (values that mean "standard" are left out).
_CONTEXT_FIELDS = {"openai-chat": ("service_tier",), "openai-responses": ("service_tier",), "anthropic": ("speed",)}
_STANDARD = frozenset({"auto", "default", "standard", "standard_only"})
_SLOT = "litm.spend"

_KEY: ContextVar[str | None] = ContextVar("litm_spend_key", default=None)

R = TypeVar("R")


@contextlib.contextmanager
def spend_key(key: str) -> Iterator[None]:
    """Reserve the guarded call made inside the block under ``key`` (one call per key).

    >>> with spend_key("run-7:step-3"):
    ...     pass                      # client.chat.completions.create(...) here is reserved as run-7:step-3
    """
    if not isinstance(key, str) or not key:
        raise SpendRequestError(f"spend_key needs a non-empty string, got {key!r}")
    token = _KEY.set(key)
    try:
        yield
    finally:
        _KEY.reset(token)


def output_limit(api: str, body: Mapping[str, object]) -> int:
    """The most output tokens ``body`` lets the provider bill, or :class:`SpendRequestError` without one."""
    names = OUTPUT_LIMITS.get(api, ("max_tokens",))
    given = {name: body[name] for name in names if body.get(name) is not None}
    if not given:
        raise SpendRequestError(
            f"a guarded call with a spend cap must set {' or '.join(names)}: without it the provider may bill any "
            "output length, and the guard never adds a limit of its own; nothing was sent"
        )
    limits: list[int] = []
    for name, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SpendRequestError(f"{name} must be an integer >= 1, got {value!r}; nothing was sent")
        limits.append(value)
    choices = body.get("n", 1) if api == "openai-chat" else 1
    if choices is None:
        choices = 1
    if isinstance(choices, bool) or not isinstance(choices, int) or choices < 1:
        raise SpendRequestError(f"n must be an integer >= 1, got {choices!r}; nothing was sent")
    # Every choice may run to the limit; of two limits the provider could honour either, so hold the larger.
    return max(limits) * choices


def _mentions(value: object, name: str) -> bool:
    if isinstance(value, Mapping):
        return name in value or any(_mentions(v, name) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_mentions(v, name) for v in value)
    return False


@dataclass
class _Hold:
    """One guarded call's reservation(s): the terms to reserve a retry with, and the hold now open."""

    model: str
    terms: ReserveOptions
    key: str
    current: Reservation | None
    retries: int = 0
    tally: StreamUsage | None = None
    settled: list[Reservation] = field(default_factory=list)


def _open_hold(call: Call) -> _Hold | None:
    """The spend step's hold attached to ``call``, None when this step did not reserve it."""
    hold = call.attached.get(_SLOT)
    return hold if isinstance(hold, _Hold) else None


def _keyed(terms: ReserveOptions, key: str) -> ReserveOptions:
    return {**terms, "key": key}


def _hold_of(call: Call) -> _Hold:
    hold = _open_hold(call)
    if hold is None:
        raise ReservationError("this call holds no reservation")
    return hold


class SpendStep(Step):
    """Reserve before a guarded call, settle after it (see the module docstring for every rule).

    ``cap``: the spend cap. ``provider``: the price table's provider (``guard`` sets the client's: ``openai``,
    ``azure``, ``anthropic``). ``key``: ``key(call) -> str``, a reservation key per call. ``scopes``: the
    chain (default: the cap's). ``price_context``: rates variant for every call (``{"processing": "batch"}``).
    """

    def __init__(
        self,
        cap: SpendCap,
        *,
        provider: str | None = None,
        key: Callable[[Call], str] | None = None,
        scopes: Sequence[str] | None = None,
        price_context: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(cap, SpendCap):
            raise SpendRequestError(f"budget= takes a litm.spend.SpendCap (or a SpendStep), got {type(cap).__name__}")
        self.cap = cap
        self.provider = provider
        self.key = key
        self.scopes = tuple(scopes) if scopes else None
        self.price_context = dict(price_context or {})

    def for_provider(self, provider: str) -> SpendStep:
        """This step, pricing with ``provider`` unless it names one of its own."""
        if self.provider:
            return self
        return SpendStep(self.cap, provider=provider, key=self.key, scopes=self.scopes,
                         price_context=self.price_context)  # fmt: skip

    @staticmethod
    def reservation(call: Call) -> Reservation:
        """The reservation open (or last settled) for ``call``."""
        hold = _hold_of(call)
        found = hold.current or (hold.settled[-1] if hold.settled else None)
        if found is None:
            raise ReservationError("this call holds no reservation")
        return found

    # -- before: the terms and the reservation ----------------------------------------------------------

    def _terms(self, call: Call) -> tuple[str, ReserveOptions, Call]:
        body = call.body
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise SpendRequestError(f"a guarded call with a spend cap needs a model name, got {model!r}")
        if call.count is None:
            raise SpendRequestError("the spend step needs the token gate's count: put it after the TokenGate")
        context = dict(self.price_context)
        for name in _CONTEXT_FIELDS.get(call.api, ()):
            value = body.get(name)
            if isinstance(value, str) and value not in _STANDARD:
                context[name] = value
        terms: ReserveOptions = {
            "provider": self.provider, "input_tokens": call.count,
            "max_tokens": output_limit(call.api, body), "scopes": self.scopes, "price_context": context or None,
            "cache_writes": call.api != "anthropic" or _mentions(body, "cache_control"),
        }  # fmt: skip
        tally = None
        if call.stream:
            given = body.get("stream_options")
            options: Mapping[str, object] = given if isinstance(given, Mapping) else {}
            asked = call.api != "openai-chat" or bool(options.get("include_usage"))
            tally = StreamUsage(call.api, pass_usage_chunk=asked)
            if not asked:
                body = {**body, "stream_options": {**options, "include_usage": True}}
        hold = _Hold(model, terms, "", None, tally=tally)
        return model, terms, call.replace(body=body, attached={**call.attached, _SLOT: hold})

    def _key(self, call: Call) -> str:
        return (self.key(call) if self.key else _KEY.get()) or uuid.uuid4().hex

    @staticmethod
    def _fresh(r: Reservation) -> Reservation:
        if r.record.replayed:
            raise ReservationError(
                f"spend key {r.key!r} is already in the ledger ({r.record.state}): a key names one call, so this "
                "one was not sent; give each call (and each retry of yours) its own key"
            )
        return r

    def before(self, call: Call) -> Call:
        model, terms, call = self._terms(call)
        hold = _hold_of(call)
        hold.key = self._key(call)
        hold.current = self._fresh(self.cap.reserve(model, **_keyed(terms, hold.key)))
        return call

    async def abefore(self, call: Call) -> Call:
        model, terms, call = self._terms(call)
        hold = _hold_of(call)
        hold.key = self._key(call)
        hold.current = self._fresh(await self.cap.areserve(model, **_keyed(terms, hold.key)))
        return call

    # -- retrying: a failed attempt that may have been billed keeps its hold --------------------------

    @staticmethod
    def _billed(failed: Attempt) -> bool:
        if failed.status is not None:
            return not refused_status(failed.status)
        return may_be_billed(failed.error, sent=True)

    @staticmethod
    def _retry_key(hold: _Hold) -> str:
        hold.retries += 1
        return f"{hold.key}~{hold.retries}"

    def retrying(self, call: Call, failed: Attempt) -> None:
        hold = _open_hold(call)
        if hold is None or hold.current is None or not self._billed(failed):
            return  # refused by the provider: the same hold covers the retry
        why = f"attempt {failed.number} {_describe(failed)}; the SDK retries it"
        _book(hold, lambda r: r.charge_in_full(why))
        hold.current = self._fresh(self.cap.reserve(hold.model, **_keyed(hold.terms, self._retry_key(hold))))

    async def aretrying(self, call: Call, failed: Attempt) -> None:
        hold = _open_hold(call)
        if hold is None or hold.current is None or not self._billed(failed):
            return
        why = f"attempt {failed.number} {_describe(failed)}; the SDK retries it"
        await _abook(hold, lambda r: r.acharge_in_full(why))
        hold.current = self._fresh(await self.cap.areserve(hold.model, **_keyed(hold.terms, self._retry_key(hold))))

    # -- failed: refund only what cannot have been billed ----------------------------------------------

    def failed(self, call: Call, error: BaseException) -> None:
        hold = _open_hold(call)
        if hold is None or hold.current is None:
            return
        if may_be_billed(error, sent=call.attempts.sent > 0):
            why = f"failed after it was sent ({type(error).__name__}: {error})"
            _book(hold, lambda r: r.charge_in_full(why))
        else:
            _book(hold, lambda r: r.refund())

    async def afailed(self, call: Call, error: BaseException) -> None:
        hold = _open_hold(call)
        if hold is None or hold.current is None:
            return
        if may_be_billed(error, sent=call.attempts.sent > 0):
            why = f"failed after it was sent ({type(error).__name__}: {error})"
            await _abook(hold, lambda r: r.acharge_in_full(why))
        else:
            await _abook(hold, lambda r: r.arefund())

    # -- after: settle from the usage, now or when the stream ends -------------------------------------

    def after(self, call: Call, response: R) -> R:
        hold = _open_hold(call)
        if hold is None or hold.current is None:
            return response
        parsed = response.parse() if is_raw_response(response) else response

        def settle(usage: object) -> None:
            _book(hold, lambda r: _settle(r, usage))

        if not _metered(parsed, hold, settle, lambda why: _book(hold, lambda r: r.charge_in_full(why))):
            settle(parsed)
        return response

    async def aafter(self, call: Call, response: R) -> R:
        hold = _open_hold(call)
        if hold is None or hold.current is None:
            return response
        parsed = response.parse() if is_raw_response(response) else response
        if inspect.isawaitable(parsed):  # an async raw response parses in a coroutine
            parsed = await parsed

        async def settle(usage: object) -> None:
            await _abook(hold, lambda r: _asettle(r, usage))

        if not _metered(parsed, hold, settle, lambda why: _abook(hold, lambda r: r.acharge_in_full(why))):
            await settle(parsed)
        return response


def _metered(parsed: object, hold: _Hold, settle: Callable[[object], object], charge: Callable[[str], object]) -> bool:
    """Meter ``parsed`` when it is a stream (``settle`` or ``charge`` books it when it ends) and say so."""
    if stream_kind(parsed) is None or hold.tally is None:
        return False
    meter_stream(parsed, StreamMeter(hold.tally, settle, charge))
    return True


def _describe(failed: Attempt) -> str:
    if failed.status is not None:
        return f"was answered HTTP {failed.status}"
    if failed.error is not None:
        return f"failed after it was sent ({type(failed.error).__name__})"
    return "failed after it was sent"


def _take(hold: _Hold) -> Reservation | None:
    r, hold.current = hold.current, None
    if r is not None:
        hold.settled.append(r)
    return r


def _unbooked(r: Reservation, exc: BaseException) -> None:
    log.error("call %s: the ledger could not book its outcome (%s); its hold stays until its lease expires and "
              "is then charged in full", r.key, exc)  # fmt: skip


def _reopen(hold: _Hold, r: Reservation) -> None:
    """Undo :func:`_take`: the ledger was busy under a short lock wait (``SQLiteLedger.lock_wait``) and wrote
    nothing, so the hold stays open for the caller to book again, where it may wait longer."""
    hold.settled.remove(r)
    hold.current = r


def _book(hold: _Hold, booking: Callable[[Reservation], object]) -> None:
    """Close the open hold with ``booking``; a ledger that cannot write it leaves it to its lease."""
    r = _take(hold)
    if r is None:
        return
    try:
        booking(r)
    except LedgerBusyError:
        _reopen(hold, r)
        raise
    except LedgerUnavailableError as exc:
        _unbooked(r, exc)


async def _abook(hold: _Hold, booking: Callable[[Reservation], Awaitable[object]]) -> None:
    r = _take(hold)
    if r is None:
        return
    try:
        await booking(r)
    except LedgerBusyError:
        _reopen(hold, r)
        raise
    except LedgerUnavailableError as exc:
        _unbooked(r, exc)


def _settle(r: Reservation, response: object) -> None:
    try:
        r.settle(response)
    except SpendRequestError as exc:
        r.charge_in_full(f"returned no readable usage ({exc})")


async def _asettle(r: Reservation, response: object) -> None:
    try:
        await r.asettle(response)
    except SpendRequestError as exc:
        await r.acharge_in_full(f"returned no readable usage ({exc})")
