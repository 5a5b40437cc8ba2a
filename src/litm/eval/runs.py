"""What every evaluation run records about the model it ran on.

Example:
    >>> from litm.models import load_model
    >>> model_mode(load_model("openai:gpt-4o-mini"))
    'remote'
"""

from __future__ import annotations

from litm.models.base import Model

__all__ = ["model_mode"]


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
