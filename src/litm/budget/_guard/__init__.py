"""A pre-flight gate around the official ``openai`` and ``anthropic`` clients, sync and async.

``guard(client, max_input_tokens=..., tokenizer=...)`` returns a client of the same type whose every
request passes the gate before anything is sent: Chat Completions, the Responses API and Anthropic's
Messages API are counted whole (tool schemas, tool calls and results, system blocks included) and refused
over budget, or with ``on_exceed="trim"`` compacted to fit; streaming calls (``stream=True``, the
``.stream(...)`` helpers), ``beta`` namespaces and ``with_options(...)`` copies are gated alike. What the
gate cannot count is refused, never passed through: uncountable content (``previous_response_id``),
endpoints that may carry prompts it does not know (``allow=`` lets named prompt-free ones through) and
WebSocket sessions. ``budget=`` adds a dollar cap (:mod:`litm.budget._guard.spend`): every call reserves its
worst-case cost on a :class:`~litm.spend.SpendCap` before it is sent and settles its reported usage after.
See :mod:`litm.budget._guard.pipeline` for the steps, :mod:`litm.budget._guard.gate` for the token decision,
:mod:`litm.budget._guard.endpoints` for what is gated.

Example (no request leaves the process when the prompt is over budget, or its worst case over the cap)::

    from openai import OpenAI
    from litm.budget import guard
    from litm.spend import SpendCap
    cap = SpendCap("spend.db", scopes=["project:acme"])
    client = guard(OpenAI(), max_input_tokens=8000, tokenizer="openai:gpt-4o-mini", budget=cap)
    client.chat.completions.create(model="gpt-4o-mini", messages=[...], max_completion_tokens=512)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TypeVar

from litm.budget._guard import anthropic_sdk, openai_sdk
from litm.budget._guard.clients import GuardedClient, guarded_copy
from litm.budget._guard.gate import ON_EXCEED, OnExceed, TokenGate
from litm.budget._guard.pipeline import Attempt, Attempts, Call, Pipeline, Step
from litm.budget._guard.spend import SpendStep, spend_key
from litm.errors import InvalidOptionError, UnsupportedTypeError
from litm.spend import SpendCap

__all__ = [
    "ON_EXCEED",
    "Attempt",
    "Attempts",
    "Call",
    "GuardedClient",
    "OnExceed",
    "Pipeline",
    "SpendStep",
    "Step",
    "TokenGate",
    "guard",
    "spend_key",
]

C = TypeVar("C")


def guard(
    client: C,
    *,
    max_input_tokens: int | None = None,
    tokenizer: object,
    on_exceed: OnExceed = "raise",
    summarizer: object = None,
    allow: Iterable[str] = (),
    steps: Sequence[Step] = (),
    budget: SpendCap | SpendStep | None = None,
) -> C:
    """Return a copy of ``client`` gated by an input-token budget counted with ``tokenizer``, a dollar
    budget, or both.

    ``client`` is an ``openai.OpenAI`` / ``AsyncOpenAI`` (``AzureOpenAI`` too) or ``anthropic.Anthropic`` /
    ``AsyncAnthropic``; the copy has the same type and shares its settings and HTTP client. ``tokenizer``
    is a litm tokenizer or model, a model spec (``"openai:gpt-4o-mini"``, ``"local:/path/model.gguf"``), or
    ``callable(text) -> int``; an approximate count carries a safety margin (:mod:`litm.budget._margin`), so
    a request passes when ``ceil(count x (1 + margin)) <= max_input_tokens``.

    ``on_exceed="raise"`` (default) refuses an over-budget request with
    :class:`~litm.errors.ContextBudgetExceeded` before it is sent; ``"trim"`` compacts the conversation
    (system prompt and latest turn kept, older turns summarised by ``summarizer`` or extractively, tool
    calls never split from their results) into a request the provider accepts, and sends that. ``allow``
    names endpoint paths (``"/embeddings"``, ``"/files"``) that may post without the gate. ``steps`` run
    after the token gate (and the spend step) on every gated call (:class:`Step`: before / after / failed /
    retrying).

    ``budget`` (a :class:`~litm.spend.SpendCap`, or a :class:`SpendStep` for its options) reserves each
    call's worst case right after the token gate and settles it from the response's usage; without
    ``max_input_tokens`` the gate still counts every request, for the reservation. Every gated call must
    then set its output limit (``max_completion_tokens`` / ``max_tokens``, ``max_output_tokens``). The
    rules for streams, retries and provider errors are in :mod:`litm.budget._guard.spend`.
    """
    if max_input_tokens is None and budget is None:
        raise InvalidOptionError("guard() needs max_input_tokens=, budget= (a litm.spend.SpendCap), or both")
    gate = TokenGate(max_input_tokens, tokenizer, on_exceed, summarizer)
    sdk = openai_sdk.detect(client) or anthropic_sdk.detect(client)
    if sdk is None:
        raise UnsupportedTypeError(
            "guard() supports openai.OpenAI / AsyncOpenAI and anthropic.Anthropic / AsyncAnthropic clients, "
            f"got {type(client).__name__}"
        )
    sdk = dataclasses.replace(sdk, endpoints=sdk.endpoints.allowing(allow))
    spend: tuple[Step, ...] = ()
    if budget is not None:
        step = budget if isinstance(budget, SpendStep) else SpendStep(budget)
        spend = (step.for_provider(sdk.provider),)
    return guarded_copy(client, Pipeline((gate, *spend, *steps)), sdk)
