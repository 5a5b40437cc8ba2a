"""The guarded ``openai`` client against a real llama.cpp OpenAI-compatible server.

The witness is on the client side: an ``event_hooks`` request hook on the real HTTP client sees every
request as it leaves, so "the over-budget call never left" is the hook seeing nothing, and the in-budget
call is answered by the real server (its reported prompt tokens equal the gate's exact count).
"""

from __future__ import annotations

from typing import Any

import pytest

from fixtures_server import Server
from http_capture import http
from litm.budget import guard
from litm.errors import ContextBudgetExceeded
from litm.tokens import get_tokenizer

pytestmark = pytest.mark.server


def _client(server: Server, sent: list[Any]) -> Any:
    from openai import OpenAI

    hooks = {"request": [lambda request: sent.append((request.method, request.url.path))]}
    return OpenAI(base_url=server.base_url, api_key="sk-no-key", max_retries=0, timeout=60,
                  http_client=http.Client(event_hooks=hooks, timeout=60))  # fmt: skip


def test_over_budget_request_never_leaves_and_in_budget_one_is_answered(llama_server: Server) -> None:
    tok = get_tokenizer("local:smollm2")  # the server's own GGUF: counts are exact
    sent: list[Any] = []
    client = guard(_client(llama_server, sent), max_input_tokens=60, tokenizer=tok)
    small = [{"role": "user", "content": "Say hi."}]
    big = [{"role": "user", "content": "Tell me about Lisbon. " * 40}]
    assert tok.count_messages(small) <= 60 < tok.count_messages(big)

    with pytest.raises(ContextBudgetExceeded) as info:
        client.chat.completions.create(model=llama_server.alias, messages=big, max_tokens=4)
    assert info.value.prompt_tokens == tok.count_messages(big) and info.value.budget == 60
    assert sent == []  # nothing left the process

    resp = client.chat.completions.create(model=llama_server.alias, messages=small, max_tokens=4, temperature=0)
    assert sent == [("POST", "/v1/chat/completions")]
    assert resp.usage is not None and resp.usage.prompt_tokens == tok.count_messages(small)
    # What is not a prompt passes through to the real server.
    assert [m.id for m in client.models.list().data] == [llama_server.alias]


def test_trim_mode_compacts_history_and_the_server_counts_it_within_budget(llama_server: Server) -> None:
    tok = get_tokenizer("local:smollm2")
    sent: list[Any] = []
    client = guard(_client(llama_server, sent), max_input_tokens=120, tokenizer=tok, on_exceed="trim")
    history = [{"role": "system", "content": "You are terse."}]
    for i in range(8):
        history += [{"role": "user", "content": f"Question {i} about the harbour of Lisbon and its ships."},
                    {"role": "assistant", "content": f"Answer {i}: the harbour is busy and old."}]
    history.append({"role": "user", "content": "What did I ask first?"})
    assert tok.count_messages(history) > 120
    resp = client.chat.completions.create(model=llama_server.alias, messages=history, max_tokens=4, temperature=0)
    assert len(sent) == 1 and resp.usage is not None and resp.usage.prompt_tokens <= 120
