"""The safety margin on approximate token counts: the one place the budget layer decides it.

A count is either exact (the model's own tokenizer, chat overhead included) or approximate (a related
tokenizer, an estimate, tool schemas whose rendering the provider does not publish). The gate's promise
is ``upper <= budget``, where ``upper = ceil(tokens x (1 + margin))`` and ``margin`` is 0.0 for an exact
count. So for an exact tokenizer the prompt never exceeds the budget; for an approximate one it never
exceeds it *as long as the real count is within the margin of the estimate*, which is all litm can honestly
promise.

The margins themselves are the tokenizer layer's: every litm tokenizer states one
(:func:`~litm.models.tokenizers.safety_margin`), and :func:`~litm.models.tokenizers.count_request` adds
what a request shape needs (tool calls, schemas, media). A count from a third-party counter that is
approximate but states no margin gets :data:`~litm.models.tokenizers._base.UNSTATED_MARGIN`.

Example:
    >>> from litm.models.tokenizers import TokenCount
    >>> upper_of(TokenCount(200, True)), upper_of(TokenCount(200, False, margin=0.15)), upper_of(TokenCount(200, False))
    (200, 230, 250)
    >>> margin_of(TokenCount(200, False))
    0.25
"""

from __future__ import annotations

import math

from litm.models.tokenizers import TokenCount, Tokenizer, safety_margin
from litm.models.tokenizers._base import UNSTATED_MARGIN

__all__ = ["describe_count", "margin_of", "text_count", "upper_of"]


def margin_of(count: TokenCount) -> float:
    """The safety margin for ``count``: 0.0 when exact, else its own, else ``UNSTATED_MARGIN``."""
    if count.exact:
        return 0.0
    # An approximate count that claims no margin states none: never trust it to be exact.
    return count.margin or UNSTATED_MARGIN


def upper_of(count: TokenCount) -> int:
    """The bound the gate compares with the budget: ``ceil(tokens x (1 + margin))``."""
    if count.exact or count.margin:
        return count.upper
    return math.ceil(round(count.tokens * (1.0 + UNSTATED_MARGIN), 6))


def text_count(tokenizer: Tokenizer, text: str) -> TokenCount:
    """Count ``text`` sent on its own (a completion prompt), with the tokenizer's own safety margin."""
    exact = bool(tokenizer.exact)
    notes = () if exact else (f"{tokenizer.name} is not the model's own tokenizer",)
    return TokenCount(int(tokenizer.count(text)), exact, notes, 0.0 if exact else safety_margin(tokenizer))


def describe_count(count: TokenCount) -> str:
    """``count`` in words for an error message: exact, or approximate with the margin and bound.

    >>> describe_count(TokenCount(200, False, margin=0.15))
    'up to 230 tokens (200 counted approximately, +15% margin)'
    """
    if count.exact:
        return f"{count.tokens} tokens"
    return f"up to {upper_of(count)} tokens ({count.tokens} counted approximately, +{margin_of(count):.0%} margin)"
