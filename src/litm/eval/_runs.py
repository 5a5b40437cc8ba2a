"""What every evaluation run records about the model it ran on and about each call.

Example:
    >>> from litm.models import load_model
    >>> model_mode(load_model("openai:gpt-4o-mini"))
    'remote'
"""

from __future__ import annotations

from typing import TypedDict

from litm.models._base import Completion, Model

__all__ = ["CompletionFields", "completion_fields", "model_mode"]


def model_mode(model: Model) -> str:
    """How a model evaluates prompts: its local prefix-reuse mode (``aligned``, ``full``, ``cold``) or ``remote``.

    ``aligned`` (the local default) reuses only whole batch-aligned chunks, so answers equal a cold run's;
    ``full`` reuses every shared token (fastest; a greedy answer can flip); ``cold`` reuses nothing.
    """
    if getattr(model, "remote", False):
        return "remote"
    mode = getattr(model, "reuse_prefix", None)
    if isinstance(mode, str):
        return mode
    return "unknown" if mode is None else ("aligned" if mode else "cold")


class CompletionFields(TypedDict):
    """The fields of a result row that describe one model call."""

    input_tokens: int
    cached_tokens: int
    output_tokens: int
    latency_s: float
    finish_reason: str
    sampled: bool


def completion_fields(done: Completion) -> CompletionFields:
    """The fields of a result row that describe one model call: usage, latency, finish reason, sampling.

    ``sampled`` is True when the answer was sampled rather than decoded greedily (a temperature above 0,
    every Claude run, OpenAI reasoning models): such rows can differ between two runs of the same prompt.

    >>> from litm.models import Completion
    >>> completion_fields(Completion("Paris", 13, 2, 0.0812, "stop"))["latency_s"]
    0.0812
    """
    return {
        "input_tokens": done.input_tokens,
        "cached_tokens": done.cached_tokens,
        "output_tokens": done.output_tokens,
        "latency_s": round(done.latency_s, 4),
        "finish_reason": done.finish_reason,
        "sampled": done.sampled,
    }
