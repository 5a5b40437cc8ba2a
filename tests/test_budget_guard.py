"""The guarded ``openai`` client against a real llama.cpp OpenAI-compatible server.

The server's own access log is the witness: an over-budget request must leave no line in it, an in-budget
one must be answered. Anthropic's API is unreachable here, so its wrapper is tested at the HTTP boundary
with the SDK's ``MockTransport`` (the request that would have gone out is inspected, nothing is sent).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import time
from typing import Any

import pytest

from fixtures_server import Server
from litm.budget import guard
from litm.errors import ContextBudgetExceeded, LitmError
from litm.models import load_model

pytestmark = pytest.mark.server

# The SDKs' HTTP library: httpx2 for the installed openai/anthropic releases, httpx for older ones.
http = importlib.import_module("httpx2") if importlib.util.find_spec("httpx2") else importlib.import_module("httpx")


def _openai(server: Server) -> Any:
    from openai import OpenAI

    return OpenAI(base_url=server.base_url, api_key="sk-no-key", max_retries=0, timeout=60)


def _wait_log(server: Server, path: str, at_least: int) -> int:
    deadline = time.monotonic() + 5
    seen = server.requests_seen(path)
    while seen < at_least and time.monotonic() < deadline:
        time.sleep(0.1)
        seen = server.requests_seen(path)
    return seen


def test_over_budget_request_never_reaches_the_server(llama_server: Server) -> None:
    tok = load_model("local:smollm2").tokenizer  # the server's own GGUF: counts are exact
    client = guard(_openai(llama_server), max_input_tokens=60, tokenizer=tok)
    small = [{"role": "user", "content": "Say hi."}]
    big = [{"role": "user", "content": "Tell me about Lisbon. " * 40}]
    assert tok.count_messages(small) <= 60 < tok.count_messages(big)

    before = llama_server.requests_seen("/v1/chat/completions")
    with pytest.raises(ContextBudgetExceeded) as info:
        client.chat.completions.create(model=llama_server.alias, messages=big, max_tokens=4)
    assert info.value.prompt_tokens == tok.count_messages(big) and info.value.budget == 60
    time.sleep(0.5)
    assert llama_server.requests_seen("/v1/chat/completions") == before  # the server saw nothing

    resp = client.chat.completions.create(model=llama_server.alias, messages=small, max_tokens=4, temperature=0)
    assert resp.usage.prompt_tokens == tok.count_messages(small)
    assert _wait_log(llama_server, "/v1/chat/completions", before + 1) == before + 1
    # Everything that is not create() passes through to the real client.
    assert [m.id for m in client.models.list().data] == [llama_server.alias]


def test_trim_mode_compacts_history_and_sends_it(llama_server: Server) -> None:
    tok = load_model("local:smollm2").tokenizer
    client = guard(_openai(llama_server), max_input_tokens=120, tokenizer=tok, on_exceed="trim")
    history = [{"role": "system", "content": "You are terse."}]
    for i in range(8):
        history += [{"role": "user", "content": f"Question {i} about the harbour of Lisbon and its ships."},
                    {"role": "assistant", "content": f"Answer {i}: the harbour is busy and old."}]
    history.append({"role": "user", "content": "What did I ask first?"})
    assert tok.count_messages(history) > 120
    resp = client.chat.completions.create(model=llama_server.alias, messages=history, max_tokens=4, temperature=0)
    assert resp.usage.prompt_tokens <= 120


def _anthropic_transport(seen: list[dict[str, Any]]) -> Any:
    def handler(request: Any) -> Any:
        seen.append(json.loads(request.content))
        return http.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        })

    return http.MockTransport(handler)


def test_anthropic_client_is_gated_at_the_http_boundary() -> None:
    from anthropic import Anthropic

    seen: list[dict[str, Any]] = []
    raw = Anthropic(api_key="test-key", http_client=http.Client(transport=_anthropic_transport(seen)), max_retries=0)
    client = guard(raw, max_input_tokens=50, tokenizer=lambda text: len(text.split()))
    with pytest.raises(ContextBudgetExceeded):
        client.messages.create(model="claude-test", max_tokens=5, system="word " * 60,
                               messages=[{"role": "user", "content": "hi"}])
    assert seen == []  # the system prompt counts: refused before any request was built
    out = client.messages.create(model="claude-test", max_tokens=5, system="Be brief.",
                                 messages=[{"role": "user", "content": "hi"}])
    assert out.content[0].text == "ok" and len(seen) == 1 and seen[0]["system"] == "Be brief."


def test_guard_rejects_unknown_clients_and_bad_options() -> None:
    with pytest.raises(LitmError, match=r"supports openai\.OpenAI and anthropic\.Anthropic"):
        guard(object(), max_input_tokens=10, tokenizer=len)
    with pytest.raises(LitmError):
        guard(object(), max_input_tokens=0, tokenizer=len)
    with pytest.raises(LitmError):
        guard(object(), max_input_tokens=10, tokenizer=len, on_exceed="shrug")  # type: ignore[arg-type]
