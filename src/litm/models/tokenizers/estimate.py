"""An estimate for models whose tokenizer is not available offline (marked ``exact=False``).

>>> EstimateTokenizer().count("x" * 35)
10
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from litm.errors import ModelError
from litm.prompt.messages import Message, check_messages

__all__ = ["ANTHROPIC_CHARS_PER_TOKEN", "EstimateTokenizer"]

#: Anthropic's rule of thumb ("a token is approximately 3.5 English characters"), used only as an estimate.
ANTHROPIC_CHARS_PER_TOKEN = 3.5


class EstimateTokenizer:
    """An estimate for models whose tokenizer is not available: ``ceil(characters / chars_per_token)``.

    Never exact; it cannot ``encode``. Chat overhead is unknown, so messages count their text only.

    >>> EstimateTokenizer().count("x" * 35)
    10
    """

    def __init__(self, chars_per_token: float = ANTHROPIC_CHARS_PER_TOKEN, *, label: str = "estimate") -> None:
        if chars_per_token <= 0:
            raise ValueError("chars_per_token must be > 0")
        self.chars_per_token = chars_per_token
        self.label = label

    @property
    def name(self) -> str:
        return f"{self.label} ({self.chars_per_token:g} characters per token)"

    @property
    def exact(self) -> bool:
        return False

    def encode(self, text: str) -> list[int]:
        raise ModelError(f"{self.name} only estimates counts; it has no token ids")

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count(msg["content"]) for msg in check_messages(messages))
