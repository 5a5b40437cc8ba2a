"""Reading a provider's usage off a streamed response, and settling a hold when the stream ends.

A guarded call with a spend cap that streams (``stream=True``, the SDKs' ``.stream(...)`` helpers) comes
back as the SDK's own ``Stream`` / ``AsyncStream``, metered in place: its class becomes a subclass of its
own (so ``isinstance`` and every helper built on it keep working) and its iterator is wrapped. The final
usage is read as the events pass:

* OpenAI Chat Completions: the last chunk's ``usage``, which the provider sends only when the request asks
  for it (``stream_options={"include_usage": True}``, added by the spend step). When the caller did not ask
  for it, that usage-only chunk (``choices == []``) is read and not passed on, so the caller sees exactly
  the stream it asked for;
* OpenAI Responses: the ``usage`` of the ``response.completed`` / ``.incomplete`` / ``.failed`` event;
* Anthropic Messages: ``message_start``'s usage (input and cache tokens) updated by ``message_delta``'s
  (the cumulative output).

When the stream ends, the hold is settled with that usage (charged in full, logged, when none came). A
stream that fails, or is closed or dropped before its final usage arrived, is charged its full hold: the
provider may have generated up to ``max_tokens`` and nothing says less. A stream that is never read nor
closed keeps its hold until its lease expires, and is then charged in full.

>>> tally = StreamUsage("anthropic")
>>> class Event:
...     def __init__(self, type, **fields):
...         self.type = type
...         self.__dict__.update(fields)
>>> _ = tally.see(Event("message_start", message=Event("message", usage={"input_tokens": 9, "output_tokens": 1})))
>>> tally.final is None
True
>>> _ = tally.see(Event("message_delta", usage={"output_tokens": 7}))
>>> tally.final
{'input_tokens': 9, 'output_tokens': 7}
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Protocol, TypeGuard, TypeVar, cast

__all__ = ["StreamMeter", "StreamUsage", "is_raw_response", "meter_stream", "stream_kind"]

#: Responses API events that end a response and carry its final usage.
_FINAL_RESPONSE_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


def _fields(usage: object) -> dict[str, object]:
    """A usage block (an SDK model or a dict) as a plain dict, nested blocks included."""
    if isinstance(usage, Mapping):
        return dict(usage)
    dump = getattr(usage, "model_dump", None)
    return dict(dump()) if callable(dump) else dict(vars(usage))


class StreamUsage:
    """The usage of one streamed call, read event by event; :attr:`final` is set once it is complete."""

    def __init__(self, api: str, *, pass_usage_chunk: bool = True) -> None:
        self.api = api
        self.pass_usage_chunk = pass_usage_chunk
        self.final: object = None
        self._start: dict[str, object] = {}

    def see(self, item: object) -> bool:
        """Read one event; False when it is a usage chunk the caller did not ask for (not passed on)."""
        if self.api == "openai-chat":
            usage = getattr(item, "usage", None)
            if usage is not None:
                self.final = usage
                return self.pass_usage_chunk or bool(getattr(item, "choices", None))
        elif self.api == "openai-responses":
            if getattr(item, "type", "") in _FINAL_RESPONSE_EVENTS:
                usage = getattr(getattr(item, "response", None), "usage", None)
                if usage is not None:
                    self.final = usage
        elif self.api == "anthropic":
            kind = getattr(item, "type", "")
            if kind == "message_start":
                self._start = _fields(getattr(getattr(item, "message", None), "usage", None) or {})
            elif kind == "message_delta" and getattr(item, "usage", None) is not None:
                delta = {k: v for k, v in _fields(getattr(item, "usage", None)).items() if v is not None}
                self.final = {**self._start, **delta}
        return True


class StreamMeter:
    """Settles one hold from a stream's :class:`StreamUsage`, once: when it ends or is abandoned.

    ``settle(usage)`` and ``charge(why)`` book the outcome (plain functions for a sync stream, coroutine
    functions for an async one).
    """

    def __init__(self, tally: StreamUsage, settle: Callable[[object], object], charge: Callable[[str], object]) -> None:
        self.tally = tally
        self._settle = settle
        self._charge = charge
        self.done = False

    def _outcome(self, why: str) -> object:
        if self.done:
            return None
        self.done = True
        # A usage marked final is the provider's last word, even when the reader stopped right after it.
        if self.tally.final is not None:
            return self._settle(self.tally.final)
        return self._charge(why)

    def end(self) -> None:
        self._outcome("stream ended without reporting usage")

    def abandon(self, why: str) -> None:
        self._outcome(why)

    async def aend(self) -> None:
        await _maybe(self._outcome("stream ended without reporting usage"))

    async def aabandon(self, why: str) -> None:
        await _maybe(self._outcome(why))


async def _maybe(value: object) -> None:
    if inspect.isawaitable(value):
        await value


def _sync_items(inner: Iterator[object], meter: StreamMeter) -> Iterator[object]:
    try:
        for item in inner:
            if meter.tally.see(item):
                yield item
    except GeneratorExit:
        meter.abandon("stream closed before its end")
        raise
    except BaseException as exc:
        meter.abandon(f"stream failed ({type(exc).__name__}: {exc})")
        raise
    meter.end()


async def _async_items(inner: AsyncIterator[object], meter: StreamMeter) -> AsyncIterator[object]:
    try:
        async for item in inner:
            if meter.tally.see(item):
                yield item
    except GeneratorExit:
        await meter.aabandon("stream closed before its end")
        raise
    except BaseException as exc:
        await meter.aabandon(f"stream failed ({type(exc).__name__}: {exc})")
        raise
    await meter.aend()


_METERED: dict[type, type] = {}

S = TypeVar("S")


class _SdkStream(Protocol):
    # The SDK streams' event iterator, which __iter__, __next__ and the .stream() helpers all read.
    _iterator: Iterator[object] | AsyncIterator[object]


def _metered_class(base: type, is_async: bool) -> type:
    """A subclass of the SDK's stream class whose ``close()`` first books an abandoned stream."""
    cls = _METERED.get(base)
    if cls is not None:
        return cls
    if is_async:

        class AsyncMetered(base):  # type: ignore[misc]
            async def close(self) -> None:
                meter = self.__dict__.get("_litm_meter")
                if meter is not None:
                    await meter.aabandon("stream closed before its end")
                await super().close()

        cls = AsyncMetered
    else:

        class Metered(base):  # type: ignore[misc]
            def close(self) -> None:
                meter = self.__dict__.get("_litm_meter")
                if meter is not None:
                    meter.abandon("stream closed before its end")
                super().close()

        cls = Metered
    cls.__name__ = cls.__qualname__ = f"Metered{base.__name__}"
    cls.__module__ = base.__module__
    _METERED[base] = cls
    return cls


def stream_kind(obj: object) -> str | None:
    """``"sync"`` / ``"async"`` for an ``openai`` or ``anthropic`` SDK stream, None for anything else."""
    for cls in type(obj).__mro__:
        if cls.__module__.split(".")[0] in ("openai", "anthropic"):
            if cls.__name__ == "Stream":
                return "sync"
            if cls.__name__ == "AsyncStream":
                return "async"
    return None


class RawResponse(Protocol):
    """The SDKs' raw-response wrappers: ``parse()`` gives the response (a coroutine for an async client)."""

    def parse(self) -> object: ...


def is_raw_response(obj: object) -> TypeGuard[RawResponse]:
    """True for the SDKs' raw-response wrappers (``with_raw_response``, ``with_streaming_response``)."""
    return callable(getattr(obj, "parse", None)) and hasattr(obj, "http_response")


def meter_stream(stream: S, meter: StreamMeter) -> S:
    """``stream`` (an SDK ``Stream`` or ``AsyncStream``), metered in place by ``meter``; returned for chaining.

    The SDKs read every event through the stream's ``_iterator`` (``__iter__``, ``__next__`` and the
    ``.stream()`` helpers alike), so wrapping it there sees each event exactly once.
    """
    is_async = stream_kind(stream) == "async"
    sdk_stream = cast(_SdkStream, stream)
    inner = sdk_stream._iterator
    stream.__class__ = _metered_class(type(stream), is_async)
    sdk_stream._iterator = (
        _async_items(cast(AsyncIterator[object], inner), meter)
        if is_async
        else _sync_items(cast(Iterator[object], inner), meter)
    )
    vars(stream)["_litm_meter"] = meter  # read back by the metered class's close()
    return stream
