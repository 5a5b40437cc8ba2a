"""The gate as a small pipeline of steps around one provider call.

Every request a guarded client would send becomes a :class:`Call` (which API shape, the body as it will go
on the wire, whether it streams). The :class:`Pipeline` runs each :class:`Step`'s :meth:`~Step.before` in
order (a step may rewrite the call or refuse it by raising; nothing is sent until every step agreed), sends
the call, then runs :meth:`~Step.after` in reverse order with the response (a step may wrap it, a stream for
instance). When a later step refuses or the provider fails, :meth:`~Step.failed` runs for every step whose
``before`` had passed, newest first, so a step can undo what it reserved. The SDK retries a failed attempt
itself (``max_retries``); before each retry is sent, :meth:`~Step.retrying` runs for every step with how
the previous attempt ended (:class:`Attempt`), and a step may refuse the retry by raising. The guarded
client records on ``call.attempts`` how many attempts it handed to the HTTP client.

The token gate (:class:`~litm.budget._guard.gate.TokenGate`) is the first step. The spend cap plugs in as
the next one (:class:`~litm.budget._guard.spend.SpendStep`): its ``before`` reserves the worst-case cost
(the gate's bound and the body's ``max_tokens``) and refuses when the budget cannot hold it,
``retrying`` reserves again when the failed attempt may have been billed, ``after`` settles the
reservation with the response's ``usage`` (wrapping a stream to settle when it ends), and ``failed``
refunds it or charges it by the rule of :mod:`litm.spend._outcome`.

Example:
    >>> class Log(Step):
    ...     def before(self, call):
    ...         print("sending", call.api, call.body["model"])
    ...         return call
    ...     def after(self, call, response):
    ...         print("got", response)
    ...         return response
    >>> Pipeline((Log(),)).run(Call("openai-chat", "/chat/completions", {"model": "m"}), lambda call: "ok")
    sending openai-chat m
    got ok
    'ok'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict, TypeVar, Unpack

from litm.models.tokenizers import TokenCount

__all__ = ["Attempt", "Attempts", "Call", "Pipeline", "Step"]

R = TypeVar("R")


@dataclass(frozen=True)
class Attempt:
    """How one sent attempt of a call ended: the provider's HTTP ``status`` when it answered, else None,
    and the ``error`` the SDK was handling (a transport error), when it knew one."""

    number: int
    status: int | None = None
    error: BaseException | None = None


@dataclass
class Attempts:
    """What the guarded client saw of one call's HTTP attempts: how many it handed to the HTTP client
    (``sent``), and how the latest failed one ended before the SDK retried it (``failure``)."""

    sent: int = 0
    failure: Attempt | None = None


class CallChanges(TypedDict, total=False):
    """The fields :meth:`Call.replace` may change (each as typed on :class:`Call`)."""

    api: str
    path: str
    body: Mapping[str, object]
    stream: bool
    count: TokenCount | None
    upper: int | None
    compacted: bool
    attached: Mapping[str, object]
    attempts: Attempts


@dataclass(frozen=True)
class Call:
    """One provider call the gate is deciding on.

    ``api`` is the request shape (``"openai-chat"``, ``"openai-responses"``, ``"anthropic"``), ``path`` the
    endpoint, ``body`` the request as it will be sent (``extra_body`` merged in), ``stream`` whether the
    response streams. ``count`` is the token gate's count of ``body`` (None before it ran) and ``upper`` the
    bound it held to the budget; ``compacted`` says the body is a compacted history, not the caller's own.
    ``attached`` is what steps attach for their own later phases (the spend step's reservation);
    ``attempts`` is filled in by the guarded client while the call is being sent (shared by every copy).
    """

    api: str
    path: str
    body: Mapping[str, object]
    stream: bool = False
    count: TokenCount | None = None
    upper: int | None = None
    compacted: bool = False
    attached: Mapping[str, object] = field(default_factory=dict, compare=False)
    attempts: Attempts = field(default_factory=Attempts, compare=False, repr=False)

    def replace(self, **changes: Unpack[CallChanges]) -> Call:
        """A copy with ``changes`` (calls are immutable, so a step cannot change what an earlier one saw)."""
        return dataclasses.replace(self, **changes)


class Step:
    """One stage of the gate. The defaults pass everything through; override what the step needs.

    The async methods run for async clients; by default they call the sync ones. A step that does I/O
    (a ledger, a network store) overrides them so an event loop is never blocked.

    Each method gets the :class:`Call` being decided (immutable): ``api`` (``"openai-chat"``,
    ``"openai-responses"``, ``"anthropic"``), ``path``, ``body`` (the request as it will be sent),
    ``stream``, ``count`` and ``upper`` (the token gate's count and the bound it held), ``compacted``,
    ``attached`` (what earlier steps attached) and ``attempts``; ``call.replace(body=...)`` is a changed copy.
    """

    def before(self, call: Call) -> Call:
        """Check the call before anything is sent: return it (possibly rewritten) or raise to refuse it."""
        return call

    def after(self, call: Call, response: R) -> R:
        """See the provider's response (or stream); return it, or a wrapper of it of the same type."""
        return response

    def failed(self, call: Call, error: BaseException) -> None:
        """A later step refused the call, or the provider failed; undo what :meth:`before` did."""

    def retrying(self, call: Call, failed: Attempt) -> None:
        """The SDK is about to retry ``call`` after ``failed``; raise to refuse the retry."""

    async def abefore(self, call: Call) -> Call:
        return self.before(call)

    async def aafter(self, call: Call, response: R) -> R:
        return self.after(call, response)

    async def afailed(self, call: Call, error: BaseException) -> None:
        self.failed(call, error)

    async def aretrying(self, call: Call, failed: Attempt) -> None:
        self.retrying(call, failed)


@dataclass(frozen=True)
class Pipeline:
    """Steps run around each call: ``before`` in order, the send, ``after`` in reverse order."""

    steps: Sequence[Step] = ()

    def run(self, call: Call, send: Callable[[Call], R]) -> R:
        passed: list[Step] = []
        try:
            for step in self.steps:
                call = step.before(call)
                passed.append(step)
            response = send(call)
        except BaseException as error:
            for step in reversed(passed):
                step.failed(call, error)
            raise
        for step in reversed(passed):
            response = step.after(call, response)
        return response

    def retry(self, call: Call, failed: Attempt) -> None:
        """Tell every step that the SDK is about to retry ``call`` (any of them may refuse by raising)."""
        for step in self.steps:
            step.retrying(call, failed)

    async def aretry(self, call: Call, failed: Attempt) -> None:
        for step in self.steps:
            await step.aretrying(call, failed)

    async def arun(self, call: Call, send: Callable[[Call], Awaitable[R]]) -> R:
        passed: list[Step] = []
        try:
            for step in self.steps:
                call = await step.abefore(call)
                passed.append(step)
            response = await send(call)
        except BaseException as error:
            for step in reversed(passed):
                await step.afailed(call, error)
            raise
        for step in reversed(passed):
            response = await step.aafter(call, response)
        return response
