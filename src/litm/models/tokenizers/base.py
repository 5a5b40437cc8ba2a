"""The :class:`Tokenizer` protocol: counts tokens the way one model does, and says whether exactly.

Example:
    >>> from litm.models.tokenizers.bpe import TiktokenTokenizer
    >>> isinstance(TiktokenTokenizer(), Tokenizer)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from litm.prompt.messages import Message

__all__ = ["Tokenizer"]


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens the way one model does.

    ``exact`` is True when counts equal the model's own (for messages: chat-format overhead included).
    """

    @property
    def name(self) -> str:
        """What does the counting, e.g. ``"llama.cpp:gemma-3-270m-q4_k_m"`` or ``"tiktoken:cl100k_base"``."""
        ...

    @property
    def exact(self) -> bool:
        """True when counts equal the model's own."""
        ...

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        ...

    def count(self, text: str) -> int:
        """Tokens in ``text`` as sent on its own (a completion prompt, BOS included where the model adds one)."""
        ...

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of chat ``messages`` as sent, chat-format overhead and reply header included."""
        ...
