"""Anthropic and OpenAI tested at the HTTP boundary only.

Their APIs are unreachable from the test machine (and would need paid keys), so the real SDKs run
against an in-process mock transport (``MockTransport`` from the HTTP library the SDKs use, passed as
``http_client``). The tests check the request each backend sends (path, headers, body), the parsing of
text, usage and stop reasons, retries on 429/5xx, and the typed errors. The OpenAI-compatible path is also
tested end to end against a real llama.cpp server in ``test_models_server.py``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from litm.errors import ContextWindowExceededError, InvalidOptionError, ModelError, PromptError
from litm.models import load_model
from litm.models._anthropic_backend import AnthropicModel
from litm.models._openai_backend import OpenAIModel
from litm.prompt import build_prompt

# The SDKs' HTTP library: httpx2 for the installed openai/anthropic releases, httpx for older ones.
http = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")

Handler = Callable[[Any], Any]


class Recorder:
    """A mock transport that records requests and answers from a list of (status, json, headers)."""

    def __init__(self, *answers: tuple[int, dict[str, Any]] | tuple[int, dict[str, Any], dict[str, str]]) -> None:
        self.answers = list(answers)
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        status, body, *headers = self.answers.pop(0)
        return http.Response(status, json=body, headers=headers[0] if headers else None)

    def client(self) -> Any:
        return http.Client(transport=http.MockTransport(self))

    def body(self, i: int = -1) -> dict[str, Any]:
        return dict(json.loads(self.requests[i].content))


def anthropic_message(text: str = "Paris", stop_reason: str = "end_turn", **usage: int) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 21, "output_tokens": 2, **usage},
    }


def openai_chat(text: str = "Paris", finish: str = "stop", cached: int = 0) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 14,
            "completion_tokens": 1,
            "total_tokens": 15,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def claude(recorder: Recorder, **options: Any) -> AnthropicModel:
    model = load_model("anthropic:claude-haiku-4-5", api_key="sk-ant-test", http_client=recorder.client(), **options)
    assert isinstance(model, AnthropicModel)
    return model


def test_anthropic_request_shape_and_usage() -> None:
    rec = Recorder((200, anthropic_message(" Paris", "stop_sequence", cache_read_input_tokens=7,
                                           cache_creation_input_tokens=5)))  # fmt: skip
    messages = [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
    ]
    out = claude(rec).complete(messages, max_tokens=5, stop=["\n"], temperature=0.0, seed=123)
    request = rec.requests[0]
    assert request.method == "POST" and request.url.path == "/v1/messages"
    # The key travels as x-api-key (anthropic 0.x/1.x) or as a bearer token (2.x); either way, only there.
    auth = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
    assert auth == "sk-ant-test" and "anthropic-version" in request.headers
    assert request.headers["anthropic-version"] == "2026-10-21"  # the SDK's: it takes no sampling parameters
    sent = rec.body()
    assert sent == {
        "model": "claude-haiku-4-5",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "Capital of France?"}],
        "system": "Answer in one word.",
        "stop_sequences": ["\n"],
    }
    # Anthropic reports cache reads and writes apart from input_tokens; litm's input_tokens includes them.
    assert (out.text, out.input_tokens, out.output_tokens) == (" Paris", 21 + 7 + 5, 2)
    assert (out.cached_tokens, out.cache_write_tokens) == (7, 5)
    assert out.finish_reason == "stop" and out.model == "claude-haiku-4-5-20251001"
    assert out.sampled  # no temperature was sent: the API decides how to sample


def test_anthropic_older_api_version_gets_temperature_through_extra_body() -> None:
    rec = Recorder((200, anthropic_message()), (200, anthropic_message()))
    model = claude(rec, api_version="2023-06-01")
    greedy = model.complete("Capital of France?", max_tokens=5)
    assert rec.requests[0].headers["anthropic-version"] == "2023-06-01"
    assert rec.body(0)["temperature"] == 0.0 and "seed" not in rec.body(0)
    assert not greedy.sampled
    warm = model.complete("Capital of France?", max_tokens=5, temperature=0.7)
    assert rec.body(1)["temperature"] == 0.7 and warm.sampled
    with pytest.raises(InvalidOptionError, match="api_version must be a version string"):
        claude(Recorder(), api_version="")


def test_anthropic_string_prompt_and_length_stop() -> None:
    rec = Recorder((200, anthropic_message("Par", "max_tokens")))
    out = claude(rec).complete("Capital of France?", max_tokens=1)
    assert rec.body()["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert "system" not in rec.body() and "stop_sequences" not in rec.body()
    assert out.finish_reason == "length"


def test_anthropic_counts_with_the_count_tokens_endpoint() -> None:
    rec = Recorder((200, {"input_tokens": 17}), (200, {"input_tokens": 9}))
    model = claude(rec)
    assert model.tokenizer.exact and model.tokenizer.name == "anthropic:count_tokens"
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello there"}]
    assert model.count_tokens(messages) == 17
    assert rec.requests[0].url.path == "/v1/messages/count_tokens"
    assert rec.body(0) == {"model": "claude-haiku-4-5", "messages": messages[1:], "system": "Be brief."}
    assert model.tokenizer.count("Hello there") == 9  # as one user message
    with pytest.raises(ModelError, match="does not publish its tokenizer"):
        model.tokenizer.encode("x")


def test_anthropic_without_a_key_estimates_and_sends_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    rec = Recorder()  # any request fails the test
    model = load_model("anthropic:claude-haiku-4-5", http_client=rec.client())
    assert not model.tokenizer.exact and "script-aware" in model.tokenizer.name
    assert model.tokenizer.margin == 0.15 and "no API key" in model.tokenizer.note
    chinese = "检索增强生成把检索到的文档放进提示词。"
    assert model.tokenizer.count(chinese) >= len(chinese)  # the old 3.5 characters per token gave 6
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        model.complete("hi")
    opted_out = claude(Recorder(), count_with_api=False)
    assert not opted_out.tokenizer.exact
    assert opted_out.count_tokens("hi") == opted_out.tokenizer.count_messages([{"role": "user", "content": "hi"}])
    assert rec.requests == []


def test_anthropic_retries_429_and_5xx_with_backoff() -> None:
    fast = {"retry-after-ms": "1"}  # the SDK honours the server's delay instead of its default backoff
    rec = Recorder((429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, fast),
                   (529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}, fast),
                   (200, anthropic_message()))  # fmt: skip
    assert claude(rec, max_retries=2).complete("hi").text == "Paris"
    assert len(rec.requests) == 3


def test_anthropic_errors_are_typed() -> None:
    message = "prompt is too long: 250000 tokens > 200000 maximum"
    too_long = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    with pytest.raises(ContextWindowExceededError, match="prompt is too long"):
        claude(Recorder((400, too_long))).complete("hi")
    server_error = {"type": "error", "error": {"type": "api_error", "message": "oops"}}
    with pytest.raises(ModelError, match="HTTP 500"):
        claude(Recorder((500, server_error)), max_retries=0).complete("hi")
    bad_key = {"type": "error", "error": {"type": "authentication_error", "message": "bad"}}
    with pytest.raises(ModelError, match="rejected the API key"):
        claude(Recorder((401, bad_key))).complete("x")

    def refuse(request: Any) -> Any:
        raise http.ConnectError("connection refused", request=request)

    down = load_model(
        "anthropic:claude-haiku-4-5", api_key="k", max_retries=0,
        http_client=http.Client(transport=http.MockTransport(refuse)),
    )  # fmt: skip
    with pytest.raises(ModelError, match="cannot reach"):
        down.complete("hi")
    with pytest.raises(PromptError, match="at least one user message"):
        claude(Recorder()).complete([{"role": "system", "content": "only a system prompt"}])


def gpt(recorder: Recorder, spec: str = "openai:gpt-4o-mini", **options: Any) -> OpenAIModel:
    model = load_model(spec, api_key="sk-test", http_client=recorder.client(), **options)
    assert isinstance(model, OpenAIModel)
    return model


def test_openai_request_shape_and_usage() -> None:
    rec = Recorder((200, openai_chat(cached=4)))
    out = gpt(rec).complete("Capital of France?", max_tokens=3, stop=["\n"], seed=7)
    request = rec.requests[0]
    assert request.url.path == "/v1/chat/completions" and request.url.host == "api.openai.com"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert rec.body() == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Capital of France?"}],
        "max_completion_tokens": 3,
        "temperature": 0.0,
        "stop": ["\n"],
        "seed": 7,
    }
    # prompt_tokens already includes the cached tokens: input_tokens is it, unchanged.
    assert (out.text, out.input_tokens, out.output_tokens, out.cached_tokens) == ("Paris", 14, 1, 4)
    assert out.finish_reason == "stop" and out.model == "gpt-4o-mini-2024-07-18"
    assert not out.sampled and out.cache_write_tokens == 0


@pytest.mark.parametrize("model", ["o3-mini", "o1", "gpt-5", "gpt-5-mini"])
def test_openai_reasoning_models_get_no_sampling_parameters(model: str) -> None:
    rec = Recorder((200, openai_chat("Paris\nmore text", finish="stop")))
    out = gpt(rec, spec=f"openai:{model}").complete("Capital of France?", max_tokens=300, stop=["\n"], seed=7)
    assert rec.body() == {
        "model": model,
        "messages": [{"role": "user", "content": "Capital of France?"}],
        "max_completion_tokens": 300,
    }
    assert out.text == "Paris" and out.finish_reason == "stop"  # cut at the stop sequence by litm
    assert out.sampled


def test_openai_chat_variant_of_gpt5_is_not_a_reasoning_model() -> None:
    rec = Recorder((200, openai_chat()))
    gpt(rec, spec="openai:gpt-5-chat-latest").complete("hi", max_tokens=3, temperature=0.5)
    assert rec.body()["temperature"] == 0.5 and "stop" not in rec.body()


def test_built_prompts_are_sent_in_each_backends_native_form() -> None:
    prompt = build_prompt(["Paris is in France.", "Rome is in Italy."], "Where is Paris?", system="Be brief.")
    rec = Recorder((200, openai_chat()))
    openai_model = gpt(rec)
    openai_model.complete(prompt, max_tokens=3)
    assert rec.body()["messages"] == prompt.messages("openai")
    assert openai_model.count_tokens(prompt) == openai_model.tokenizer.count_messages(prompt.messages("openai"))
    rec = Recorder((200, anthropic_message()))
    claude(rec).complete(prompt, max_tokens=3)
    native = prompt.messages("anthropic")
    assert isinstance(native, dict)
    assert rec.body()["system"] == native["system"] and rec.body()["messages"] == native["messages"]
    body = {"id": "c", "object": "text_completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "text": " Paris", "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}}  # fmt: skip
    rec = Recorder((200, body))
    server = load_model("openai-compatible:http://10.0.0.5:8000/v1@m", http_client=rec.client())
    server.complete(prompt, max_tokens=3)
    assert rec.requests[0].url.path == "/v1/completions" and rec.body()["prompt"] == prompt.text


def test_bad_options_are_typed_errors_naming_the_value() -> None:
    model = gpt(Recorder())
    for kwargs, fragment in [
        ({"max_tokens": 0}, "max_tokens must be an integer >= 1, got 0"),
        ({"temperature": -1.0}, "temperature must be a number >= 0, got -1.0"),
        ({"seed": "7"}, "seed must be an integer, got '7'"),
        ({"stop": [3]}, "stop sequences must be strings, got 3"),
    ]:
        with pytest.raises(InvalidOptionError, match=fragment):
            model.complete("hi", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="timeout must be a number of seconds > 0, got 0"):
        load_model("openai:gpt-4o", timeout=0)
    with pytest.raises(InvalidOptionError, match="concurrency must be an integer >= 1, got 0"):
        load_model("anthropic:claude-haiku-4-5", concurrency=0)


def test_openai_compatible_sends_strings_to_completions_with_max_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    # The user's OpenAI key must not leak to a third-party server.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-secret")
    monkeypatch.delenv("LITM_COMPATIBLE_API_KEY", raising=False)
    body = {"id": "c", "object": "text_completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "text": " Paris", "finish_reason": "length", "logprobs": None}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}}  # fmt: skip
    rec = Recorder((200, body))
    model = load_model("openai-compatible:http://10.0.0.5:8000/v1@m", http_client=rec.client())
    out = model.complete("The capital of France is", max_tokens=2)
    request = rec.requests[0]
    assert str(request.url) == "http://10.0.0.5:8000/v1/completions"
    assert request.headers["authorization"] == "Bearer sk-no-key"  # placeholder: no key configured
    assert rec.body()["prompt"] == "The capital of France is" and rec.body()["max_tokens"] == 2
    assert (out.text, out.input_tokens, out.finish_reason) == (" Paris", 9, "length")


def test_openai_retries_429_then_succeeds() -> None:
    limited = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    fast = {"retry-after-ms": "1"}
    rec = Recorder((429, limited, fast), (503, {"error": {"message": "down"}}, fast), (200, openai_chat()))
    assert gpt(rec, max_retries=2).complete("hi").text == "Paris"
    assert len(rec.requests) == 3
    rec = Recorder((429, limited, {"retry-after-ms": "1"}))
    with pytest.raises(ModelError, match="HTTP 429"):
        gpt(rec, max_retries=0).complete("hi")


def test_openai_errors_are_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    message = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."
    too_long = {"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}}
    with pytest.raises(ContextWindowExceededError, match="maximum context length"):
        gpt(Recorder((400, too_long))).complete("hi")
    with pytest.raises(ModelError, match="rejected the API key"):
        gpt(Recorder((401, {"error": {"message": "Incorrect API key"}}))).complete("hi")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        load_model("openai:gpt-4o-mini").complete("hi")
    # With an exact tokenizer and a known window, an over-long prompt is refused before any request.
    checked = gpt(Recorder(), spec="openai:gpt-4", context_window=20)
    with pytest.raises(ContextWindowExceededError, match="20-token context window"):
        checked.complete("word " * 30, max_tokens=1)


def test_context_window_reported_by_vllm_style_servers() -> None:
    listing = {"object": "list", "data": [{"id": "other", "object": "model", "max_model_len": 4096},
                                          {"id": "m", "object": "model", "max_model_len": 32768}]}  # fmt: skip
    rec = Recorder((200, listing))
    model = gpt(rec, spec="openai-compatible:http://127.0.0.1:8000/v1@m")
    assert model.context_window == 32768 and model.context_window == 32768
    assert len(rec.requests) == 1 and rec.requests[0].url.path == "/v1/models"
