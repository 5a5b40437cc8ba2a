"""The guarded ``openai`` client at the HTTP boundary: the real SDK over a capturing transport.

Every mode is checked sync and async: raise and trim, Chat Completions and the Responses API,
``with_options(...)``, streaming (``stream=True`` and the ``.stream(...)`` helpers), ``beta`` and the raw
response wrappers. "Nothing was sent" means the transport saw zero requests. Counts use tiktoken cl100k
offline (exact for GPT-4, approximate for GPT-4o).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import openai
import pytest

from http_capture import Capture, check_openai_chat, check_responses, openai_client, run
from litm.budget import Step, guard
from litm.budget._guard import Call, GuardedClient
from litm.budget._history import SUMMARY_PREFIX
from litm.errors import (
    ContextBudgetExceeded,
    InvalidOptionError,
    LitmError,
    PromptError,
    UngatedRequestError,
    UnsupportedTypeError,
)
from litm.models.tokenizers import count_request
from litm.tokens import get_tokenizer
from transcripts import TOOLS_OPENAI, openai_agent_step, responses

GPT4 = get_tokenizer("openai:gpt-4")
SMALL = [{"role": "user", "content": "Say hi."}]
BIG = [{"role": "user", "content": "Tell me about the harbour of Lisbon. " * 40}]




def run_with(client: Any, use: Callable[[Any], Any]) -> Any:
    """``use(client)``, awaited when the client is async."""
    return run(use(client))


@pytest.fixture(params=[False, True], ids=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def chat(client: Any, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
    return client.chat.completions.create(model="gpt-4", messages=messages, **kwargs)


# -- raise ------------------------------------------------------------------------------------------------


def test_over_budget_chat_is_refused_before_anything_is_sent(is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4)
    assert GPT4.count_messages(SMALL) <= 60 < GPT4.count_messages(BIG)
    with pytest.raises(ContextBudgetExceeded) as info:
        run(chat(client, BIG))
    assert cap.sent == []
    assert info.value.prompt_tokens == GPT4.count_messages(BIG) == info.value.upper and info.value.margin == 0.0
    reply = run(chat(client, SMALL))
    assert reply.choices[0].message.content == "ok"
    assert [s.path for s in cap.sent] == ["/v1/chat/completions"] and cap.bodies[0]["messages"] == SMALL


def test_the_guarded_client_is_the_sdks_own_type(is_async: bool) -> None:
    raw = openai_client(Capture(), is_async=is_async)
    client = guard(raw, max_input_tokens=60, tokenizer=GPT4)
    assert isinstance(client, type(raw)) and isinstance(client, GuardedClient) and client is not raw
    assert not isinstance(raw, GuardedClient)  # the caller's client is left as it was
    copy = client.with_options(timeout=7)
    assert isinstance(copy, GuardedClient) and copy.timeout == 7


def test_tool_schemas_are_counted(is_async: bool) -> None:
    cap = Capture()
    messages = [{"role": "user", "content": "Find a flight from Lisbon to Oslo."}]
    bare = count_request(GPT4, {"messages": messages}, "openai-chat")
    budget = -(-bare.tokens * 115 // 100) + 5  # room for the messages, not for the tool schema
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=budget, tokenizer=GPT4)
    run(chat(client, messages))
    with pytest.raises(ContextBudgetExceeded, match="approximately"):
        run(chat(client, messages, tools=TOOLS_OPENAI))
    assert len(cap.sent) == 1 and "tools" not in cap.bodies[0]


def test_extra_body_is_counted_as_sent(is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4)
    with pytest.raises(ContextBudgetExceeded):
        run(chat(client, SMALL, extra_body={"messages": BIG}))  # extra_body replaces messages on the wire
    assert cap.sent == []


def test_approximate_tokenizer_refuses_within_the_margin(is_async: bool) -> None:
    cap = Capture()
    approx = get_tokenizer("openai:gpt-future-x")  # an id litm does not know: the script-aware estimate
    counted = count_request(approx, {"messages": BIG}, "openai-chat")
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=counted.tokens + 1, tokenizer=approx)
    with pytest.raises(ContextBudgetExceeded, match=r"counted approximately, \+\d+% margin") as info:
        run(chat(client, BIG))
    assert info.value.prompt_tokens == counted.tokens and info.value.margin == counted.margin > 0
    assert info.value.upper == counted.upper > counted.tokens + 1 and cap.sent == []


def test_a_previous_responses_history_from_the_sdk_is_counted(is_async: bool) -> None:
    # Agent loops append the SDK's own message objects; the SDK serialises them before the gate reads them.
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=200, tokenizer=GPT4)
    first = run(chat(client, SMALL))
    history = [*SMALL, first.choices[0].message, {"role": "user", "content": "And again."}]
    run(chat(client, history))
    assert cap.bodies[1]["messages"][1] == {"role": "assistant", "content": "ok"}


# -- trim -------------------------------------------------------------------------------------------------


def test_trim_sends_a_compacted_tool_history_the_api_accepts(is_async: bool) -> None:
    cap = Capture()
    history = openai_agent_step(8)
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=400, tokenizer=GPT4, on_exceed="trim")
    run(chat(client, history, tools=TOOLS_OPENAI, temperature=0))
    (sent,) = cap.bodies
    counted = count_request(GPT4, sent, "openai-chat")
    assert -(-counted.tokens * 115 // 100) <= 400 and sent["tools"] == TOOLS_OPENAI and sent["temperature"] == 0
    assert sent["messages"][0] == history[0] and sent["messages"][1]["content"].startswith(SUMMARY_PREFIX)
    assert sent["messages"][-3:] == history[-3:]
    check_openai_chat(sent["messages"])


def test_trim_still_refuses_when_the_latest_turn_cannot_fit(is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4, on_exceed="trim")
    with pytest.raises(ContextBudgetExceeded, match="latest turn"):
        run(chat(client, BIG))
    assert cap.sent == []


# -- the Responses API ----------------------------------------------------------------------------------


def test_responses_are_gated_and_trimmed(is_async: bool) -> None:
    cap = Capture()
    items = responses(8)
    raw = openai_client(cap, is_async=is_async)
    strict = guard(raw, max_input_tokens=300, tokenizer=GPT4)
    with pytest.raises(ContextBudgetExceeded):
        run(strict.responses.create(model="gpt-4", input=items, instructions="Answer briefly."))
    assert cap.sent == []
    trim = guard(raw, max_input_tokens=300, tokenizer=GPT4, on_exceed="trim")
    reply = run(trim.responses.create(model="gpt-4", input=items, instructions="Answer briefly."))
    assert reply.output_text == "ok"
    (sent,) = cap.bodies
    assert cap.sent[0].path == "/v1/responses" and sent["instructions"] == "Answer briefly."
    assert -(-count_request(GPT4, sent, "openai-responses").tokens * 115 // 100) <= 300
    assert sent["input"][-1] == items[-1] and sent["input"][0]["content"].startswith(SUMMARY_PREFIX)
    check_responses(sent["input"])


def test_input_stored_on_the_provider_is_refused(is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=300, tokenizer=GPT4)
    with pytest.raises(PromptError, match=r"previous_response_id.*nothing was sent"):
        run(client.responses.create(model="gpt-4", input="and then?", previous_response_id="resp_1"))
    assert cap.sent == []


# -- streaming ------------------------------------------------------------------------------------------


def test_streaming_create_is_gated(is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4)
    with pytest.raises(ContextBudgetExceeded):
        run(chat(client, BIG, stream=True))
    assert cap.sent == []

    async def collect_async(stream: Any) -> list[str]:
        return [c.choices[0].delta.content async for c in await stream if c.choices and c.choices[0].delta.content]

    stream = chat(client, SMALL, stream=True)
    text = asyncio.run(collect_async(stream)) if is_async else [
        c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content]
    assert text == ["ok"] and cap.bodies[0]["stream"] is True


def test_stream_helpers_are_gated() -> None:
    cap = Capture()
    client = guard(openai_client(cap), max_input_tokens=60, tokenizer=GPT4)
    with pytest.raises(ContextBudgetExceeded), client.chat.completions.stream(model="gpt-4", messages=BIG):
        pass
    with pytest.raises(ContextBudgetExceeded), client.responses.stream(model="gpt-4", input=BIG[0]["content"]):
        pass
    assert cap.sent == []
    with client.chat.completions.stream(model="gpt-4", messages=SMALL) as stream:
        assert stream.get_final_completion().choices[0].message.content == "ok"
    with client.responses.stream(model="gpt-4", input="Say hi.") as events:
        assert events.get_final_response().output_text == "ok"
    assert [s.path for s in cap.sent] == ["/v1/chat/completions", "/v1/responses"]


def test_async_stream_helpers_are_gated() -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=True), max_input_tokens=60, tokenizer=GPT4)

    async def main() -> str:
        with pytest.raises(ContextBudgetExceeded):
            async with client.chat.completions.stream(model="gpt-4", messages=BIG):
                pass
        assert cap.sent == []
        async with client.responses.stream(model="gpt-4", input="Say hi.") as events:
            return str((await events.get_final_response()).output_text)

    assert asyncio.run(main()) == "ok" and len(cap.sent) == 1


# -- every way in ---------------------------------------------------------------------------------------

WAYS_IN: dict[str, Callable[[Any, list[dict[str, Any]]], Any]] = {
    "with_options": lambda c, m: c.with_options(timeout=5, max_retries=0).chat.completions.create(
        model="gpt-4", messages=m),
    "copy": lambda c, m: c.copy().chat.completions.create(model="gpt-4", messages=m),
    "with_raw_response": lambda c, m: c.chat.completions.with_raw_response.create(model="gpt-4", messages=m),
    "client.with_raw_response": lambda c, m: c.with_raw_response.chat.completions.create(model="gpt-4", messages=m),
    "beta.chat.parse": lambda c, m: c.beta.chat.completions.parse(model="gpt-4", messages=m)
    if hasattr(c.beta, "chat") and hasattr(c.beta.chat.completions, "parse")
    else c.chat.completions.parse(model="gpt-4", messages=m),
    "beta.responses": lambda c, m: c.beta.responses.create(model="gpt-4", input=m),
    "post": lambda c, m: c.post("/chat/completions", cast_to=openai.types.chat.ChatCompletion,
                                body={"model": "gpt-4", "messages": m}),
}  # fmt: skip


@pytest.mark.parametrize("way", list(WAYS_IN))
def test_no_namespace_gets_past_the_gate(way: str, is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4)
    with pytest.raises(ContextBudgetExceeded):
        run_with(client, lambda c: WAYS_IN[way](c, BIG))
    assert cap.sent == []
    run_with(client, lambda c: WAYS_IN[way](c, SMALL))
    assert len(cap.sent) == 1


REFUSED: dict[str, Callable[[Any], Any]] = {
    "legacy completions": lambda c: c.completions.create(model="gpt-3.5-turbo-instruct", prompt="Say hi."),
    "batches": lambda c: c.batches.create(input_file_id="file_1", endpoint="/v1/chat/completions",
                                          completion_window="24h"),
    "assistants run": lambda c: c.beta.threads.runs.create(thread_id="thread_1", assistant_id="asst_1"),
    "embeddings": lambda c: c.embeddings.create(model="text-embedding-3-small", input="Say hi.",
                                                encoding_format="float"),
}  # fmt: skip


@pytest.mark.filterwarnings("ignore:The Assistants API is deprecated:DeprecationWarning")
@pytest.mark.parametrize("what", list(REFUSED))
def test_what_the_gate_cannot_count_is_refused(what: str, is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4)
    with pytest.raises(UngatedRequestError, match="nothing was sent") as info:
        run_with(client, REFUSED[what])
    assert cap.sent == [] and info.value.path.startswith("/")


def test_allow_lets_a_named_endpoint_through_and_reads_pass(is_async: bool) -> None:
    cap = Capture()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4, allow=["/embeddings"])
    run_with(client, REFUSED["embeddings"])
    assert [m.id for m in run_with(client, lambda c: c.models.list()).data] == ["m"]  # a GET carries no prompt
    run_with(client, lambda c: c.responses.input_tokens.count(model="gpt-4", input="hi"))  # counting is free
    assert [s.path for s in cap.sent] == ["/v1/embeddings", "/v1/models", "/v1/responses/input_tokens"]


WEBSOCKETS = {
    "realtime": lambda c: c.realtime.connect(model="gpt-realtime"),
    "beta.realtime": lambda c: c.beta.realtime.connect(model="gpt-realtime"),
    "responses": lambda c: c.responses.connect(),
}


@pytest.mark.parametrize("session", list(WEBSOCKETS))
def test_websocket_sessions_are_refused(session: str, is_async: bool) -> None:
    client = guard(openai_client(Capture(), is_async=is_async), max_input_tokens=60, tokenizer=GPT4)
    manager = WEBSOCKETS[session](client)

    async def enter() -> None:
        async with manager:
            pass

    with pytest.raises(UngatedRequestError, match="WebSocket"):
        if is_async:
            asyncio.run(enter())
        else:
            with manager:
                pass


# -- the pipeline seam ----------------------------------------------------------------------------------


class Recorder(Step):
    """A step after the token gate: sees the gate's count before the call and the usage after it."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.events: list[tuple[str, Any]] = []

    def before(self, call: Call) -> Call:
        self.events.append(("before", (call.api, call.count.tokens if call.count else None, call.upper)))
        if self.refuse:
            raise InvalidOptionError("refused by the next step")
        return call

    def after(self, call: Call, response: Any) -> Any:
        self.events.append(("after", response.usage.prompt_tokens))
        return response

    def failed(self, call: Call, error: BaseException) -> None:
        self.events.append(("failed", type(error).__name__))


class AsyncRecorder(Recorder):
    async def abefore(self, call: Call) -> Call:
        await asyncio.sleep(0)  # a step that awaits (a ledger, say) must not block the loop
        self.events.append(("abefore", call.api))
        return self.before(call)


def test_steps_run_around_each_gated_call(is_async: bool) -> None:
    cap = Capture()
    step = AsyncRecorder() if is_async else Recorder()
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4, steps=[step])
    run(chat(client, SMALL))
    tokens = GPT4.count_messages(SMALL)
    expected = [("before", ("openai-chat", tokens, tokens)), ("after", 11)]
    assert [e for e in step.events if e[0] != "abefore"] == expected
    assert (("abefore", "openai-chat") in step.events) == is_async
    with pytest.raises(ContextBudgetExceeded):  # the token gate refuses first: later steps never see the call
        run(chat(client, BIG))
    assert len(step.events) == (3 if is_async else 2)
    cap.status = 500
    with pytest.raises(openai.InternalServerError):
        run(chat(client, SMALL))
    assert step.events[-1] == ("failed", "InternalServerError")


def test_a_refusing_step_sends_nothing(is_async: bool) -> None:
    cap = Capture()
    step = Recorder(refuse=True)
    client = guard(openai_client(cap, is_async=is_async), max_input_tokens=60, tokenizer=GPT4, steps=[step])
    with pytest.raises(InvalidOptionError, match="next step"):
        run(chat(client, SMALL))
    assert cap.sent == []


# -- bad use --------------------------------------------------------------------------------------------


def test_guard_rejects_unknown_clients_and_bad_options() -> None:
    raw = openai_client(Capture())
    with pytest.raises(UnsupportedTypeError, match=r"supports openai\.OpenAI"):
        guard(object(), max_input_tokens=10, tokenizer=GPT4)
    with pytest.raises(InvalidOptionError):
        guard(raw, max_input_tokens=0, tokenizer=GPT4)
    with pytest.raises(InvalidOptionError):
        guard(raw, max_input_tokens=10, tokenizer=GPT4, on_exceed="shrug")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="endpoint paths"):
        guard(raw, max_input_tokens=10, tokenizer=GPT4, allow=["embeddings"])
    with pytest.raises(UnsupportedTypeError, match="cannot count tokens"):
        guard(raw, max_input_tokens=10, tokenizer=3.5)
    assert all(issubclass(e, LitmError) for e in (UngatedRequestError, UnsupportedTypeError, InvalidOptionError))

