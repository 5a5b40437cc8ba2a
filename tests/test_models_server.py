"""The ``openai-compatible`` backend against a real llama.cpp server (``python -m llama_cpp.server``).

The server (see ``fixtures_server.py``) runs SmolLM2 135M Instruct on 127.0.0.1; requests go through
litm's backend and through the raw ``openai`` SDK. Counts are compared with the server's own ``usage``.
"""

from __future__ import annotations

import threading

import pytest

from fixtures_server import Server, free_port
from litm.errors import ContextWindowExceededError, ModelError
from litm.models import complete_many, load_model
from litm.models._openai_backend import OpenAIModel

pytestmark = pytest.mark.server

QUESTION = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
COMPLETION = "The capital of France is"


def _model(server: Server, **options: object) -> OpenAIModel:
    model = load_model(server.spec, max_retries=0, timeout=60, **options)
    assert isinstance(model, OpenAIModel)
    return model


def test_chat_and_completion_through_the_backend(llama_server: Server) -> None:
    model = _model(llama_server, tokenizer="local:smollm2")
    chat = model.complete(QUESTION, max_tokens=8)
    assert chat.text.strip() and chat.finish_reason in ("stop", "length")
    assert 1 <= chat.output_tokens <= 8 and chat.latency_s > 0
    # Same GGUF, same chat template: litm's count equals the server's usage exactly.
    assert model.tokenizer.exact and chat.input_tokens == model.count_tokens(QUESTION)
    plain = model.complete(COMPLETION, max_tokens=4)  # a string goes to /completions unchanged
    assert plain.input_tokens == model.count_tokens(COMPLETION) == load_model("local:smollm2").count_tokens(COMPLETION)
    assert plain.output_tokens <= 4


def test_raw_openai_sdk_against_the_same_server(llama_server: Server) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=llama_server.base_url, api_key="sk-no-key", max_retries=0)
    try:
        resp = client.chat.completions.create(model=llama_server.alias, messages=QUESTION, max_tokens=8, temperature=0)
    finally:
        client.close()
    assert resp.choices[0].message.content
    assert resp.usage is not None
    assert resp.usage.prompt_tokens == load_model("local:smollm2").count_tokens(QUESTION)
    with OpenAI(base_url=llama_server.base_url, api_key="sk-no-key") as lister:
        assert [m.id for m in lister.models.list().data] == [llama_server.alias]


def test_counts_without_a_tokenizer_are_marked_approximate(llama_server: Server) -> None:
    model = _model(llama_server)
    assert not model.tokenizer.exact and "script-aware" in model.tokenizer.name
    # The estimate with its margin for an unknown (possibly small) vocabulary bounds the real count.
    upper = model.count_tokens(COMPLETION) * (1 + model.tokenizer.margin)  # type: ignore[attr-defined]
    assert upper >= load_model("local:smollm2").count_tokens(COMPLETION)


def test_complete_many_runs_requests_concurrently(llama_server: Server) -> None:
    model = _model(llama_server, concurrency=2)
    prompts = [f"{n} + {n} =" for n in range(3)]
    callers: list[tuple[int, str]] = []
    out = complete_many(
        model, prompts, max_tokens=3, on_result=lambda i, c: callers.append((i, threading.current_thread().name))
    )
    assert len(out) == 3 and all(c.output_tokens <= 3 for c in out)
    # Results are handed over in the calling thread, so a callback may write files without a lock.
    assert sorted(i for i, _ in callers) == [0, 1, 2]
    assert {name for _, name in callers} == {threading.current_thread().name}
    assert [c.input_tokens for c in out] == [load_model("local:smollm2").count_tokens(p) for p in prompts]


def test_prompt_longer_than_the_server_context_is_a_typed_error(llama_server: Server) -> None:
    long_prompt = "word " * (llama_server.n_ctx + 100)
    with pytest.raises(ContextWindowExceededError, match="context"):
        _model(llama_server).complete(long_prompt, max_tokens=4)  # refused by the server (HTTP 400)
    checked = _model(llama_server, tokenizer="local:smollm2", context_window=llama_server.n_ctx)
    with pytest.raises(ContextWindowExceededError, match="2048-token context window"):
        checked.complete(long_prompt, max_tokens=4)  # refused before sending: exact count and known window


def test_unreported_context_window_asks_for_the_option(llama_server: Server) -> None:
    with pytest.raises(ModelError, match="context_window=N"):
        _ = _model(llama_server).context_window


def test_server_down_is_a_model_error_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    model = load_model(f"openai-compatible:{url}@m", max_retries=0, timeout=5)
    with pytest.raises(ModelError, match=f"cannot reach {url}"):
        model.complete("hi", max_tokens=1)
