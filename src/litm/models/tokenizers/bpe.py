"""Tokenizers for OpenAI models: tiktoken encodings loaded offline, with OpenAI's chat overhead rule.

Chat messages follow OpenAI's documented rule from the tiktoken cookbook ("How to count tokens with
tiktoken"): 3 tokens per message, 1 more per ``name``, 3 to prime the reply.

>>> openai_tokenizer("gpt-4").exact, openai_tokenizer("gpt-4o-mini").exact
(True, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from litm.models.tokenizers.base import TokenCount
from litm.models.tokenizers.offline import import_tiktoken, offline_encoding
from litm.prompt.messages import MEDIA_PART_TOKENS, Message, billed_request, check_messages

__all__ = [
    "OPENAI_REPLY_PRIMING",
    "OPENAI_TOKENS_PER_MESSAGE",
    "OPENAI_TOKENS_PER_NAME",
    "TiktokenTokenizer",
    "openai_tokenizer",
]

#: OpenAI's documented chat overhead (tiktoken cookbook, current chat models): per message, per name, reply.
OPENAI_TOKENS_PER_MESSAGE = 3
OPENAI_TOKENS_PER_NAME = 1
OPENAI_REPLY_PRIMING = 3


class TiktokenTokenizer:
    """Counts with a tiktoken encoding; messages follow OpenAI's documented per-message overhead.

    Special-token text inside the input (``"<|endoftext|>"``) is counted as plain text, as the API does.

    >>> TiktokenTokenizer().count("hello world")
    2
    """

    def __init__(self, encoding: str = "cl100k_base", *, exact: bool = True, note: str = "") -> None:
        self._encoding = offline_encoding(encoding)
        self._exact = exact
        self.note = note

    @property
    def name(self) -> str:
        return f"tiktoken:{self._encoding.name}"

    @property
    def exact(self) -> bool:
        return self._exact

    def encode(self, text: str) -> list[int]:
        return list(self._encoding.encode(text, disallowed_special=()))

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_messages(self, messages: Sequence[Message]) -> int:
        total = OPENAI_REPLY_PRIMING
        for msg in check_messages(messages):
            total += OPENAI_TOKENS_PER_MESSAGE
            for key, value in msg.items():
                total += self.count(value)
                if key == "name":
                    total += OPENAI_TOKENS_PER_NAME
        return total

    def count_request(self, request: Mapping[str, Any], api: str) -> TokenCount:
        """A whole request by OpenAI's per-message rule (any role, tool calls and schemas as text).

        Exact for plain chat text on a model of this encoding; tool calls, schemas and media make it
        approximate (OpenAI does not publish how it renders them).
        """
        billed = billed_request(request, api)
        tokens = OPENAI_REPLY_PRIMING
        for turn in billed.turns:
            tokens += OPENAI_TOKENS_PER_MESSAGE + self.count(turn.role) + self.count(turn.text)
            if turn.name is not None:
                tokens += OPENAI_TOKENS_PER_NAME + self.count(turn.name)
        if billed.tools:
            tokens += self.count(billed.tools)
        tokens += billed.media_parts * MEDIA_PART_TOKENS
        notes = list(billed.approximate)
        if not self._exact:
            notes.insert(0, self.note or f"{self.name} is not the model's own encoding")
        return TokenCount(tokens, not notes, tuple(notes))

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self._encoding.name!r}, exact={self._exact})"


def openai_tokenizer(model: str) -> TiktokenTokenizer:
    """The offline tokenizer for an OpenAI model id: exact for ``cl100k_base`` models, else approximate.

    >>> openai_tokenizer("gpt-4").exact, openai_tokenizer("gpt-4o-mini").exact
    (True, False)
    """
    tk = import_tiktoken()
    try:
        encoding = str(tk.encoding_name_for_model(model))  # a table lookup, no network
    except KeyError:
        encoding = "unknown"
    if encoding == "cl100k_base":
        return TiktokenTokenizer("cl100k_base")
    return TiktokenTokenizer(
        "cl100k_base", exact=False, note=f"{model} uses {encoding}, which is not available offline"
    )
