"""The safety margin on approximate token counts: the one place the budget layer decides it.

A count is either exact (the model's own tokenizer, chat overhead included) or approximate (a related
tokenizer, an estimate, tool schemas whose rendering the provider does not publish). The gate's promise
is ``upper <= budget``, where ``upper = ceil(tokens x (1 + margin))`` and ``margin`` is 0.0 for an exact
count. So for an exact tokenizer the prompt never exceeds the budget; for an approximate one it never
exceeds it *as long as the real count is within the margin of the estimate*, which is all litm can honestly
promise.

A :class:`~litm.models.tokenizers.TokenCount` that states its own ``margin`` (and ``upper``) is taken at
its word; an approximate count that states none gets :data:`DEFAULT_MARGIN`.

Example:
    >>> from litm.models.tokenizers import TokenCount
    >>> upper_of(TokenCount(200, True)), upper_of(TokenCount(200, False))
    (200, 230)
    >>> margin_of(TokenCount(200, False))
    0.15
"""

from __future__ import annotations

import math

from litm.models.tokenizers import TokenCount, Tokenizer

__all__ = ["DEFAULT_MARGIN", "describe_count", "margin_of", "text_count", "upper_of"]

#: The margin for an approximate count that states none: litm's approximate counters (cl100k for newer
#: OpenAI models, tool calls counted as their JSON) stay within about 10 % of the provider's count on English
#: and code; 15 % leaves room for other scripts. The spend cap uses the same figure.
DEFAULT_MARGIN = 0.15


def margin_of(count: TokenCount) -> float:
    """The safety margin for ``count``: 0.0 when exact, else the count's own margin or :data:`DEFAULT_MARGIN`."""
    if count.exact:
        return 0.0
    stated = getattr(count, "margin", None)
    # An approximate count that claims no margin is treated as one that states none: never less than nothing.
    return float(stated) if stated else DEFAULT_MARGIN


def upper_of(count: TokenCount) -> int:
    """The bound the gate compares with the budget: ``ceil(tokens x (1 + margin))``."""
    stated = getattr(count, "upper", None)
    if isinstance(stated, int) and not count.exact and stated >= count.tokens and getattr(count, "margin", None):
        return stated
    return math.ceil(count.tokens * (1.0 + margin_of(count)))


def text_count(tokenizer: Tokenizer, text: str) -> TokenCount:
    """Count ``text`` sent on its own (a completion prompt) as a :class:`TokenCount` that says whether exactly."""
    exact = bool(tokenizer.exact)
    notes = () if exact else (f"{tokenizer.name} is not the model's own tokenizer",)
    return TokenCount(int(tokenizer.count(text)), exact, notes)


def describe_count(count: TokenCount) -> str:
    """``count`` in words for an error message: exact, or approximate with the margin and bound.

    >>> describe_count(TokenCount(200, False))
    'up to 230 tokens (200 counted approximately, +15% margin)'
    """
    if count.exact:
        return f"{count.tokens} tokens"
    return f"up to {upper_of(count)} tokens ({count.tokens} counted approximately, +{margin_of(count):.0%} margin)"
