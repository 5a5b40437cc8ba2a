"""Server-sent events passed through event by event, with the usage read as they pass.

Each event goes to the client as soon as its blank line arrives, unchanged, except one: the usage-only chunk
of an OpenAI chat stream that the gateway asked for on the client's behalf (the client did not set
``stream_options.include_usage``), which is read and not passed on. The usage is read by litm's own
:class:`~litm.budget._guard.metering.StreamUsage` (the guarded SDK clients' reader) over the parsed events,
and the hold is booked by :class:`~litm.budget._guard.metering.StreamMeter`: settled with the final usage
when the stream ends (or stopped right after it), charged in full when the stream ends without usage, the
upstream breaks, or the client goes away first.

>>> ev = _Event({"type": "message_delta", "usage": {"output_tokens": 3}, "delta": {"stop_reason": None}})
>>> ev.type, ev.usage, ev.delta.stop_reason
('message_delta', {'output_tokens': 3}, None)
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio

from litm.budget._guard.metering import StreamMeter, StreamUsage
from litm.serve._upstream import UpstreamError, UpstreamResponse

__all__ = ["relay"]

log = logging.getLogger("litm.serve")


class _Event:
    """Attribute access to a parsed event, as :class:`StreamUsage` reads SDK objects; ``usage`` blocks stay
    dicts, which :func:`litm.spend.usage_from` prices."""

    def __init__(self, data: dict[str, object]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> object:
        value = self._data.get(name)
        return _Event(value) if isinstance(value, dict) and name != "usage" else value


def _parsed(lines: list[str]) -> _Event | None:
    data = "\n".join(line[5:].lstrip(" ") for line in lines if line.startswith("data:"))
    if not data or data == "[DONE]":
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return _Event(value) if isinstance(value, dict) else None


async def relay(
    response: UpstreamResponse,
    tally: StreamUsage,
    settle: Callable[[object], Awaitable[None]],
    charge: Callable[[str], Awaitable[None]],
    done: Callable[[str], None],
) -> AsyncIterator[bytes]:
    """The client's side of an upstream SSE ``response``; books the hold once, however the stream ends.

    ``done(outcome)`` is called last with ``"ended"``, ``"client_closed"`` or ``"upstream_failed"`` (for the
    access log).
    """
    meter = StreamMeter(tally, settle, charge)
    outcome = "ended"
    try:
        lines: list[str] = []
        async for line in response.lines():
            if line:
                lines.append(line)
                continue
            if not lines:
                continue
            event, text = _parsed(lines), "\n".join(lines) + "\n\n"
            lines = []
            if event is None or tally.see(event):
                yield text.encode()
        if lines:
            yield ("\n".join(lines) + "\n\n").encode()
    except BaseException as exc:
        # The client went away (cancellation) or the upstream broke mid-answer: the provider may have billed
        # up to the worst case, unless its final usage already passed.
        outcome = "upstream_failed" if isinstance(exc, UpstreamError) else "client_closed"
        with anyio.CancelScope(shield=True):
            await meter.aabandon(f"stream {outcome.replace('_', ' ')} ({type(exc).__name__})")
            await response.aclose()
            done(outcome)
        raise
    with anyio.CancelScope(shield=True):
        await meter.aend()
        await response.aclose()
        done(outcome)
