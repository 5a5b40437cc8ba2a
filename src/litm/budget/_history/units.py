"""Units of a conversation: the messages that must be kept or summarised together.

A provider rejects a history where a tool call is separated from its results, so an assistant turn that
calls tools and the results that answer it form one unit, in all three request shapes:

* OpenAI Chat Completions: an ``assistant`` message with ``tool_calls`` (or a legacy ``function_call``)
  and the ``role: "tool"`` / ``"function"`` messages after it;
* Anthropic Messages: an ``assistant`` message with ``tool_use`` blocks and the ``user`` message of
  ``tool_result`` blocks after it;
* OpenAI Responses: ``reasoning`` and ``function_call`` items and the ``function_call_output`` items after
  them (a reasoning item must travel with the call it led to).

The keys of the three shapes do not collide, so one set of predicates reads them all.

Example:
    >>> msgs = [{"role": "user", "content": "Weather?"},
    ...         {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
    ...         {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
    ...         {"role": "assistant", "content": "It is 18 C."}]
    >>> group_units(msgs)
    [(0,), (1, 2), (3,)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["Unit", "content_text", "group_units", "is_tool_call", "is_tool_result", "is_user_side", "last_turn"]

#: Indices of the messages of one unit, in order.
Unit = tuple[int, ...]


def _blocks(message: Mapping[str, object]) -> list[Mapping[str, object]]:
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    return []


def is_tool_call(message: Mapping[str, object]) -> bool:
    """An assistant turn that calls tools (or a Responses item that belongs to a call)."""
    if message.get("type") in ("function_call", "reasoning"):
        return True
    if message.get("role") != "assistant":
        return False
    if message.get("tool_calls") or message.get("function_call"):
        return True
    return any(b.get("type") == "tool_use" for b in _blocks(message))


def is_tool_result(message: Mapping[str, object]) -> bool:
    """A message that answers a tool call."""
    if message.get("type") == "function_call_output" or message.get("role") in ("tool", "function"):
        return True
    return message.get("role") == "user" and any(b.get("type") == "tool_result" for b in _blocks(message))


def is_user_side(message: Mapping[str, object]) -> bool:
    """Sent by the user's side of the conversation: a user turn or a tool result."""
    return message.get("role") == "user" or is_tool_result(message)


def group_units(messages: Sequence[Mapping[str, object]]) -> list[Unit]:
    """Group messages into units: a tool-call turn (with any directly following calls) plus its results."""
    units: list[Unit] = []
    i = 0
    while i < len(messages):
        j = i + 1
        if is_tool_call(messages[i]):
            while j < len(messages) and is_tool_call(messages[j]):
                j += 1
            while j < len(messages) and is_tool_result(messages[j]):
                j += 1
        units.append(tuple(range(i, j)))
        i = j
    return units


def last_turn(messages: Sequence[Mapping[str, object]], units: Sequence[Unit]) -> int:
    """The index of the unit where the latest turn starts: the last one with a user message or tool result.

    What follows it (an assistant prefill, say) belongs to the same turn; compaction always keeps it.
    """
    for u in range(len(units) - 1, -1, -1):
        if any(is_user_side(messages[i]) for i in units[u]):
            return u
    return max(len(units) - 1, 0)


def content_text(content: object) -> str:
    """The readable text of a message content: a string, or the text of its blocks (tool results included)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                text = block.get("text")
                parts.append(text if isinstance(text, str) else content_text(block.get("content")))
        return "\n".join(p for p in parts if p)
    return str(content)
