"""One way to count tokens, whatever the caller hands the gate: a litm model, a tokenizer, or a function.

The gate only needs two operations, "count this text" and "count these chat messages (with their
format overhead)". Models and tokenizers from :mod:`litm.models` / :mod:`litm.tokens` provide them
under a few names; plain callables are accepted for tests and for users with their own tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from litm.errors import LitmError

__all__ = ["Counter", "as_counter"]

Message = dict[str, Any]


@dataclass
class Counter:
    """Counts text and messages, and remembers how many times it was asked (benchmarks report it)."""

    text_fn: Callable[[str], int]
    messages_fn: Callable[[Sequence[Message]], int] | None = None
    calls: int = 0

    def text(self, text: str) -> int:
        self.calls += 1
        return int(self.text_fn(text))

    def messages(self, messages: Sequence[Message]) -> int:
        self.calls += 1
        if self.messages_fn is not None:
            return int(self.messages_fn(messages))
        # Without a chat-format counter, count the concatenated contents; the docs say this is approximate.
        return int(self.text_fn("\n".join(_content_text(m) for m in messages)))


def _content_text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                parts.append(str(block.get("text") or block.get("content") or ""))
            else:
                parts.append(str(block))
        return "\n".join(parts)
    return "" if content is None else str(content)


def as_counter(obj: Any) -> Counter:
    """Adapt a model, tokenizer, :class:`Counter` or ``callable(text) -> int`` to a :class:`Counter`."""
    if isinstance(obj, Counter):
        return obj
    text_fn: Callable[[str], int] | None = None
    messages_fn: Callable[[Sequence[Message]], int] | None = None
    for name in ("count_text", "count"):
        fn = getattr(obj, name, None)
        if callable(fn):
            text_fn = fn
            break
    for name in ("count_messages",):
        fn = getattr(obj, name, None)
        if callable(fn):
            messages_fn = fn
            break
    generic = getattr(obj, "count_tokens", None)
    if callable(generic):
        # Model.count_tokens accepts a prompt string or a message list.
        text_fn = text_fn or generic
        messages_fn = messages_fn or generic
    if text_fn is None and callable(obj) and not isinstance(obj, type):
        text_fn = obj
    if text_fn is None:
        raise LitmError(
            f"cannot count tokens with a {type(obj).__name__}: pass a litm model, a litm tokenizer, "
            "or a function text -> token count"
        )
    return Counter(text_fn=text_fn, messages_fn=messages_fn)
