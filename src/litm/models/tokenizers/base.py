"""The :class:`Tokenizer` protocol, and counting whole provider requests with any tokenizer.

A tokenizer counts text and plain chat messages the way one model does and says whether exactly.
:func:`count_request` counts what a provider bills for a whole request (tool calls, tool results, content
blocks, tool schemas, system blocks) and returns a :class:`TokenCount` that says whether the number is
exact; the budget layer adds a safety margin whenever it is not.

Example:
    >>> from litm.models.tokenizers.bpe import TiktokenTokenizer
    >>> tok = TiktokenTokenizer()
    >>> isinstance(tok, Tokenizer)
    True
    >>> count_request(tok, {"messages": [{"role": "user", "content": "hi"}]}, "openai-chat")
    TokenCount(tokens=8, exact=True, notes=())
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from litm.prompt.messages import MEDIA_PART_TOKENS, ROLES, BilledRequest, Message, billed_request

__all__ = ["TokenCount", "Tokenizer", "count_billed", "count_request"]


@dataclass(frozen=True)
class TokenCount:
    """A token count and whether it equals the provider's own; ``notes`` say why not, when it does not."""

    tokens: int
    exact: bool
    notes: tuple[str, ...] = ()


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


def count_request(tokenizer: Tokenizer, request: Mapping[str, Any], api: str) -> TokenCount:
    """Tokens a provider bills as input for ``request`` (the SDK call's keyword arguments), and whether exactly.

    ``api`` is the request shape: ``"openai-chat"``, ``"openai-responses"`` or ``"anthropic"``. A tokenizer
    that can count whole requests itself (a ``count_request(request, api)`` method, e.g. Anthropic's
    ``count_tokens`` endpoint) does; otherwise the request is read with
    :func:`~litm.prompt.messages.billed_request` and counted with :func:`count_billed`.
    """
    native = getattr(tokenizer, "count_request", None)
    if callable(native):
        result = native(request, api)
        if not isinstance(result, TokenCount):
            raise TypeError(f"{type(tokenizer).__name__}.count_request must return a TokenCount")
        return result
    return count_billed(tokenizer, billed_request(request, api))


def count_billed(tokenizer: Tokenizer, billed: BilledRequest) -> TokenCount:
    """Count a normalised request with a chat tokenizer: its turns as chat messages, plus tools and media.

    Turns whose role a chat template may not know (``developer``, ``tool``) are counted as ``system`` and
    ``user`` turns, which makes the count approximate.
    """
    notes = list(billed.approximate)
    messages: list[dict[str, str]] = []
    for turn in billed.turns:
        role = turn.role if turn.role in ROLES else ("system" if turn.role == "developer" else "user")
        if role != turn.role:
            notes.append(f"{turn.role!r} turns are counted as {role!r} turns")
        msg = {"role": role, "content": turn.text}
        if turn.name is not None:
            msg["name"] = turn.name
        messages.append(msg)
    tokens = tokenizer.count_messages(messages) if messages else 0
    if billed.tools:
        tokens += tokenizer.count(billed.tools)
    tokens += billed.media_parts * MEDIA_PART_TOKENS
    notes = list(dict.fromkeys(notes))
    if not tokenizer.exact:
        notes.insert(0, f"{tokenizer.name} is not the model's own tokenizer")
    return TokenCount(tokens, tokenizer.exact and not notes, tuple(notes))
