"""The provider-shape fix-up: where a compacted history's summary and instruction go, per request shape.

Each API has its own rules for a valid request, and a compacted history must keep them:

* **OpenAI Chat Completions** (``"openai-chat"``): leading ``system`` / ``developer`` messages stay first;
  the summary is one message after them (role ``system`` by default, or ``user``); the repeated
  instruction is a final ``system`` message. Units guarantee no ``tool`` message without its call.
* **OpenAI Responses** (``"openai-responses"``): the same, over the ``input`` items (``instructions``
  is left as it is).
* **Anthropic Messages** (``"anthropic"``): ``messages`` holds only user and assistant turns and the first
  is a user turn, so the summary goes into ``system`` (appended as a text block when ``system`` is a list,
  which keeps earlier ``cache_control`` breakpoints valid) or, with ``summary_role="user"``, into the first
  kept user turn. When the kept turns begin with an assistant turn (a tool call, say), the summary is sent
  as a user turn before it instead, because the API needs one there. The repeated instruction is appended
  as a text block to the last user turn (after any ``tool_result`` blocks, as the API requires).

Example:
    >>> shape = shape_of("anthropic")
    >>> parts = Parts([], "user: find a flight", [{"role": "user", "content": "Any cheaper?"}])
    >>> req = shape.assemble({"system": "Be brief.", "messages": []}, parts)
    >>> print(req["system"])
    Be brief.
    <BLANKLINE>
    Summary of the earlier conversation (state so far):
    user: find a flight
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from litm.budget._history.summary import SUMMARY_PREFIX
from litm.budget._history.units import is_tool_result
from litm.errors import InvalidOptionError, PromptError

__all__ = ["SHAPES", "SUMMARY_ROLES", "Parts", "Shape", "shape_of"]

Message = dict[str, Any]
SUMMARY_ROLES = ("system", "user")

#: What a compacted Anthropic history opens with when the kept turns begin with an assistant turn and the
#: summary had to be left out to fit: the API needs a user turn first.
_OMITTED = f"{SUMMARY_PREFIX}\n(left out to fit the token budget)"


def _summary_text(summary: str | None) -> str | None:
    return f"{SUMMARY_PREFIX}\n{summary}" if summary else None


@dataclass(frozen=True)
class Parts:
    """A compacted conversation: ``head`` (kept first), the ``summary`` (None: nothing was left out; "": left
    out without one), the kept ``items``, the ``instruction`` to repeat last, and where the summary goes."""

    head: list[Message]
    summary: str | None
    items: list[Message]
    instruction: str | None = None
    summary_role: str = "system"


class Shape:
    """How one request shape holds a conversation: which key, what stays first, where a summary goes."""

    api: str = ""
    key: str = "messages"

    def split(self, request: Mapping[str, object]) -> tuple[list[Message], list[Message]]:
        """The messages that always stay first (system and developer turns), and the rest."""
        messages = _as_messages(request.get(self.key), self.api, self.key)
        head = 0
        while head < len(messages) and messages[head].get("role") in ("system", "developer"):
            head += 1
        return messages[:head], messages[head:]

    def cuts(self, items: Sequence[Message], starts: Sequence[int]) -> list[int]:
        """Which unit boundaries the kept turns may start at (``starts[u]`` is unit ``u``'s first message)."""
        return list(range(1, len(starts)))

    def assemble(self, request: Mapping[str, object], parts: Parts) -> dict[str, Any]:
        """``request`` carrying ``parts`` as its conversation, every other field as it was."""
        text = _summary_text(parts.summary)
        middle = [{"role": parts.summary_role, "content": text}] if text else []
        tail = [{"role": "system", "content": parts.instruction}] if parts.instruction else []
        return {**request, self.key: [*parts.head, *middle, *parts.items, *tail]}


class OpenAIChat(Shape):
    api = "openai-chat"


class OpenAIResponses(Shape):
    api = "openai-responses"
    key = "input"

    def split(self, request: Mapping[str, object]) -> tuple[list[Message], list[Message]]:
        if isinstance(request.get("input"), str):
            # A plain string is one user turn: the same request, in the list form a summary can join.
            return [], [{"role": "user", "content": request["input"]}]
        return super().split(request)


class Anthropic(Shape):
    api = "anthropic"

    def split(self, request: Mapping[str, object]) -> tuple[list[Message], list[Message]]:
        # The system prompt is a request field here, never a message.
        return [], _as_messages(request.get("messages"), self.api, "messages")

    def cuts(self, items: Sequence[Message], starts: Sequence[int]) -> list[int]:
        # Kept turns that begin with one of the user's own turns read as a conversation, with the summary in
        # system. A pure agent loop has no such turn after the task, so there any unit may begin the kept
        # turns, and the summary becomes the user turn the API needs first.
        own = [u for u in range(1, len(starts) - 1) if _user_text(items[starts[u]])]
        return [*own, len(starts) - 1] if own else super().cuts(items, starts)

    def assemble(self, request: Mapping[str, object], parts: Parts) -> dict[str, Any]:
        out = [dict(m) for m in parts.items]
        system = request.get("system")
        opens_with_user = bool(out) and _user_text(out[0])
        instruction = parts.instruction
        if parts.summary is not None:
            text = _summary_text(parts.summary)
            if not opens_with_user:
                out.insert(0, {"role": "user", "content": text or _OMITTED})
            elif text and parts.summary_role == "system":
                system = _append_system(system, text)
            elif text:
                out[0]["content"] = _join_text(text, out[0].get("content"))
        if instruction:
            last_user = max((i for i, m in enumerate(out) if m.get("role") == "user"), default=None)
            if last_user is None:
                out.append({"role": "user", "content": instruction})
            else:
                out[last_user]["content"] = _join_text(out[last_user].get("content"), instruction)
        rebuilt = {**request, "messages": out}
        if system is not None:
            rebuilt["system"] = system
        return rebuilt


SHAPES: dict[str, Shape] = {s.api: s for s in (OpenAIChat(), OpenAIResponses(), Anthropic())}


def shape_of(api: str) -> Shape:
    """The :class:`Shape` of a request shape name; :class:`~litm.errors.InvalidOptionError` if unknown."""
    if api not in SHAPES:
        raise InvalidOptionError(f"unknown request shape {api!r}; choose from {', '.join(SHAPES)}")
    return SHAPES[api]


def _as_messages(value: object, api: str, key: str) -> list[Message]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise PromptError(f"an {api} request needs {key}=[...] (a list of messages), got {type(value).__name__}")
    for i, m in enumerate(value):
        if not isinstance(m, Mapping):
            raise PromptError(f"message {i} is a {type(m).__name__}, not a dict")
    return [dict(m) for m in value]


def _user_text(message: Mapping[str, object]) -> bool:
    return message.get("role") == "user" and not is_tool_result(message)


def _append_system(system: object, text: str) -> object:
    if system is None or system == "":
        return text
    if isinstance(system, str):
        return f"{system}\n\n{text}"
    if isinstance(system, list):
        return [*system, {"type": "text", "text": text}]
    raise PromptError(f"system must be a string or a list of text blocks, got {type(system).__name__}")


def _join_text(first: object, second: object) -> object:
    """Two message contents as one: strings join with a blank line; block lists gain a text block."""
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}"
    blocks: list[object] = []
    for part in (first, second):
        if isinstance(part, list):
            blocks.extend(part)
        elif part:
            blocks.append({"type": "text", "text": str(part)})
    return blocks
