"""llama.cpp's own tokenizer for a local model: counts equal what llama.cpp evaluates.

>>> from litm.models import load_model
>>> load_model("local:smollm2").tokenizer.count("Lost in the middle")     # doctest: +SKIP
4
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from litm.prompt._messages import Message

__all__ = ["LlamaTokenizer"]


class _Source(Protocol):
    """What the tokenizer needs of its model (a :class:`~litm.models._local.LocalModel`)."""

    name: str

    def tokenize(self, text: str, *, add_bos: bool) -> list[int]: ...

    def render_messages(self, messages: Sequence[Message]) -> str: ...


class LlamaTokenizer:
    """llama.cpp's own tokenizer for a :class:`~litm.models._local.LocalModel`: counts are exact.

    ``count(text)`` is what llama.cpp evaluates for a completion prompt (BOS included when the model adds
    one; special-token text such as ``<start_of_turn>`` parsed as special, as llama.cpp does);
    ``count_messages`` renders the GGUF's chat template with the reply header first.
    """

    #: Counts are exact, so budgets add nothing.
    margin = 0.0

    def __init__(self, model: _Source) -> None:
        self._model = model

    @property
    def name(self) -> str:
        return f"llama.cpp:{self._model.name}"

    @property
    def exact(self) -> bool:
        return True

    def encode(self, text: str) -> list[int]:
        return self._model.tokenize(text, add_bos=True)

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def render_messages(self, messages: Sequence[Message]) -> str:
        """The prompt text the model's chat template makes of ``messages`` (reply header included)."""
        return self._model.render_messages(messages)

    def encode_messages(self, messages: Sequence[Message]) -> list[int]:
        # As llama.cpp's chat handler does: the template writes any BOS itself, so none is added.
        return self._model.tokenize(self.render_messages(messages), add_bos=False)

    def count_messages(self, messages: Sequence[Message]) -> int:
        return len(self.encode_messages(messages))

    def __repr__(self) -> str:
        return f"LlamaTokenizer({self._model.name!r})"
