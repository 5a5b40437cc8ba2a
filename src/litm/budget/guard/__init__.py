"""A pre-flight gate around the official ``openai`` and ``anthropic`` clients, sync and async.

``guard(client, max_input_tokens=..., tokenizer=...)`` returns a client of the same type whose every
request passes the gate before anything is sent: Chat Completions, the Responses API and Anthropic's
Messages API are counted whole (tool schemas, tool calls and results, system blocks included) and refused
over budget, or with ``on_exceed="trim"`` compacted to fit; streaming calls (``stream=True``, the
``.stream(...)`` helpers), ``beta`` namespaces and ``with_options(...)`` copies are gated alike. What the
gate cannot count is refused, never passed through: uncountable content (``previous_response_id``),
endpoints that may carry prompts it does not know (``allow=`` lets named prompt-free ones through) and
WebSocket sessions. See :mod:`litm.budget.guard.pipeline` for the steps (and where the spend cap plugs in),
:mod:`litm.budget.guard.gate` for the decision, :mod:`litm.budget.guard.endpoints` for what is gated.

Example (no request leaves the process when the prompt is over budget)::

    from openai import OpenAI
    from litm.budget import guard
    client = guard(OpenAI(), max_input_tokens=8000, tokenizer="openai:gpt-4o-mini")
    client.chat.completions.create(model="gpt-4o-mini", messages=[...])   # an OpenAI, typed as one
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from litm.budget.guard import anthropic_sdk, openai_sdk
from litm.budget.guard.clients import GuardedClient, guarded_copy
from litm.budget.guard.gate import ON_EXCEED, OnExceed, TokenGate
from litm.budget.guard.pipeline import Call, Pipeline, Step
from litm.errors import UnsupportedTypeError

__all__ = ["ON_EXCEED", "Call", "GuardedClient", "OnExceed", "Pipeline", "Step", "TokenGate", "guard"]

C = TypeVar("C")


def guard(
    client: C,
    *,
    max_input_tokens: int,
    tokenizer: Any,
    on_exceed: OnExceed = "raise",
    summarizer: Any = None,
    allow: Iterable[str] = (),
    steps: Sequence[Step] = (),
) -> C:
    """Return a copy of ``client`` gated by an input-token budget counted with ``tokenizer``.

    ``client`` is an ``openai.OpenAI`` / ``AsyncOpenAI`` (``AzureOpenAI`` too) or ``anthropic.Anthropic`` /
    ``AsyncAnthropic``; the copy has the same type and shares its settings and HTTP client. ``tokenizer``
    is a litm tokenizer or model, a model spec (``"openai:gpt-4o-mini"``, ``"local:/path/model.gguf"``), or
    ``callable(text) -> int``; an approximate count carries a safety margin (:mod:`litm.budget.margin`), so
    a request passes when ``ceil(count x (1 + margin)) <= max_input_tokens``.

    ``on_exceed="raise"`` (default) refuses an over-budget request with
    :class:`~litm.errors.ContextBudgetExceeded` before it is sent; ``"trim"`` compacts the conversation
    (system prompt and latest turn kept, older turns summarised by ``summarizer`` or extractively, tool
    calls never split from their results) into a request the provider accepts, and sends that. ``allow``
    names endpoint paths (``"/embeddings"``, ``"/files"``) that may post without the gate. ``steps`` run
    after the token gate on every gated call (:class:`Step`: before / after / failed).
    """
    gate = TokenGate(max_input_tokens, tokenizer, on_exceed, summarizer)
    sdk = openai_sdk.detect(client) or anthropic_sdk.detect(client)
    if sdk is None:
        raise UnsupportedTypeError(
            "guard() supports openai.OpenAI / AsyncOpenAI and anthropic.Anthropic / AsyncAnthropic clients, "
            f"got {type(client).__name__}"
        )
    sdk = dataclasses.replace(sdk, endpoints=sdk.endpoints.allowing(allow))
    return guarded_copy(client, Pipeline((gate, *steps)), sdk)
