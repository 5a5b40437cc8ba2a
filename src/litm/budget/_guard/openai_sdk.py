"""The OpenAI wrapper: which ``openai`` clients the guard takes and which of their endpoints it gates.

Gated: ``POST /chat/completions`` (``chat.completions.create``, ``.parse``, ``.stream``, ``stream=True``,
``beta`` and ``with_raw_response`` variants alike) and ``POST /responses`` (``responses.create``,
``.parse``, ``.stream``). Prompt-free: counting input tokens, cancelling a background response, updating a
stored completion's metadata. Everything else that posts a body is refused unless ``allow=`` names it; the
WebSocket APIs (Realtime, Responses over WebSocket) are refused by the client wrapper
(:mod:`litm.budget._guard.clients`). ``AzureOpenAI`` and other subclasses are guarded like their base.
"""

from __future__ import annotations

from litm.budget._guard.endpoints import Endpoints
from litm.budget._guard.sdk import Sdk, detect_sdk

__all__ = ["ENDPOINTS", "detect"]

ENDPOINTS = Endpoints(
    gated={"/chat/completions": "openai-chat", "/responses": "openai-responses"},
    prompt_free=("/responses/input_tokens", "/responses/{id}/cancel", "/chat/completions/{id}"),
)


def detect(client: object) -> Sdk | None:
    """The :class:`~litm.budget._guard.sdk.Sdk` of an ``openai.OpenAI`` / ``AsyncOpenAI`` (or subclass)."""
    return detect_sdk(client, "openai", "OpenAI", "AsyncOpenAI", ENDPOINTS)
