"""The HTTP boundary for guard tests: the real ``openai`` / ``anthropic`` SDKs over a capturing transport.

The SDK builds, serialises and sends the request exactly as it would to the provider; the transport (the
SDK's own HTTP library's ``MockTransport``, passed as ``http_client=``) records the body and answers with
a response in the provider's documented shape. "Nothing was sent" is the transport seeing zero requests.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# The SDKs' HTTP library: httpx2 for the installed openai/anthropic releases, httpx for older ones.
http: Any = importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") else "httpx")


def run(value: Any) -> Any:
    """The result of an SDK call, awaited (in a fresh event loop) when the client is async."""
    if not inspect.isawaitable(value):
        return value

    async def main() -> Any:
        return await value

    return asyncio.run(main())


@dataclass
class Sent:
    method: str
    path: str
    body: Any


@dataclass
class Capture:
    """Every request the SDK sent, in order; answers each with ``reply(request_body, path)``."""

    sent: list[Sent] = field(default_factory=list)
    status: int = 200

    def handle(self, request: Any) -> Any:
        body = json.loads(request.content) if request.content else None
        path = request.url.path
        self.sent.append(Sent(request.method, path, body))
        if self.status != 200:
            return http.Response(self.status, json={"error": {"message": "boom", "type": "server_error"}})
        return reply(path, body or {})

    def transport(self) -> Any:
        return http.MockTransport(self.handle)

    @property
    def bodies(self) -> list[Any]:
        return [s.body for s in self.sent]


def openai_client(capture: Capture, *, is_async: bool = False) -> Any:
    import openai

    if is_async:
        return openai.AsyncOpenAI(
            api_key="sk-test", base_url="https://api.test/v1", max_retries=0,
            http_client=http.AsyncClient(transport=capture.transport()),
        )  # fmt: skip
    return openai.OpenAI(
        api_key="sk-test", base_url="https://api.test/v1", max_retries=0,
        http_client=http.Client(transport=capture.transport()),
    )  # fmt: skip


def anthropic_client(capture: Capture, *, is_async: bool = False) -> Any:
    import anthropic

    if is_async:
        return anthropic.AsyncAnthropic(
            api_key="test-key", max_retries=0, http_client=http.AsyncClient(transport=capture.transport())
        )
    return anthropic.Anthropic(
        api_key="test-key", max_retries=0, http_client=http.Client(transport=capture.transport())
    )


# -- provider responses --------------------------------------------------------------------------------

USAGE_CHAT = {"prompt_tokens": 11, "completion_tokens": 1, "total_tokens": 12}
USAGE_RESPONSES = {"input_tokens": 11, "output_tokens": 1, "total_tokens": 12,
                   "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
USAGE_ANTHROPIC = {"input_tokens": 11, "output_tokens": 1}


def _sse(events: Sequence[tuple[str | None, Any]]) -> Any:
    lines = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines.append(f"data: {data if isinstance(data, str) else json.dumps(data)}")
        lines.append("")
    return http.Response(200, headers={"content-type": "text/event-stream"}, content=("\n".join(lines) + "\n").encode())


def _chat(body: Mapping[str, Any]) -> Any:
    if body.get("stream"):
        chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "m")}
        return _sse([
            (None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"},
                                          "finish_reason": None}]}),
            (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": USAGE_CHAT}),
            (None, "[DONE]"),
        ])  # fmt: skip
    return http.Response(200, json={
        "id": "c1", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": USAGE_CHAT,
    })  # fmt: skip


def _response_object(body: Mapping[str, Any], status: str) -> dict[str, Any]:
    message = {"type": "message", "id": "m1", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "ok", "annotations": []}]}
    return {
        "id": "r1", "object": "response", "created_at": 0, "model": body.get("model", "m"), "status": status,
        "output": [message] if status == "completed" else [], "parallel_tool_calls": True, "tool_choice": "auto",
        "tools": [], "usage": USAGE_RESPONSES if status == "completed" else None,
    }  # fmt: skip


def _responses(body: Mapping[str, Any]) -> Any:
    if body.get("stream"):
        return _sse([
            ("response.created", {"type": "response.created", "sequence_number": 0,
                                  "response": _response_object(body, "in_progress")}),
            ("response.completed", {"type": "response.completed", "sequence_number": 1,
                                    "response": _response_object(body, "completed")}),
        ])  # fmt: skip
    return http.Response(200, json=_response_object(body, "completed"))


def _anthropic(body: Mapping[str, Any]) -> Any:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "claude-test"),
               "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
               "usage": USAGE_ANTHROPIC}
    if body.get("stream"):
        start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": 11, "output_tokens": 0}}
        return _sse([
            ("message_start", {"type": "message_start", "message": start}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": "ok"}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ])  # fmt: skip
    return http.Response(200, json=message)


def reply(path: str, body: Mapping[str, Any]) -> Any:
    """The provider's answer to ``path``: chat, responses and messages (streamed when asked), else ``{}``."""
    if path.endswith("/chat/completions"):
        return _chat(body)
    if path.endswith("/responses"):
        return _responses(body)
    if path.endswith("/v1/messages"):
        return _anthropic(body)
    if path.endswith("/embeddings"):
        return http.Response(200, json={
            "object": "list", "model": "m", "usage": {"prompt_tokens": 2, "total_tokens": 2},
            "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
        })  # fmt: skip
    if path.endswith("/count_tokens"):
        return http.Response(200, json={"input_tokens": 11})
    if path.endswith("/models"):
        return http.Response(200, json={"object": "list", "data": [{"id": "m", "object": "model", "created": 0,
                                                                    "owned_by": "test"}]})
    return http.Response(200, json={"object": "list", "data": []})


# -- what the providers accept ---------------------------------------------------------------------------


def check_openai_chat(messages: Sequence[Mapping[str, Any]]) -> None:
    """Raise AssertionError unless every tool message answers a call of the assistant turn right before it."""
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            assert m["tool_call_id"] in open_calls, f"message {i}: tool result without its call"
            open_calls.discard(m["tool_call_id"])
            continue
        assert not open_calls, f"message {i}: tool calls {sorted(open_calls)} left unanswered"
        if m["role"] == "assistant" and m.get("tool_calls"):
            open_calls = {c["id"] for c in m["tool_calls"]}


def check_anthropic(request: Mapping[str, Any]) -> None:
    """Raise AssertionError unless ``request`` follows the Messages API's structural rules."""
    messages = request["messages"]
    assert messages and messages[0]["role"] == "user", "the first message must be a user turn"
    roles = [m["role"] for m in messages]
    assert set(roles) <= {"user", "assistant"}, f"roles {roles}: system goes in system=, not in messages"
    assert all(a != b for a, b in itertools.pairwise(roles)), f"roles must alternate: {roles}"
    for i, m in enumerate(messages):
        blocks = m["content"] if isinstance(m["content"], list) else []
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        if results:
            assert all(b.get("type") == "tool_result" for b in blocks[: len(results)]), "tool_result blocks first"
            prev = messages[i - 1] if i else {"content": []}
            calls = [b["id"] for b in prev["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
            assert sorted(results) == sorted(calls), f"message {i}: tool results {results} do not answer {calls}"
        calls = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if calls and i + 1 < len(messages):
            nxt = messages[i + 1]["content"]
            answered = [b["tool_use_id"] for b in nxt if isinstance(b, dict) and b.get("type") == "tool_result"]
            assert sorted(answered) == sorted(calls), f"message {i}: tool calls {calls} not answered next"


def check_responses(items: Sequence[Mapping[str, Any]]) -> None:
    """Raise AssertionError unless every function_call_output follows its function_call."""
    calls: set[str] = set()
    for i, item in enumerate(items):
        if item.get("type") == "function_call":
            calls.add(item["call_id"])
        if item.get("type") == "function_call_output":
            assert item["call_id"] in calls, f"item {i}: output without its call"
