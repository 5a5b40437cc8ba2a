"""Sync and async guarded clients: the SDK's own client class with the gate at its one sending method.

A guarded client is a copy of the caller's client (``client.with_options()``, so it shares the settings
and the HTTP connection pool) whose class is a subclass of the caller's, built for this guard. That keeps
everything the caller relies on: ``isinstance(guarded, openai.OpenAI)`` holds, static types and editor
completions are the SDK's own, and every namespace (``chat``, ``responses``, ``beta``, ``messages``,
``with_raw_response``, ``with_streaming_response``) is the SDK's code. The subclass overrides
``request()``, the method through which both SDKs send every HTTP request, so nothing posts a body without
passing the gate; ``with_options(...)`` and ``copy()`` build ``self.__class__``, so they stay guarded.

WebSocket sessions (Realtime, Responses over WebSocket) do not go through ``request()``; they do prepare
their connection with the client's ``_prepare_options`` (and ``_refresh_api_key``), which the subclass
refuses outside a gated request. That keeps the guard fail-closed for them too: the gate cannot see what
a session will send, so a guarded client does not open one.
"""

from __future__ import annotations

import abc
from contextvars import ContextVar
from typing import Any, ClassVar, TypeVar, cast

from litm.budget.guard.pipeline import Call, Pipeline
from litm.budget.guard.sdk import Sdk, call_of, options_for
from litm.errors import UngatedRequestError

__all__ = ["GuardedClient", "guarded_copy"]

C = TypeVar("C")

# True while a gated request is being sent: the SDK prepares its options inside request(), and a WebSocket
# session prepares them outside it, which is how the two are told apart.
_SENDING: ContextVar[bool] = ContextVar("litm_guard_sending", default=False)


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


def _call(client: Any, options: Any, kwargs: dict[str, Any]) -> Call | None:
    return call_of(client.litm_sdk, options, bool(kwargs.get("stream")), getattr(client, "base_url", ""))


def _sync_class(base: type) -> type:
    # A class statement, not type(): the methods need zero-argument super() of exactly this class. No mixins:
    # CPython only swaps an instance's class for one that adds nothing to its layout but its own methods.
    class Guarded(base):  # type: ignore[misc]
        def request(self, cast_to: Any, options: Any, *args: Any, **kwargs: Any) -> Any:
            call = _call(self, options, kwargs)
            sdk_request = super().request

            def send(gated: Call | None) -> Any:
                token = _SENDING.set(True)
                try:
                    sent = options if gated is None or call is None else options_for(options, gated, call.body)
                    return sdk_request(cast_to, sent, *args, **kwargs)
                finally:
                    _SENDING.reset(token)

            return send(None) if call is None else self.litm_pipeline.run(call, send)

        def _prepare_options(self, options: Any) -> Any:
            _refuse_unsent(options)
            return super()._prepare_options(options)

        if hasattr(base, "_refresh_api_key"):  # OpenAI's WebSocket sessions refresh the key outside request()

            def _refresh_api_key(self) -> Any:
                _refuse_unsent(None)
                return super()._refresh_api_key()

    return Guarded


def _async_class(base: type) -> type:
    class Guarded(base):  # type: ignore[misc]
        async def request(self, cast_to: Any, options: Any, *args: Any, **kwargs: Any) -> Any:
            call = _call(self, options, kwargs)
            sdk_request = super().request

            async def send(gated: Call | None) -> Any:
                token = _SENDING.set(True)
                try:
                    sent = options if gated is None or call is None else options_for(options, gated, call.body)
                    return await sdk_request(cast_to, sent, *args, **kwargs)
                finally:
                    _SENDING.reset(token)

            return await send(None) if call is None else await self.litm_pipeline.arun(call, send)

        async def _prepare_options(self, options: Any) -> Any:
            _refuse_unsent(options)
            return await super()._prepare_options(options)

        if hasattr(base, "_refresh_api_key"):

            async def _refresh_api_key(self) -> Any:
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
    guarded = cast(Any, client).with_options()
    guarded.__class__ = guarded_class(type(client), pipeline, sdk)
    return cast(C, guarded)
