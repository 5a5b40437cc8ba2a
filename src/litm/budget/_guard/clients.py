"""Sync and async guarded clients: the SDK's own client class with the gate at its one sending method.

A guarded client is a copy of the caller's client (``client.with_options()``, so it shares the settings
and the HTTP connection pool) whose class is a subclass of the caller's, built for this guard. That keeps
everything the caller relies on: ``isinstance(guarded, openai.OpenAI)`` holds, static types and editor
completions are the SDK's own, and every namespace (``chat``, ``responses``, ``beta``, ``messages``,
``with_raw_response``, ``with_streaming_response``) is the SDK's code. The subclass overrides
``request()``, the method through which both SDKs send every HTTP request, so nothing posts a body without
passing the gate; ``with_options(...)`` and ``copy()`` build ``self.__class__``, so they stay guarded.

The SDK retries inside ``request()``. Two of its per-attempt hooks tell the pipeline about each attempt:
``_prepare_request`` (called for every attempt, right before it is handed to the HTTP client) counts it on
``call.attempts`` and, for a retry, first runs the steps' ``retrying`` (which may refuse it), and
``_sleep_for_retry`` (called while the SDK handles a failed attempt) records how it ended.

WebSocket sessions (Realtime, Responses over WebSocket) do not go through ``request()``; they do prepare
their connection with the client's ``_prepare_options`` (and ``_refresh_api_key``), which the subclass
refuses outside a gated request. That keeps the guard fail-closed for them too: the gate cannot see what
a session will send, so a guarded client does not open one.
"""

from __future__ import annotations

import abc
import sys
from collections.abc import Mapping
from contextvars import ContextVar
from typing import ClassVar, Protocol, TypeVar, cast

from litm.budget._guard.pipeline import Attempt, Call, Pipeline
from litm.budget._guard.sdk import Sdk, SdkOptions, call_of, options_for
from litm.errors import UngatedRequestError

__all__ = ["GuardedClient", "guarded_copy"]

C = TypeVar("C")


class _Copyable(Protocol):
    def with_options(self) -> object: ...


# True while a gated request is being sent: the SDK prepares its options inside request(), and a WebSocket
# session prepares them outside it, which is how the two are told apart.
_SENDING: ContextVar[bool] = ContextVar("litm_guard_sending", default=False)
# The gated call being sent, and its pipeline: what the SDK's per-attempt hooks report to.
_IN_FLIGHT: ContextVar[tuple[Pipeline, Call] | None] = ContextVar("litm_guard_in_flight", default=None)


def _retry_of() -> tuple[Pipeline, Call, Attempt | None] | None:
    """The call whose attempt is starting, and the failed attempt it retries (None for the first)."""
    flight = _IN_FLIGHT.get()
    if flight is None:
        return None
    pipeline, call = flight
    log = call.attempts
    failed = (log.failure or Attempt(log.sent)) if log.sent else None
    return pipeline, call, failed


def _started(call: Call) -> None:
    call.attempts.sent += 1
    call.attempts.failure = None


def _note_failure(response: object) -> None:
    # Called by the SDK while it handles the failed attempt: sys.exc_info() is that attempt's error, if any.
    flight = _IN_FLIGHT.get()
    if flight is not None:
        log = flight[1].attempts
        status = getattr(response, "status_code", None) if response is not None else None
        log.failure = Attempt(log.sent, status if isinstance(status, int) else None, sys.exc_info()[1])


def _refuse_unsent(what: object) -> None:
    if not _SENDING.get():
        raise UngatedRequestError(
            "a guarded client refuses WebSocket sessions (Realtime, Responses over WebSocket): the token gate "
            "cannot see what a session sends, so nothing was sent; use an unguarded client for them",
            path=str(getattr(what, "url", "") or "websocket"),
        )


class GuardedClient(abc.ABC):
    """What every guarded client class is registered as: ``isinstance(client, GuardedClient)`` tells one apart.

    A guarded class has ``litm_pipeline`` (the gate: its steps, the token gate first) and ``litm_sdk``
    (what the guard knows of the client's SDK).
    """

    litm_pipeline: ClassVar[Pipeline]
    litm_sdk: ClassVar[Sdk]


def _call(client: GuardedClient, options: SdkOptions, kwargs: Mapping[str, object]) -> Call | None:
    return call_of(client.litm_sdk, options, bool(kwargs.get("stream")), getattr(client, "base_url", ""))


def _sync_class(base: type) -> type:
    # A class statement, not type(): the methods need zero-argument super() of exactly this class. No mixins:
    # CPython only swaps an instance's class for one that adds nothing to its layout but its own methods.
    class Guarded(base):  # type: ignore[misc]
        def request(self, cast_to: object, options: SdkOptions, *args: object, **kwargs: object) -> object:
            call = _call(self, options, kwargs)
            sdk_request = super().request

            def send(gated: Call | None) -> object:
                token = _SENDING.set(True)
                flight = _IN_FLIGHT.set(None if gated is None else (self.litm_pipeline, gated))
                try:
                    sent = options if gated is None or call is None else options_for(options, gated, call.body)
                    return sdk_request(cast_to, sent, *args, **kwargs)
                finally:
                    _IN_FLIGHT.reset(flight)
                    _SENDING.reset(token)

            return send(None) if call is None else self.litm_pipeline.run(call, send)

        def _prepare_options(self, options: object) -> object:
            _refuse_unsent(options)
            return super()._prepare_options(options)

        def _prepare_request(self, request: object) -> object:
            done = super()._prepare_request(request)
            retry = _retry_of()
            if retry is not None:
                pipeline, gated, failed = retry
                if failed is not None:
                    pipeline.retry(gated, failed)
                _started(gated)
            return done

        def _sleep_for_retry(self, *args: object, **kwargs: object) -> object:
            _note_failure(kwargs.get("response"))
            return super()._sleep_for_retry(*args, **kwargs)

        if hasattr(base, "_refresh_api_key"):  # OpenAI's WebSocket sessions refresh the key outside request()

            def _refresh_api_key(self) -> object:
                _refuse_unsent(None)
                return super()._refresh_api_key()

    return Guarded


def _async_class(base: type) -> type:
    class Guarded(base):  # type: ignore[misc]
        async def request(self, cast_to: object, options: SdkOptions, *args: object, **kwargs: object) -> object:
            call = _call(self, options, kwargs)
            sdk_request = super().request

            async def send(gated: Call | None) -> object:
                token = _SENDING.set(True)
                flight = _IN_FLIGHT.set(None if gated is None else (self.litm_pipeline, gated))
                try:
                    sent = options if gated is None or call is None else options_for(options, gated, call.body)
                    return await sdk_request(cast_to, sent, *args, **kwargs)
                finally:
                    _IN_FLIGHT.reset(flight)
                    _SENDING.reset(token)

            return await send(None) if call is None else await self.litm_pipeline.arun(call, send)

        async def _prepare_options(self, options: object) -> object:
            _refuse_unsent(options)
            return await super()._prepare_options(options)

        async def _prepare_request(self, request: object) -> object:
            done = await super()._prepare_request(request)
            retry = _retry_of()
            if retry is not None:
                pipeline, gated, failed = retry
                if failed is not None:
                    await pipeline.aretry(gated, failed)
                _started(gated)
            return done

        async def _sleep_for_retry(self, *args: object, **kwargs: object) -> object:
            _note_failure(kwargs.get("response"))
            return await super()._sleep_for_retry(*args, **kwargs)

        if hasattr(base, "_refresh_api_key"):

            async def _refresh_api_key(self) -> object:
                _refuse_unsent(None)
                return await super()._refresh_api_key()

    return Guarded


def guarded_class(base: type, pipeline: Pipeline, sdk: Sdk) -> type:
    """A subclass of the SDK client class ``base`` whose requests pass ``pipeline``."""
    cls = (_async_class if sdk.is_async else _sync_class)(base)
    cls.__name__ = cls.__qualname__ = f"Guarded{base.__name__}"
    cls.__module__ = base.__module__
    setattr(cls, "litm_pipeline", pipeline)  # noqa: B010 (a class made at run time: mypy sees a plain type)
    setattr(cls, "litm_sdk", sdk)  # noqa: B010
    GuardedClient.register(cls)
    return cls


def guarded_copy(client: C, pipeline: Pipeline, sdk: Sdk) -> C:
    """A copy of ``client`` (same settings, same HTTP client) whose every request passes ``pipeline``."""
    # with_options() is the SDK's own faithful copy; its resources are created fresh, bound to the copy,
    # so none of them can reach the unguarded original.
    guarded = cast(_Copyable, client).with_options()
    guarded.__class__ = guarded_class(type(client), pipeline, sdk)
    return cast(C, guarded)
