"""The guarded ``anthropic`` client at the HTTP boundary: the real SDK over a capturing transport.

Raise and trim, sync and async, ``messages.create`` / ``stream=True`` / ``messages.stream(...)`` /
``beta.messages`` / ``with_options``; every trimmed request is checked against the Messages API's rules
(no ``system`` role in messages, a user turn first, roles alternating, tool results right after their
calls). Counts: tiktoken cl100k (exact on its own text, approximate for tool blocks) and Anthropic's
offline estimate (approximate: the margin applies).
"""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic as sdk
import pytest

from http_capture import Capture, anthropic_client, check_anthropic, run
from litm.budget import guard
from litm.budget._history import SUMMARY_PREFIX
from litm.budget._margin import upper_of
from litm.errors import ContextBudgetExceeded, UngatedRequestError
from litm.models.tokenizers import count_request
from litm.models.tokenizers._base import TOOLS_OVERHEAD_TOKENS
from litm.tokens import get_tokenizer
from transcripts import SYSTEM_BLOCKS, TOOLS_ANTHROPIC, anthropic, anthropic_conversation

CL100K = get_tokenizer("openai:gpt-4")
SMALL = [{"role": "user", "content": "Say hi."}]




@pytest.fixture(params=[False, True], ids=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def create(client: Any, **kwargs: Any) -> Any:
    return client.messages.create(model="claude-test", max_tokens=64, **kwargs)


def test_the_whole_request_is_counted_system_blocks_and_tools_included(is_async: bool) -> None:
    cap = Capture()
    request = {"system": SYSTEM_BLOCKS, "messages": anthropic(3), "tools": TOOLS_ANTHROPIC}
    counted = count_request(CL100K, request, "anthropic")
    client = guard(anthropic_client(cap, is_async=is_async), max_input_tokens=upper_of(counted) - 1, tokenizer=CL100K)
    with pytest.raises(ContextBudgetExceeded) as info:
        run(create(client, **request))
    assert cap.sent == [] and info.value.prompt_tokens == counted.tokens
    without_tools = {k: v for k, v in request.items() if k != "tools"}
    reply = run(create(client, **without_tools))
    assert reply.content[0].text == "ok" and cap.sent[0].path == "/v1/messages"
    assert cap.bodies[0]["system"] == SYSTEM_BLOCKS and cap.bodies[0]["messages"] == request["messages"]


@pytest.mark.parametrize("history", ["conversation", "agent loop"])
def test_trim_sends_a_request_the_messages_api_accepts(history: str, is_async: bool) -> None:
    # Before: the summary went out as {"role": "system"} inside messages and the kept turns could open with an
    # assistant turn: the Messages API refuses both.
    cap = Capture()
    msgs = anthropic_conversation(6) if history == "conversation" else anthropic(6, ends_with="tool_result")
    budget = 400 + TOOLS_OVERHEAD_TOKENS["anthropic"]  # the tools carry Anthropic's tool-use prompt allowance
    client = guard(
        anthropic_client(cap, is_async=is_async), max_input_tokens=budget, tokenizer=CL100K, on_exceed="trim"
    )
    run(create(client, system=SYSTEM_BLOCKS, messages=msgs, tools=TOOLS_ANTHROPIC))
    (sent,) = cap.bodies
    check_anthropic(sent)
    assert upper_of(count_request(CL100K, sent, "anthropic")) <= budget and sent["tools"] == TOOLS_ANTHROPIC
    assert sent["system"][0] == SYSTEM_BLOCKS[0] and sent["messages"][-1] == msgs[-1]
    if history == "conversation":  # kept from one of the user's own turns: the summary joins the system prompt
        assert sent["system"][-1]["text"].startswith(SUMMARY_PREFIX) and isinstance(sent["messages"][0]["content"], str)
    else:  # mid agent loop the kept turns open with a tool call: the summary is the user turn before it
        assert sent["system"] == SYSTEM_BLOCKS and sent["messages"][0]["content"].startswith(SUMMARY_PREFIX)


def test_the_estimate_carries_the_margin(monkeypatch: pytest.MonkeyPatch, is_async: bool) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    estimate = get_tokenizer("anthropic:claude-3-5-haiku-latest")  # no key: the script-aware estimate
    assert not estimate.exact
    cap = Capture()
    messages = [{"role": "user", "content": "How old is the harbour of Lisbon? " * 10}]
    counted = count_request(estimate, {"messages": messages}, "anthropic")
    tokens = counted.tokens
    client = guard(anthropic_client(cap, is_async=is_async), max_input_tokens=tokens + 2, tokenizer=estimate)
    with pytest.raises(ContextBudgetExceeded, match="approximately") as info:
        run(create(client, messages=messages))
    assert info.value.margin == counted.margin > 0 and info.value.upper > tokens + 2 >= info.value.prompt_tokens
    assert cap.sent == []


def test_streams_are_gated(is_async: bool) -> None:
    cap = Capture()
    big = [{"role": "user", "content": "Tell me about Lisbon. " * 60}]
    client = guard(anthropic_client(cap, is_async=is_async), max_input_tokens=100, tokenizer=CL100K)

    async def async_stream(messages: list[dict[str, Any]]) -> str:
        async with client.messages.stream(model="claude-test", max_tokens=8, messages=messages) as stream:
            return str(await stream.get_final_text())

    def sync_stream(messages: list[dict[str, Any]]) -> str:
        with client.messages.stream(model="claude-test", max_tokens=8, messages=messages) as stream:
            return str(stream.get_final_text())

    def stream_helper(messages: list[dict[str, Any]]) -> str:
        return asyncio.run(async_stream(messages)) if is_async else sync_stream(messages)

    with pytest.raises(ContextBudgetExceeded):
        stream_helper(big)
    with pytest.raises(ContextBudgetExceeded):
        run(create(client, messages=big, stream=True))
    assert cap.sent == []
    assert stream_helper(SMALL) == "ok"
    assert cap.bodies[0]["stream"] is True


WAYS_IN = {
    "beta.messages": lambda c, m: c.beta.messages.create(model="claude-test", max_tokens=8, messages=m),
    "with_options": lambda c, m: c.with_options(timeout=5).messages.create(model="claude-test", max_tokens=8,
                                                                           messages=m),
    "with_raw_response": lambda c, m: c.messages.with_raw_response.create(model="claude-test", max_tokens=8,
                                                                          messages=m),
}  # fmt: skip


@pytest.mark.parametrize("way", list(WAYS_IN))
def test_no_namespace_gets_past_the_gate(way: str, is_async: bool) -> None:
    cap = Capture()
    client = guard(anthropic_client(cap, is_async=is_async), max_input_tokens=100, tokenizer=CL100K)
    with pytest.raises(ContextBudgetExceeded):
        run(WAYS_IN[way](client, [{"role": "user", "content": "Tell me about Lisbon. " * 60}]))
    assert cap.sent == []
    run(WAYS_IN[way](client, SMALL))
    assert len(cap.sent) == 1


def test_counting_passes_and_batches_are_refused(is_async: bool) -> None:
    cap = Capture()
    client = guard(anthropic_client(cap, is_async=is_async), max_input_tokens=100, tokenizer=CL100K)
    assert run(client.messages.count_tokens(model="claude-test", messages=SMALL)).input_tokens == 11
    batch = [{"custom_id": "a", "params": {"model": "claude-test", "max_tokens": 8, "messages": SMALL}}]
    with pytest.raises(UngatedRequestError, match="batches"):
        run(client.messages.batches.create(requests=batch))
    assert [s.path for s in cap.sent] == ["/v1/messages/count_tokens"]
    assert isinstance(client, sdk.AsyncAnthropic if is_async else sdk.Anthropic)
