"""Each provider's own shapes: the error body an SDK parses, the model list, and where a request sets its limits.

A client's SDK reads the gateway's refusals as it reads its provider's: OpenAI's
``{"error": {"message", "type", "param", "code"}}``, Anthropic's ``{"type": "error", "error": {"type",
"message"}}``. Fields the gateway adds (the 402's scope and amounts) sit beside them in the ``error`` object,
where both SDKs keep unknown fields.

>>> refusal = Refusal(402, "budget_exceeded", "over budget", {"scope": "key:1"})
>>> error_body("openai", refusal)["error"]["code"], error_body("anthropic", refusal)["error"]["type"]
('budget_exceeded', 'budget_exceeded')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from starlette.requests import Request

__all__ = ["API_FAMILY", "Refusal", "error_body", "models_body", "output_field", "read_body"]

Family = Literal["openai", "anthropic"]

#: The error family of each request shape.
API_FAMILY: dict[str, Family] = {"openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic"}

#: OpenAI's error ``type`` and Anthropic's for each status the gateway answers with.
_TYPES: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "invalid_request_error"),
    401: ("invalid_request_error", "authentication_error"),
    402: ("insufficient_quota", "budget_exceeded"),
    403: ("permission_denied", "permission_error"),
    404: ("invalid_request_error", "not_found_error"),
    405: ("invalid_request_error", "invalid_request_error"),
    413: ("invalid_request_error", "request_too_large"),
    500: ("server_error", "api_error"),
    502: ("server_error", "api_error"),
    503: ("server_error", "api_error"),
    504: ("server_error", "api_error"),
}


@dataclass
class Refusal(Exception):
    """The gateway answers ``status`` itself, nothing goes (or went) upstream unless said otherwise.

    ``code``: a stable machine-readable reason (also the ``litm_refusals_total`` label); ``extra``: fields
    added to the error object (the 402's scope and amounts).
    """

    status: int
    code: str
    message: str
    extra: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"


def error_body(family: Family, refusal: Refusal) -> dict[str, object]:
    """The JSON body of ``refusal`` in the family's own error shape."""
    openai_type, anthropic_type = _TYPES.get(refusal.status, ("invalid_request_error", "invalid_request_error"))
    if family == "anthropic":
        kind = "budget_exceeded" if refusal.code == "budget_exceeded" else anthropic_type
        return {"type": "error", "error": {"type": kind, "message": refusal.message, "code": refusal.code,
                                           **refusal.extra}}  # fmt: skip
    return {"error": {"message": refusal.message, "type": openai_type, "param": None, "code": refusal.code,
                      **refusal.extra}}  # fmt: skip


def models_body(family: Family, names: Iterable[str]) -> dict[str, object]:
    """``GET /v1/models`` in the family's shape: the models the key may call."""
    names = sorted(names)
    if family == "anthropic":
        data = [{"type": "model", "id": n, "display_name": n, "created_at": "1970-01-01T00:00:00Z"} for n in names]
        return {"data": data, "has_more": False, "first_id": names[0] if names else None,
                "last_id": names[-1] if names else None}  # fmt: skip
    return {"object": "list", "data": [{"id": n, "object": "model", "created": 0, "owned_by": "litm"} for n in names]}


def output_field(api: str, upstream_kind: str) -> str:
    """Where the gateway writes a key's default output limit into a request that set none."""
    if api == "openai-responses":
        return "max_output_tokens"
    if api == "openai-chat" and upstream_kind == "openai":
        return "max_completion_tokens"  # the o-series refuses max_tokens
    return "max_tokens"


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, or a 413 refusal as soon as it passes ``limit`` bytes (declared or read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Refusal(413, "request_too_large", f"request body over the gateway's limit of {limit} bytes")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Refusal(413, "request_too_large", f"request body over the gateway's limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
