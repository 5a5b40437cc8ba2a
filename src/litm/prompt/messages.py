"""The chat message model: what a chat message is, and the check a model applies before generating.

A message is a mapping in the shape the provider APIs take (``{"role": ..., "content": ...}``). For
generation through a chat template litm needs plain-text turns, which :func:`check_messages` validates;
counting what an API bills (tool calls, content blocks) reads richer shapes.

Example:
    >>> check_messages([{"role": "user", "content": "hi"}])
    [{'role': 'user', 'content': 'hi'}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from litm.errors import PromptError

__all__ = ["ROLES", "Message", "check_messages", "is_messages"]

#: One chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}`` (``name`` optional).
Message: TypeAlias = Mapping[str, Any]

#: The roles a plain-text chat turn may have.
ROLES = ("system", "user", "assistant")


def is_messages(prompt: object) -> bool:
    """True when ``prompt`` is a sequence of chat messages rather than a plain string.

    >>> is_messages("hi"), is_messages([{"role": "user", "content": "hi"}])
    (False, True)
    """
    return not isinstance(prompt, str | bytes) and isinstance(prompt, Sequence)


def check_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Validate chat messages and return them as plain dicts (``role``, ``content``, optional ``name``).

    Raises :class:`~litm.errors.PromptError` naming the first bad message: not a mapping, an unknown
    role, or non-string content.

    >>> check_messages([{"role": "user", "content": "hi"}])
    [{'role': 'user', 'content': 'hi'}]
    """
    if not messages:
        raise PromptError("no messages: pass at least one {'role': 'user', 'content': ...} message")
    out: list[dict[str, str]] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, Mapping):
            raise PromptError(f"message {i} is a {type(msg).__name__}, not a dict with 'role' and 'content'")
        role, content = msg.get("role"), msg.get("content")
        if role not in ROLES:
            raise PromptError(f"message {i} has role {role!r}; expected one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise PromptError(f"message {i} content is {type(content).__name__}, not text")
        item = {"role": str(role), "content": content}
        name = msg.get("name")
        if name is not None:
            item["name"] = str(name)
        out.append(item)
    return out


