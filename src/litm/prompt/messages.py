"""The chat message model: what a chat message is, and the check a model applies before generating.

A message is a mapping in the shape the provider APIs take (``{"role": ..., "content": ...}``). For
generation through a chat template litm needs plain-text turns, which :func:`check_messages` validates;
counting what an API bills (tool calls, content blocks) reads richer shapes.

Example:
    >>> check_messages([{"role": "user", "content": "hi"}])
    [{'role': 'user', 'content': 'hi'}]
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from litm.errors import PromptError

__all__ = [
    "APIS",
    "MEDIA_PART_TOKENS",
    "ROLES",
    "Api",
    "BilledRequest",
    "Message",
    "Turn",
    "billed_request",
    "check_messages",
    "is_messages",
]

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




# -- what a provider request bills ----------------------------------------------------------------------

#: The request shapes litm can count: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages.
Api = Literal["openai-chat", "openai-responses", "anthropic"]
APIS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic")

#: Tokens assumed for one image, audio clip or file part whose size litm cannot see. An upper bound of what
#: the providers document for one image at their default detail (OpenAI: 85 + 170 per 512-px tile, at most
#: 6 tiles after resizing, 1,105; Anthropic: about width x height / 750, at most about 1,600); it is an
#: estimate, so any request with such a part is counted as approximate.
MEDIA_PART_TOKENS = 1_600


@dataclass(frozen=True)
class Turn:
    """One message as it is billed: its role, the text the model reads, and an optional ``name``."""

    role: str
    text: str
    name: str | None = None


@dataclass(frozen=True)
class BilledRequest:
    """The text of a request that a provider bills as input, normalised across API shapes.

    ``turns`` are the messages in order (system text first, as a ``system`` turn); ``tools`` is the tool
    schemas as JSON text (providers render them into the prompt in a way they do not publish);
    ``media_parts`` counts images, audio and files (see :data:`MEDIA_PART_TOKENS`). ``approximate``
    names every reason a tokenizer cannot reproduce the provider's own count (tool calls and schemas,
    media, reasoning items); empty means the request is plain chat text.
    """

    turns: tuple[Turn, ...]
    tools: str | None = None
    media_parts: int = 0
    approximate: tuple[str, ...] = ()

    @property
    def plain(self) -> bool:
        """True when the request is plain chat text that a chat tokenizer counts as the provider does."""
        return not self.approximate


class _Collector:
    def __init__(self, api: str) -> None:
        self.api = api
        self.turns: list[Turn] = []
        self.media = 0
        self.reasons: dict[str, None] = {}
        self.tools_text: str | None = None

    def note(self, reason: str) -> None:
        self.reasons.setdefault(reason, None)

    def add(self, role: str, parts: list[str], name: object = None) -> None:
        self.turns.append(Turn(role, "\n".join(p for p in parts if p), None if name is None else str(name)))

    def blocks(self, content: object, where: str) -> list[str]:
        """The billed text of a message content: a string, None, or a list of typed blocks / parts."""
        if content is None:
            return []
        if isinstance(content, str):
            return [content]
        if not isinstance(content, Sequence) or isinstance(content, bytes):
            raise PromptError(f"{where}: content must be a string or a list of blocks, got {type(content).__name__}")
        out: list[str] = []
        for j, block in enumerate(content):
            out.extend(self.block(block, f"{where} block {j}"))
        return out

    def block(self, block: object, where: str) -> list[str]:
        if isinstance(block, str):
            return [block]
        if not isinstance(block, Mapping):
            raise PromptError(f"{where} is a {type(block).__name__}, not a dict with a 'type'")
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text"):
            return [_text_field(block, "text", where)]
        if kind in ("image", "image_url", "input_image", "input_audio", "input_file", "file", "document", "audio"):
            self.media += 1
            self.note(f"{kind} parts are counted as {MEDIA_PART_TOKENS} tokens each (an upper-bound estimate)")
            return [_text_field(block, "text", where)] if isinstance(block.get("text"), str) else []
        if kind == "tool_use":
            self.note("tool calls are counted as their name and JSON arguments")
            return [str(block.get("name", "")), _json(block.get("input", {}))]
        if kind == "tool_result":
            self.note("tool results are counted as their text")
            return self.blocks(block.get("content"), where)
        if kind in ("thinking", "redacted_thinking"):
            self.note("thinking blocks are counted as their text")
            return [str(block.get("thinking") or block.get("data") or "")]
        if isinstance(block.get("text"), str):
            self.note(f"{kind!r} blocks are counted as their text")
            return [block["text"]]
        raise PromptError(f"{where} has type {kind!r}, which litm cannot count; refusing rather than guessing")


def _text_field(block: Mapping[str, Any], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise PromptError(f"{where}: {key!r} must be a string, got {type(value).__name__}")
    return value


def _json(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _tools(tools: object, c: _Collector) -> str | None:
    if tools is None:
        return None
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        raise PromptError(f"tools must be a list of tool definitions, got {type(tools).__name__}")
    if not tools:
        return None
    c.note("tool schemas are counted as their JSON (providers do not publish how they render them)")
    return "\n".join(_json(t) for t in tools)


def _openai_chat(request: Mapping[str, Any], c: _Collector) -> None:
    messages = request.get("messages")
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes) or not messages:
        raise PromptError("an OpenAI chat request needs messages=[...] with at least one message")
    for i, msg in enumerate(messages):
        where = f"message {i}"
        if not isinstance(msg, Mapping):
            raise PromptError(f"{where} is a {type(msg).__name__}, not a dict with 'role' and 'content'")
        role = msg.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool", "function"):
            raise PromptError(f"{where} has role {role!r}; expected system, developer, user, assistant or tool")
        parts = c.blocks(msg.get("content"), where)
        calls = msg.get("tool_calls") or []
        if msg.get("function_call"):
            calls = [*calls, {"function": msg["function_call"]}]
        for call in calls:
            c.note("tool calls are counted as their name and JSON arguments")
            fn = call.get("function", {}) if isinstance(call, Mapping) else {}
            parts += [str(fn.get("name", "")), _json(fn.get("arguments", ""))]
        if role in ("tool", "function"):
            c.note("tool results are counted as their text")
        c.add(str(role), parts, msg.get("name"))
    functions = request.get("functions")
    if functions:
        c.note("function schemas are counted as their JSON")
    c.tools_text = _tools([*(request.get("tools") or []), *(functions or [])] or None, c)


def _openai_responses(request: Mapping[str, Any], c: _Collector) -> None:
    for key in ("previous_response_id", "conversation", "prompt"):
        if request.get(key):
            raise PromptError(
                f"a Responses request with {key}= draws input stored on OpenAI's side, which litm cannot count; "
                "send the full input instead"
            )
    instructions = request.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise PromptError(f"instructions must be a string, got {type(instructions).__name__}")
        c.add("developer", [instructions])
    items = request.get("input")
    if isinstance(items, str):
        c.add("user", [items])
    elif isinstance(items, Sequence) and not isinstance(items, bytes) and items:
        for i, item in enumerate(items):
            where = f"input item {i}"
            if isinstance(item, str):
                c.add("user", [item])
                continue
            if not isinstance(item, Mapping):
                raise PromptError(f"{where} is a {type(item).__name__}, not a dict")
            kind = item.get("type", "message")
            if kind == "message" or "role" in item:
                c.add(str(item.get("role", "user")), c.blocks(item.get("content"), where))
            elif kind == "function_call":
                c.note("tool calls are counted as their name and JSON arguments")
                c.add("assistant", [str(item.get("name", "")), _json(item.get("arguments", ""))])
            elif kind == "function_call_output":
                c.note("tool results are counted as their text")
                c.add("tool", [_json(item.get("output", ""))])
            elif kind == "reasoning":
                c.note("reasoning items are counted as their summary text")
                summary = [s for s in item.get("summary") or [] if isinstance(s, Mapping)]
                c.add("assistant", [str(s.get("text", "")) for s in summary])
            else:
                raise PromptError(f"{where} has type {kind!r}, which litm cannot count; refusing rather than guessing")
    else:
        raise PromptError("a Responses request needs input= (a string or a non-empty list of items)")
    c.tools_text = _tools(request.get("tools"), c)


def _anthropic(request: Mapping[str, Any], c: _Collector) -> None:
    system = request.get("system")
    if system is not None:
        c.add("system", c.blocks(system, "system"))
    messages = request.get("messages")
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes) or not messages:
        raise PromptError("an Anthropic request needs messages=[...] with at least one message")
    for i, msg in enumerate(messages):
        where = f"message {i}"
        if not isinstance(msg, Mapping):
            raise PromptError(f"{where} is a {type(msg).__name__}, not a dict with 'role' and 'content'")
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise PromptError(f"{where} has role {role!r}; the Messages API takes user and assistant (system apart)")
        c.add(str(role), c.blocks(msg.get("content"), where))
    c.tools_text = _tools(request.get("tools"), c)


def billed_request(request: Mapping[str, Any], api: str) -> BilledRequest:
    """The billed input text of a provider request (the keyword arguments of the SDK call).

    Raises :class:`~litm.errors.PromptError` naming the first part it cannot read: a malformed message, an
    unknown block type, or input stored on the provider's side (``previous_response_id``); a budget that
    cannot count a request refuses it rather than guessing.

    Example:
        >>> r = billed_request({"messages": [
        ...     {"role": "user", "content": "Weather in Paris?"},
        ...     {"role": "assistant", "content": None, "tool_calls": [
        ...         {"id": "c1", "type": "function",
        ...          "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}]},
        ...     {"role": "tool", "tool_call_id": "c1", "content": "18 C, sunny"}]}, "openai-chat")
        >>> [(t.role, t.text) for t in r.turns]
        [('user', 'Weather in Paris?'), ('assistant', 'weather\\n{"city":"Paris"}'), ('tool', '18 C, sunny')]
        >>> r.plain
        False
    """
    if not isinstance(request, Mapping):
        raise PromptError(f"a request is a dict of the SDK call's arguments, got {type(request).__name__}")
    readers = {"openai-chat": _openai_chat, "openai-responses": _openai_responses, "anthropic": _anthropic}
    if api not in readers:
        raise PromptError(f"unknown request shape {api!r}; choose from {', '.join(APIS)}")
    c = _Collector(api)
    readers[api](request, c)
    return BilledRequest(tuple(c.turns), c.tools_text, c.media, tuple(c.reasons))
