"""Admission: everything the gateway decides about a request before anything goes upstream, in this order.

1. **authenticate** the virtual key (``Authorization: Bearer`` or ``x-api-key``): 401 otherwise;
2. **parse** the JSON body: 400;
3. **resolve the model**: a model the config does not route is refused (404), one the key may not call
   403, one served by the other provider family's endpoint 400; its price was checked at start-up;
4. **count** the request with the model's tokenizer through the guard's
   :class:`~litm.budget._guard.gate.TokenGate` (``count_request``: the count's bound ``upper`` is exact, or
   raised by the tokenizer's stated margin): 400 when it cannot;
5. over the model's input limit (compared with ``upper``): 400 ``context_length_exceeded``, or, for a key
   with ``compact``, the conversation compacted to fit (the gate's ``on_exceed="trim"``) and said so;
6. no output limit: the key's ``default_max_tokens`` is written into the request, or it is refused (400);
7. **reserve** the worst case on every scope of the key's chain, atomically (litm.spend's
   :class:`~litm.budget._guard.spend.SpendStep`, the same rules as a guarded SDK client: the request's
   limit times ``n``, cache-write rates only when an Anthropic request caches, price variants from the
   body): over budget, 402 naming the scope, limit, settled, held and requested micro-dollars; a scope
   without a limit 402; a ledger that does not answer 503 (fail closed). A reserve that was sent and never
   answered (:class:`~litm.errors.ReserveUncertainError`: the hold may exist) is the same 503, raised as a
   :class:`HoldInDoubt` that names the hold's key, which the app releases once the ledger answers again.

A streamed OpenAI chat request is sent with ``stream_options.include_usage`` (by the spend step), and
:attr:`Admitted.pass_usage_chunk` says whether the client asked for the usage chunk itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from litm.budget import SpendStep, TokenGate
from litm.budget._guard import Call
from litm.budget._guard.spend import OUTPUT_LIMITS, output_limit  # not exported by litm.budget
from litm.errors import (
    ContextBudgetExceeded,
    LedgerBusyError,
    LedgerUnavailableError,
    LitmError,
    PriceUnknownError,
    PromptError,
    ReserveUncertainError,
    SpendBudgetExceeded,
    SpendLimitNotSetError,
    SpendRequestError,
    VirtualKeyError,
)
from litm.models.tokenizers import TokenCount
from litm.serve._config import ModelRoute, Upstream
from litm.serve._keys import VirtualKey
from litm.serve._runtime import Runtime
from litm.serve._shapes import Refusal, output_field
from litm.spend import Reservation
from litm.spend._money import format_usd

__all__ = ["Admitted", "HoldInDoubt", "admit", "authenticate", "presented_key"]


@dataclass
class Admitted:
    """A request that may go upstream: its key, route, the body to send and the reservation it holds (made by
    :func:`admit`; ``call`` carries the reservation once step 7 booked it, in ``reserve_s`` seconds)."""

    request_id: str
    api: str
    key: VirtualKey
    route: ModelRoute
    upstream: Upstream
    count: TokenCount
    step: SpendStep
    call: Call
    pass_usage_chunk: bool
    reserve_s: float = 0.0
    compacted: bool = False

    @property
    def body(self) -> Mapping[str, object]:
        return self.call.body

    @property
    def stream(self) -> bool:
        return self.call.stream

    @property
    def reservation(self) -> Reservation:
        return self.step.reservation(self.call)


@dataclass
class HoldInDoubt(Refusal):
    """The 503 for a reserve the ledger never answered: nothing was sent upstream, and the hold ``key`` may
    still be booked when the ledger answers again, so it must be released then (``SpendCap.release``)."""

    key: str = ""


#: The largest request body counted on the event loop (see :func:`admit`): about 16k tokens, a few ms to count.
INLINE_BODY_BYTES = 64 * 1024


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a client presents: ``x-api-key`` (Anthropic's SDK) or ``Authorization: Bearer`` (OpenAI's)."""
    direct = headers.get("x-api-key")
    if direct:
        return direct.strip()
    auth = headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


async def authenticate(rt: Runtime, headers: Mapping[str, str]) -> VirtualKey:
    """The caller's active virtual key, or a 401 refusal (the presented value is never echoed).

    The lookup never blocks the event loop: a Redis store is read through ``redis.asyncio``."""
    presented = presented_key(headers)
    if presented is None:
        raise Refusal(401, "missing_api_key", "no API key: send a litm virtual key as Authorization: Bearer KEY "
                                              "or x-api-key: KEY")  # fmt: skip
    try:
        key = await rt.keys.aauthenticate(presented)
    except VirtualKeyError as exc:
        raise Refusal(503, "key_store_unavailable", str(exc)) from None
    if key is None:
        raise Refusal(401, "invalid_api_key", "invalid, unknown or revoked litm virtual key")
    return key


def _route(rt: Runtime, api: str, key: VirtualKey, body: Mapping[str, object]) -> tuple[ModelRoute, Upstream]:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise Refusal(400, "model_missing", "the request names no model")
    route = rt.config.route(model)
    if route is None:
        raise Refusal(404, "model_not_found", f"model {model!r} is not served by this gateway (unknown models are "
                                              "refused: their price and context are unknown)")  # fmt: skip
    if not key.may_call(model):
        raise Refusal(403, "model_not_allowed", f"this key may not call model {model!r}")
    upstream = rt.config.upstreams[route.upstream]
    if (api == "anthropic") != (upstream.kind == "anthropic"):
        where = "/v1/messages" if upstream.kind == "anthropic" else "/v1/chat/completions or /v1/responses"
        raise Refusal(400, "wrong_endpoint", f"model {model!r} is served by an {upstream.kind} upstream: use {where}")
    return route, upstream


def _limited(api: str, body: dict[str, object], key: VirtualKey, upstream: Upstream) -> dict[str, object]:
    """``body`` with an output limit: its own, or the key's default (a key without one refuses)."""
    if any(body.get(name) is not None for name in OUTPUT_LIMITS.get(api, ("max_tokens",))):
        try:
            output_limit(api, body)
        except SpendRequestError as exc:
            raise Refusal(400, "invalid_request", str(exc)) from None
        return body
    if key.default_max_tokens is None:
        names = " or ".join(OUTPUT_LIMITS.get(api, ("max_tokens",)))
        raise Refusal(400, "max_tokens_required", f"the request must set {names}: without it the provider may "
                                                  "bill any output length, and this key has no default; nothing "
                                                  "was sent")  # fmt: skip
    return {**body, output_field(api, upstream.kind): key.default_max_tokens}


def _refusal(exc: LitmError) -> Refusal:
    if isinstance(exc, SpendBudgetExceeded):
        return Refusal(402, "budget_exceeded", str(exc), {
            "scope": exc.scope, "window": exc.window, "limit_micros": exc.limit, "settled_micros": exc.settled,
            "held_micros": exc.held, "requested_micros": exc.requested, "limit_usd": format_usd(exc.limit),
            "settled_usd": format_usd(exc.settled), "held_usd": format_usd(exc.held),
            "requested_usd": format_usd(exc.requested)})  # fmt: skip
    if isinstance(exc, SpendLimitNotSetError):
        return Refusal(402, "spend_limit_not_set", f"{exc} (a scope without a limit is never unlimited)")
    if isinstance(exc, LedgerUnavailableError):
        return Refusal(503, "ledger_unavailable", "the spend ledger does not answer; nothing was sent (fail closed)")
    if isinstance(exc, PriceUnknownError):
        return Refusal(400, "price_unknown", str(exc))
    return Refusal(400, "invalid_request", str(exc))


async def admit(rt: Runtime, api: str, key: VirtualKey, raw: bytes, request_id: str) -> Admitted:
    """Steps 2-7 of the module docstring for an authenticated request; raises :class:`Refusal`."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise Refusal(400, "invalid_json", "the request body is not valid JSON (or nested too deeply)") from None
    if not isinstance(body, dict):
        raise Refusal(400, "invalid_json", "the request body must be a JSON object")
    route, upstream = _route(rt, api, key, body)
    # Counting (CPU) and reserving (ledger I/O) run in one worker thread, one hop off the event loop, which
    # keeps serving other requests meanwhile. A small request on a ledger that answers without waiting runs
    # inline (Runtime.inline_ledger): cheaper than the hop, and too short to hold up the other requests.
    # A Redis ledger is reserved on through redis.asyncio, after counting a small request inline.
    if len(raw) > INLINE_BODY_BYTES or not (rt.inline_ledger or rt.async_ledger):
        return await asyncio.to_thread(_gate_and_reserve, rt, api, key, route, upstream, body, request_id)
    adm = _gate(rt, api, key, route, upstream, body, request_id)
    started = time.perf_counter()
    try:
        with _reserving(), rt.on_loop():
            adm.call = await adm.step.abefore(adm.call) if rt.async_ledger else adm.step.before(adm.call)
    except LedgerBusyError:  # another process holds the write lock: wait for it in a thread
        return await asyncio.to_thread(_reserve, adm)
    adm.reserve_s = time.perf_counter() - started
    return adm


@contextlib.contextmanager
def _reserving() -> Iterator[None]:
    """A reservation's errors as refusals (the same for the sync and the async ledger call)."""
    try:
        yield
    except LedgerBusyError:  # the caller's to handle: nothing was written
        raise
    except ReserveUncertainError as exc:
        why = ("the spend ledger did not answer the reservation; nothing was sent, and the hold, if the ledger "
               "booked it, is released once it answers again (fail closed)")
        raise HoldInDoubt(503, "ledger_unavailable", why, key=exc.key) from None
    except LitmError as exc:
        raise _refusal(exc) from None


def _reserve(adm: Admitted) -> Admitted:
    """Step 7, the reservation, with the ledger's full lock wait (in a worker thread)."""
    started = time.perf_counter()
    with _reserving():
        adm.call = adm.step.before(adm.call)
    adm.reserve_s = time.perf_counter() - started
    return adm


def _gate_and_reserve(rt: Runtime, api: str, key: VirtualKey, route: ModelRoute, upstream: Upstream,
                      body: dict[str, object], request_id: str) -> Admitted:  # fmt: skip
    """Steps 4-7 in one go, in a worker thread."""
    return _reserve(_gate(rt, api, key, route, upstream, body, request_id))


def _gate(rt: Runtime, api: str, key: VirtualKey, route: ModelRoute, upstream: Upstream,
          body: dict[str, object], request_id: str) -> Admitted:  # fmt: skip
    """Steps 4-6: count (the guard's token gate), the context limit, the output limit; not yet reserved."""
    limit = rt.max_input.get(route.name, route.max_input_tokens) or None
    # The guard's own token gate: the same count, bound and compaction as a guarded SDK client. One gate per
    # model and policy, made once (building one checks its tokenizer against a Protocol, a slow isinstance).
    on_exceed: Literal["raise", "trim"] = "trim" if key.compact and limit else "raise"
    gate = rt.gates.get((route.name, on_exceed))
    if gate is None:
        gate = rt.gates.setdefault((route.name, on_exceed), TokenGate(limit, rt.tokenizers[route.name], on_exceed))
    try:
        gated = gate.before(Call(api, "", body))
    except ContextBudgetExceeded as exc:
        raise Refusal(400, "context_length_exceeded",
                      f"prompt is too long: {exc.upper} tokens (bound of the count) > {limit} maximum for model "
                      f"{route.name!r}{' even compacted' if key.compact else ''}; nothing was sent",
                      {"input_tokens": exc.upper, "max_input_tokens": limit}) from None  # fmt: skip
    except (PromptError, TypeError, ValueError) as exc:
        raise Refusal(400, "uncountable_request", f"the request cannot be counted: {exc}") from None
    count, compacted = gated.count, gated.compacted
    if count is None:  # the gate counts every call it passes; a call without a count is never reserved
        raise Refusal(400, "uncountable_request", "the request could not be counted")
    body = _limited(api, {**dict(gated.body), "model": route.sent_name}, key, upstream)
    stream = body.get("stream") is True
    options = body.get("stream_options")
    asked = api != "openai-chat" or (isinstance(options, Mapping) and bool(options.get("include_usage")))
    step = SpendStep(rt.cap, provider=upstream.provider or None, key=lambda _call: f"gw-{request_id}",
                     scopes=key.chain)  # fmt: skip
    call = Call(api, "", body, stream=stream, count=count, upper=count.upper)
    return Admitted(request_id, api, key, route, upstream, count, step, call, asked, compacted=compacted)
