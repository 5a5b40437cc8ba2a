"""A token budget taken from a measured position profile rather than from a model card.

``litm probe`` writes ``recommended_max_input_tokens`` (the effective context length: the longest length
whose mid-context accuracy stays near the model's short-context accuracy) into the profile's metadata. The
gate can use it directly, capped by the model's real window and by any budget the caller sets.

Example:
    >>> from litm.placement._profile import PositionProfile
    >>> p = PositionProfile.from_weights([1, 0.8, 1], metadata={"recommended_max_input_tokens": 4096})
    >>> max_input_tokens_from(p, context_window=32768, reserve_output_tokens=256)
    3840
"""

from __future__ import annotations

from pathlib import Path

from litm.errors import InvalidOptionError, InvalidProfileError
from litm.placement._profile import PositionProfile

__all__ = ["max_input_tokens_from"]


def max_input_tokens_from(
    profile: PositionProfile | str | Path,
    *,
    context_window: int | None = None,
    reserve_output_tokens: int = 0,
    cap: int | None = None,
) -> int:
    """The input-token budget a measured profile supports, minus the tokens reserved for the answer.

    Reads ``metadata["recommended_max_input_tokens"]`` (else ``metadata["effective_context_length"]``) of a
    profile written by ``litm probe``; ``context_window`` and ``cap`` bound it from above. Raises
    :class:`~litm.errors.InvalidProfileError` when the profile carries no measured length (a built-in or
    hand-written profile) and :class:`~litm.errors.LitmError` when nothing is left after the reserve.
    """
    prof = profile if isinstance(profile, PositionProfile) else PositionProfile.load(profile)
    meta = prof.metadata
    value = meta.get("recommended_max_input_tokens") or meta.get("effective_context_length")
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise InvalidProfileError(
            f"profile {prof.name or '(unnamed)'} has no measured length (metadata 'recommended_max_input_tokens'); "
            "measure one with `litm probe`"
        )
    for bound in (context_window, cap):
        if bound is not None:
            value = min(value, bound)
    budget = value - reserve_output_tokens
    if budget <= 0:
        raise InvalidOptionError(
            f"reserve_output_tokens={reserve_output_tokens} leaves no input budget of {value} tokens"
        )
    return budget
