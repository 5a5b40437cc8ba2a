"""Counting whole provider requests (tool calls, tool results, content blocks, tools) with real tokenizers."""

from __future__ import annotations

import json

import pytest

from litm.errors import PromptError
from litm.models.tokenizers import EstimateTokenizer, TiktokenTokenizer, count_request
from litm.prompt.messages import billed_request

TOOL_HISTORY = [
    {"role": "system", "content": "You are a travel agent."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "18 C and sunny"},
    {"role": "user", "content": "And tomorrow?"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
ANTHROPIC = {
    "system": [{"type": "text", "text": "You are a travel agent.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "18 C and sunny"}]},
    ],
}


@pytest.fixture(scope="module")
def cl100k() -> TiktokenTokenizer:
    return TiktokenTokenizer()


def test_plain_chat_matches_the_tokenizers_message_count(cl100k: TiktokenTokenizer) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there, 你好"}]
    counted = count_request(cl100k, {"messages": messages}, "openai-chat")
    assert counted.exact and counted.notes == ()
    assert counted.tokens == cl100k.count_messages(messages)


def test_tool_calling_history_is_counted_not_refused(cl100k: TiktokenTokenizer) -> None:
    counted = count_request(cl100k, {"messages": TOOL_HISTORY}, "openai-chat")
    assert not counted.exact
    assert any("tool calls" in n for n in counted.notes)
    # Every billed piece is in the count: the arguments and the tool result are not free.
    assert counted.tokens >= sum(cl100k.count(t) for t in ('{"city": "Paris"}', "18 C and sunny", "weather"))


def test_tool_schemas_are_counted(cl100k: TiktokenTokenizer) -> None:
    bare = count_request(cl100k, {"messages": TOOL_HISTORY}, "openai-chat")
    with_tools = count_request(cl100k, {"messages": TOOL_HISTORY, "tools": TOOLS}, "openai-chat")
    schema = "\n".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in TOOLS)
    assert with_tools.tokens - bare.tokens == cl100k.count(schema)


def test_anthropic_blocks_and_system_list() -> None:
    billed = billed_request(ANTHROPIC, "anthropic")
    assert [t.role for t in billed.turns] == ["system", "user", "assistant", "user"]
    assert billed.turns[0].text == "You are a travel agent."
    assert "18 C and sunny" in billed.turns[3].text
    counted = count_request(EstimateTokenizer(), ANTHROPIC, "anthropic")
    assert not counted.exact and counted.tokens > 0


def test_responses_api_input_items(cl100k: TiktokenTokenizer) -> None:
    request = {
        "instructions": "Answer briefly.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "18 C"},
        ],
    }
    billed = billed_request(request, "openai-responses")
    assert [t.role for t in billed.turns] == ["developer", "user", "assistant", "tool"]
    assert count_request(cl100k, request, "openai-responses").tokens > 0


def test_server_side_state_is_refused() -> None:
    with pytest.raises(PromptError, match="previous_response_id"):
        billed_request({"input": "and then?", "previous_response_id": "resp_1"}, "openai-responses")


@pytest.mark.parametrize(
    ("request_", "api", "match"),
    [
        ({"messages": []}, "openai-chat", "at least one message"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "openai-chat", "role 'wizard'"),
        ({"messages": [{"role": "user", "content": 42}]}, "openai-chat", "content must be"),
        ({"messages": [{"role": "user", "content": [{"type": "hologram"}]}]}, "anthropic", "cannot count"),
        ({"messages": [{"role": "system", "content": "x"}]}, "anthropic", "system apart"),
        ({"messages": [{"role": "user", "content": "x"}]}, "grpc", "unknown request shape"),
    ],
)
def test_malformed_requests_get_a_typed_error(request_: dict[str, object], api: str, match: str) -> None:
    with pytest.raises(PromptError, match=match):
        billed_request(request_, api)
