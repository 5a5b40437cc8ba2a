"""Counting whole provider requests (tool calls, tool results, content blocks, tools) with real tokenizers.

Every count carries the margin a budget adds: 0 for plain chat text on the model's own encoding, the
stated allowances for tool calls, schemas and images, the tokenizer's margin for an estimate.
"""

from __future__ import annotations

import json

import pytest

from litm.errors import PromptError
from litm.models.tokenizers import count_request
from litm.models.tokenizers._base import TOOL_CALL_TOKENS, TOOL_SCHEMA_MARGIN, TOOLS_OVERHEAD_TOKENS
from litm.models.tokenizers._bpe import OpenAITokenizer
from litm.models.tokenizers._estimate import ESTIMATE_MARGIN, EstimateTokenizer
from litm.prompt._messages import MEDIA_PART_TOKENS, billed_request, image_token_bound

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
def o200k() -> OpenAITokenizer:
    return OpenAITokenizer("o200k_base")


def test_plain_chat_matches_the_tokenizers_message_count(o200k: OpenAITokenizer) -> None:
    messages = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Hello there, 你好", "name": "ann"},
    ]
    counted = count_request(o200k, {"model": "gpt-4o", "messages": messages}, "openai-chat")
    assert counted.exact and counted.notes == () and counted.margin == 0.0
    assert counted.tokens == counted.upper == o200k.count_messages(messages)


def test_tool_calling_history_is_counted_not_refused(o200k: OpenAITokenizer) -> None:
    counted = count_request(o200k, {"messages": TOOL_HISTORY}, "openai-chat")
    assert not counted.exact and counted.margin > 0
    assert any("tool calls" in n for n in counted.notes)
    # Every billed piece is in the count: the arguments and the tool result are not free.
    assert counted.tokens >= sum(o200k.count(t) for t in ('{"city": "Paris"}', "18 C and sunny", "weather"))
    # The wrapper tokens around one call and one result are allowed for in the upper bound.
    assert counted.upper >= counted.tokens + 2 * TOOL_CALL_TOKENS


def test_tool_schemas_are_counted_with_their_overhead_and_margin(o200k: OpenAITokenizer) -> None:
    bare = count_request(o200k, {"messages": TOOL_HISTORY}, "openai-chat")
    with_tools = count_request(o200k, {"messages": TOOL_HISTORY, "tools": TOOLS}, "openai-chat")
    schema = o200k.count("\n".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in TOOLS))
    overhead = TOOLS_OVERHEAD_TOKENS["openai-chat"]
    assert with_tools.tokens - bare.tokens == schema + overhead
    assert with_tools.upper - bare.upper >= schema * (1 + TOOL_SCHEMA_MARGIN) + overhead


def test_images_are_bounded_per_model_and_unboundable_parts_refused(o200k: OpenAITokenizer) -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.invalid/cat.png"}}
    def request(model: str) -> dict[str, object]:
        return {"model": model, "messages": [{"role": "user", "content": [{"type": "text", "text": "What?"}, image]}]}

    text_only = o200k.count_messages([{"role": "user", "content": "What?"}])
    for model, bound in (("gpt-4o", MEDIA_PART_TOKENS), ("gpt-4o-mini", 48_169), ("new-model", 48_169)):
        counted = count_request(o200k, request(model), "openai-chat")
        assert counted.tokens == text_only + bound == image_token_bound("openai-chat", model) + text_only
        assert not counted.exact and any("images" in n for n in counted.notes)
    claude = {"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64"}}]}]}
    assert billed_request(claude, "anthropic").media_tokens == MEDIA_PART_TOKENS
    pdf = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBER"}}
    with pytest.raises(PromptError, match="'document' part whose token cost litm cannot bound"):
        billed_request({"messages": [{"role": "user", "content": [pdf]}]}, "anthropic")
    with pytest.raises(PromptError, match="'input_audio' part"):
        billed_request({"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}, "openai-chat")
    text_doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Paris is big."}}
    billed = billed_request({"messages": [{"role": "user", "content": [text_doc]}]}, "anthropic")
    assert billed.turns[0].text == "Paris is big."


def test_anthropic_blocks_and_system_list() -> None:
    billed = billed_request(ANTHROPIC, "anthropic")
    assert [t.role for t in billed.turns] == ["system", "user", "assistant", "user"]
    assert billed.turns[0].text == "You are a travel agent."
    assert "18 C and sunny" in billed.turns[3].text
    counted = count_request(EstimateTokenizer(), ANTHROPIC, "anthropic")
    assert not counted.exact and counted.tokens > 0
    assert counted.margin >= ESTIMATE_MARGIN
    with_tools = count_request(EstimateTokenizer(), {**ANTHROPIC, "tools": [{"name": "weather"}]}, "anthropic")
    assert with_tools.tokens - counted.tokens >= TOOLS_OVERHEAD_TOKENS["anthropic"]  # the tool-use system prompt


def test_responses_api_input_items(o200k: OpenAITokenizer) -> None:
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
    counted = count_request(o200k, request, "openai-responses")
    assert counted.tokens > 0 and counted.upper > counted.tokens


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


@pytest.mark.model
def test_a_chat_template_tokenizer_counts_tool_histories_with_remapped_roles() -> None:
    """SmolLM2's real tokenizer: its template knows no tool role, so the tool turn counts as a user turn."""
    from litm.models import load_model

    smol = load_model("local:smollm2").tokenizer
    counted = count_request(smol, {"messages": TOOL_HISTORY}, "openai-chat")
    assert not counted.exact and "'tool' turns are counted as 'user' turns" in counted.notes
    assert counted.tokens > smol.count_messages([m for m in TOOL_HISTORY if m["role"] in ("system", "user")])
    assert counted.upper >= counted.tokens + 3 * TOOL_CALL_TOKENS  # a call, a result and one remapped turn
