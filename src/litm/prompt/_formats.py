"""Output formats: one rendered (system, user) pair wrapped for each consumer.

Every format receives the same two strings, produced once by the builder, so the content a model
sees is identical whichever format you choose; only the wrapping differs:

=========== =================================================================================
text        ``system``, a blank line, ``user``, then the answer cue (a plain completion prompt)
openai      ``[{"role": "system", ...}, {"role": "user", ...}]`` (Chat Completions messages)
anthropic   ``{"system": ..., "messages": [{"role": "user", ...}]}`` (Messages API arguments)
chatml      ``<|im_start|>system ... <|im_end|>`` turns, ending with an open assistant turn
jinja       a model's own chat template (:class:`~litm.prompt.ChatTemplate`)
=========== =================================================================================

Example:
    >>> to_chatml(None, "hi")
    '<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
    >>> to_text("Be brief.", "Question: why?", "Answer:")
    'Be brief.\\n\\nQuestion: why?\\nAnswer:'
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from litm.errors import PromptError
from litm.prompt._chat_template import ChatTemplate

__all__ = [
    "FORMATS",
    "AnthropicArgs",
    "Format",
    "StringFormat",
    "check_format",
    "to_anthropic",
    "to_chatml",
    "to_jinja",
    "to_openai",
    "to_text",
]

Format = Literal["text", "openai", "anthropic", "chatml", "jinja"]
#: The formats whose rendering is one string.
StringFormat = Literal["text", "chatml", "jinja"]
FORMATS: tuple[str, ...] = ("text", "openai", "anthropic", "chatml", "jinja")


class AnthropicArgs(TypedDict):
    """Anthropic Messages API keyword arguments: ``client.messages.create(model=..., **args)``."""

    system: NotRequired[str]
    messages: list[dict[str, str]]


def check_format(name: object) -> str:
    """Return ``name`` if it is a known format, else raise :class:`~litm.errors.PromptError`."""
    if not isinstance(name, str) or name not in FORMATS:
        raise PromptError(f"unknown prompt format {name!r}; choose from {', '.join(FORMATS)}")
    return name


def to_text(system: str | None, user: str, answer_cue: str | None) -> str:
    """A plain completion prompt: system text, the user content, and the cue on its own line."""
    body = f"{user}\n{answer_cue}" if answer_cue else user
    return f"{system}\n\n{body}" if system else body


def to_openai(system: str | None, user: str) -> list[dict[str, str]]:
    """OpenAI Chat Completions ``messages``: an optional system message, then the user message."""
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": user})
    return messages


def to_anthropic(system: str | None, user: str, *, prefill: str | None = None) -> AnthropicArgs:
    """Anthropic Messages API keyword arguments: ``system`` (when set) and ``messages``; ``prefill`` (when set)
    is a final assistant turn the reply continues (the API refuses one that ends in whitespace)."""
    messages = [{"role": "user", "content": user}]
    if prefill and prefill.rstrip():
        messages.append({"role": "assistant", "content": prefill.rstrip()})
    return {"system": system, "messages": messages} if system else {"messages": messages}


def to_chatml(system: str | None, user: str, *, add_generation_prompt: bool = True) -> str:
    """A ChatML string (Qwen, SmolLM, Hermes, ...), ending with an open assistant turn by default."""
    turns = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in to_openai(system, user)]
    if add_generation_prompt:
        turns.append("<|im_start|>assistant\n")
    return "".join(turns)


def to_jinja(
    template: ChatTemplate, system: str | None, user: str, *, add_generation_prompt: bool = True
) -> str:
    """The prompt string a model's own chat template produces for these messages."""
    return template.render(to_openai(system, user), add_generation_prompt=add_generation_prompt)
