"""The Anthropic wrapper: which ``anthropic`` clients the guard takes and which of their endpoints it gates.

Gated: ``POST /v1/messages`` (``messages.create``, ``.stream``, ``.parse``, ``stream=True`` and the
``beta.messages`` variants, which post to the same path). Prompt-free: ``messages.count_tokens`` and
cancelling a batch. Everything else that posts a body (message batches carry prompts) is refused unless
``allow=`` names it. Compacted Anthropic requests keep the Messages API's rules
(:mod:`litm.budget._history.shapes`).
"""

from __future__ import annotations

from litm.budget._guard.endpoints import Endpoints
from litm.budget._guard.sdk import Sdk, detect_sdk

__all__ = ["ENDPOINTS", "detect"]

ENDPOINTS = Endpoints(
    gated={"/v1/messages": "anthropic"},
    prompt_free=("/v1/messages/count_tokens", "/v1/messages/batches/{id}/cancel"),
)


def detect(client: object) -> Sdk | None:
    """The :class:`~litm.budget._guard.sdk.Sdk` of an ``anthropic.Anthropic`` / ``AsyncAnthropic``."""
    return detect_sdk(client, "anthropic", "Anthropic", "AsyncAnthropic", ENDPOINTS)
