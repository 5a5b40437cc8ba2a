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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from litm.errors import PromptError

__all__ = [
    "APIS",
    "MEDIA_PART_TOKENS",
    "OPENAI_IMAGE_BOUNDS",
    "ROLES",
    "Api",
    "BilledRequest",
    "Message",
    "Turn",
    "billed_request",
    "check_messages",
    "image_token_bound",
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


def check_messages(messages: Sequence[Message], roles: Sequence[str] | None = ROLES) -> list[dict[str, str]]:
    """Validate chat messages and return them as plain dicts (``role``, ``content``, optional ``name``).

    Raises :class:`~litm.errors.PromptError` naming the first bad message: not a mapping, a role not in
    ``roles`` (``None`` accepts any non-empty role, for formats that count the role as text), or
    non-string content.

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
        if roles is None and not (isinstance(role, str) and role):
            raise PromptError(f"message {i} has role {role!r}; expected a non-empty string")
        if roles is not None and role not in roles:
            raise PromptError(f"message {i} has role {role!r}; expected one of {', '.join(roles)}")
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

#: Tokens assumed for one image whose size litm cannot see, for Anthropic and for OpenAI's tile-priced models:
#: an upper bound of what the providers document for one image (Anthropic: about width x height / 750 after
#: resizing to at most about 1.15 megapixels, about 1,600; OpenAI GPT-4o/4.1/5 and o-series: at most
#: 85 + 170 per 512-px tile with at most 8 tiles, 1,445). Any request with an image is approximate.
MEDIA_PART_TOKENS = 1_600

#: OpenAI models that bill an image as more tokens than :data:`MEDIA_PART_TOKENS` (model id prefix, bound):
#: GPT-4o mini prices a 512-px tile at 5,667 tokens plus 2,833 (8 tiles at most); the patch-priced mini and
#: nano models bill at most 1,536 32-px patches times a multiplier of at most 2.46.
OPENAI_IMAGE_BOUNDS: tuple[tuple[str, int], ...] = (
    ("gpt-4o-mini", 2_833 + 5_667 * 8),
    ("gpt-4.1-mini", 3_779),
    ("gpt-4.1-nano", 3_779),
    ("gpt-5-mini", 3_779),
    ("gpt-5-nano", 3_779),
    ("o4-mini", 3_779),
    ("gpt-4", MEDIA_PART_TOKENS),
    ("gpt-5", MEDIA_PART_TOKENS),
    ("o1", MEDIA_PART_TOKENS),
    ("o3", MEDIA_PART_TOKENS),
)


def image_token_bound(api: str, model: str | None) -> int:
    """Tokens one image may cost at most for ``model`` (fail-closed: the largest bound for an unknown model).

    >>> image_token_bound("anthropic", "claude-haiku-4-5"), image_token_bound("openai-chat", "gpt-4o-mini")
    (1600, 48169)
    """
    if api == "anthropic":
        return MEDIA_PART_TOKENS
    for prefix, bound in OPENAI_IMAGE_BOUNDS:
        if model and model.startswith(prefix):
            return bound
    return max(bound for _, bound in OPENAI_IMAGE_BOUNDS)


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
    ``tool_calls`` and ``tool_results`` count the calls and results inside the turns (their text is in
    the turns; the wrapper tokens around each are not published); ``media_parts`` counts images and
    ``media_tokens`` is their upper bound (see :func:`image_token_bound`). ``approximate`` names every
    reason a tokenizer cannot reproduce the provider's own count; empty means plain chat text.
    """

    turns: tuple[Turn, ...]
    tools: str | None = None
    media_parts: int = 0
    approximate: tuple[str, ...] = ()
    tool_calls: int = 0
    tool_results: int = 0
    media_tokens: int = 0
    api: str = "openai-chat"
    model: str | None = None

    @property
    def plain(self) -> bool:
        """True when the request is plain chat text that a chat tokenizer counts as the provider does."""
        return not self.approximate


class _Collector:
    def __init__(self, api: str, model: str | None) -> None:
        self.api = api
        self.model = model
        self.turns: list[Turn] = []
        self.media = 0
        self.media_tokens = 0
        self.calls = 0
        self.results = 0
        self.reasons: dict[str, None] = {}
        self.tools_text: str | None = None

    def note(self, reason: str) -> None:
        self.reasons.setdefault(reason, None)

    def add(self, role: str, parts: list[str], name: object = None) -> None:
        self.turns.append(Turn(role, "\n".join(p for p in parts if p), None if name is None else str(name)))

    def call(self, name: object, arguments: object) -> list[str]:
        self.calls += 1
        self.note("tool calls are counted as their name and JSON arguments")
        return [str(name or ""), _json(arguments)]

    def result(self) -> None:
        self.results += 1
        self.note("tool results are counted as their text")

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
        if kind in ("image", "image_url", "input_image"):
            bound = image_token_bound(self.api, self.model)
            self.media += 1
            self.media_tokens += bound
            self.note(f"images are counted as {bound} tokens each (an upper bound for {self.model or 'any model'})")
            return []
        if kind == "document" and isinstance(block.get("source"), Mapping) and block["source"].get("type") in (
            "text",
            "content",
        ):
            source = block["source"]
            self.note("text documents are counted as their text")
            if source.get("type") == "text":
                return [_text_field(source, "data", where)]
            return self.blocks(source.get("content"), where)
        if kind in ("input_audio", "input_file", "file", "document", "audio"):
            # A PDF or an audio clip costs what its pages or seconds cost; litm cannot see either.
            raise PromptError(
                f"{where} is a {kind!r} part whose token cost litm cannot bound; count the request with the "
                "provider's endpoint (Anthropic: count_with_api) or send the part's text instead"
            )
        if kind == "tool_use":
            return self.call(block.get("name"), block.get("input", {}))
        if kind == "tool_result":
            self.result()
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


def _request_messages(
    request: Mapping[str, Any], api: str, roles: tuple[str, ...], expected: str
) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """``(where, role, message)`` for each message of a chat request, refusing a malformed list or role."""
    messages = request.get("messages")
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes) or not messages:
        raise PromptError(f"an {api} request needs messages=[...] with at least one message")
    for i, msg in enumerate(messages):
        where = f"message {i}"
        if not isinstance(msg, Mapping):
            raise PromptError(f"{where} is a {type(msg).__name__}, not a dict with 'role' and 'content'")
        role = msg.get("role")
        if role not in roles:
            raise PromptError(f"{where} has role {role!r}; {expected}")
        yield where, str(role), msg


def _openai_chat(request: Mapping[str, Any], c: _Collector) -> None:
    roles = ("system", "developer", "user", "assistant", "tool", "function")
    expected = "expected system, developer, user, assistant or tool"
    for where, role, msg in _request_messages(request, "OpenAI chat", roles, expected):
        parts = c.blocks(msg.get("content"), where)
        calls = msg.get("tool_calls") or []
        if msg.get("function_call"):
            calls = [*calls, {"function": msg["function_call"]}]
        for call in calls:
            fn = call.get("function", {}) if isinstance(call, Mapping) else {}
            parts += c.call(fn.get("name"), fn.get("arguments", ""))
        if role in ("tool", "function"):
            c.result()
        c.add(role, parts, msg.get("name"))
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
                c.add("assistant", c.call(item.get("name"), item.get("arguments", "")))
            elif kind == "function_call_output":
                c.result()
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
    expected = "the Messages API takes user and assistant (system apart)"
    for where, role, msg in _request_messages(request, "Anthropic", ("user", "assistant"), expected):
        c.add(role, c.blocks(msg.get("content"), where))
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
    model = request.get("model")
    c = _Collector(api, model if isinstance(model, str) else None)
    readers[api](request, c)
    return BilledRequest(
        tuple(c.turns),
        c.tools_text,
        c.media,
        tuple(c.reasons),
        tool_calls=c.calls,
        tool_results=c.results,
        media_tokens=c.media_tokens,
        api=api,
        model=c.model,
    )
