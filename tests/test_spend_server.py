"""The spend cap against a real llama.cpp OpenAI-compatible server (``llama_server``: SmolLM2 135M).

The witness that a refused call never reached the server is on the client side: an ``event_hooks`` request
hook on the real HTTP client records every request as it leaves. The server is priced with a user price
(``smollm2`` is in no price table); its own ``usage`` is what every settle must equal.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest

from fixtures_server import Server
from http_capture import http
from litm.budget import guard
from litm.errors import PriceUnknownError, SpendBudgetExceeded
from litm.models import complete_many, load_model
from litm.models._openai_backend import OpenAIModel
from litm.spend import SpendCap, charged
from litm.spend._ledger import SQLiteLedger
from litm.spend._money import micros_ceil
from litm.tokens import get_tokenizer

pytestmark = pytest.mark.server

PRICE = {"input": "100", "output": "200"}  # USD per MTok: 100 and 200 micro-dollars per token
IN, OUT = 100_000_000, 200_000_000  # the same, in pico-dollars per token
DOCS = Path(__file__).resolve().parents[1] / "docs" / "spend.md"


def cost(usage: Any) -> int:
    return micros_ceil(usage.prompt_tokens * IN + usage.completion_tokens * OUT)


def new_cap(tmp_path: Path, limit: str, alias: str) -> SpendCap:
    cap = SpendCap(SQLiteLedger(tmp_path / "spend.db"), scopes=["project:acme"], prices={alias: PRICE})
    cap.set_limit("project:acme", limit)
    return cap


def settled(cap: SpendCap) -> tuple[int, int]:
    (counter,) = cap.status()
    return counter.settled, counter.held


def sdk_client(server: Server, sent: list[str]) -> Any:
    from openai import OpenAI

    hooks = {"request": [lambda request: sent.append(request.url.path)]}
    return OpenAI(base_url=server.base_url, api_key="sk-no-key", max_retries=0, timeout=120,
                  http_client=http.Client(event_hooks=hooks, timeout=120))  # fmt: skip


def test_over_budget_never_reaches_the_server_and_in_budget_settles_to_its_usage(
    llama_server: Server, tmp_path: Path
) -> None:
    tok = get_tokenizer("local:smollm2")  # the server's own GGUF: the count is exact
    sent: list[str] = []
    messages = [{"role": "user", "content": "Say hi."}]
    worst = micros_ceil(tok.count_messages(messages) * IN + 8 * OUT)
    cap = new_cap(tmp_path, f"0.{worst:06d}", llama_server.alias)  # exactly one worst case fits
    client = guard(sdk_client(llama_server, sent), budget=cap, tokenizer=tok)
    with pytest.raises(SpendBudgetExceeded) as info:
        client.chat.completions.create(model=llama_server.alias, messages=messages, max_tokens=9)
    assert info.value.status_code == 402 and sent == []  # nothing left the process

    resp = client.chat.completions.create(model=llama_server.alias, messages=messages, max_tokens=8, temperature=0)
    assert sent == ["/v1/chat/completions"] and resp.usage is not None
    assert resp.usage.prompt_tokens == tok.count_messages(messages)
    assert settled(cap) == (cost(resp.usage), 0)  # exactly the server's reported usage, priced


def test_a_stream_without_usage_from_the_server_is_charged_its_full_hold(
    llama_server: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # llama.cpp's server ignores stream_options.include_usage: its stream never says what it cost.
    tok = get_tokenizer("local:smollm2")
    sent: list[str] = []
    cap = new_cap(tmp_path, "1", llama_server.alias)
    client = guard(sdk_client(llama_server, sent), budget=cap, tokenizer=tok)
    messages = [{"role": "user", "content": "Count to three."}]
    with caplog.at_level(logging.WARNING, logger="litm.spend"):
        text = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
            model=llama_server.alias, messages=messages, max_tokens=6, stream=True) if c.choices)  # fmt: skip
    assert text and sent == ["/v1/chat/completions"]
    assert settled(cap) == (micros_ceil(tok.count_messages(messages) * IN + 6 * OUT), 0)
    assert "stream ended without reporting usage" in caplog.text


def test_concurrent_complete_many_stays_within_a_small_limit_and_refused_calls_are_never_sent(
    llama_server: Server, tmp_path: Path
) -> None:
    sent: list[str] = []
    hooks = {"request": [lambda request: sent.append(request.url.path)]}
    model = OpenAIModel(llama_server.alias, base_url=llama_server.base_url, compatible=True, max_retries=0,
                        concurrency=4, tokenizer=get_tokenizer("local:smollm2"),
                        http_client=http.Client(event_hooks=hooks, timeout=120))  # fmt: skip
    prompts = [f"Question {i}: name a colour.\nAnswer:" for i in range(8)]
    worst = max(micros_ceil(model.count_tokens(p) * IN + 8 * OUT) for p in prompts)
    cap = new_cap(tmp_path, f"0.{3 * worst:06d}", llama_server.alias)  # about three calls fit, not eight
    paid = charged(model, cap, price=PRICE)
    with pytest.raises(SpendBudgetExceeded):
        complete_many(paid, prompts, max_tokens=8)
    done = [r for r in cap.ledger.reservations() if r.state == "settled"]
    total, held = settled(cap)
    assert held == 0 and total == sum(r.charged for r in done) <= 3 * worst
    assert 1 <= len(done) <= 3 and len(sent) == len(done)  # every refused call was refused before it was sent
    assert len(cap.ledger.reservations()) == len(done)  # and left nothing in the ledger

    # With room for all of them, every answer settles to exactly its own usage.
    (tmp_path / "roomy").mkdir()
    roomy = new_cap(tmp_path / "roomy", "1", llama_server.alias)
    answers = complete_many(charged(model, roomy, price=PRICE), prompts, max_tokens=8)
    billed = sum(micros_ceil(a.input_tokens * IN + a.output_tokens * OUT) for a in answers)
    assert settled(roomy) == (billed, 0) and all(a.input_tokens == model.count_tokens(p)
                                                 for a, p in zip(answers, prompts, strict=True))  # fmt: skip


def test_a_local_model_is_priced_by_the_callers_price_or_refused(tmp_path: Path) -> None:
    local = load_model("local:smollm2")
    cap = SpendCap(SQLiteLedger(tmp_path / "spend.db"), scopes=["project:acme"])
    cap.set_limit("project:acme", "1")
    with pytest.raises(PriceUnknownError, match="local model"):
        charged(local, cap)  # never $0
    out = charged(local, cap, price=PRICE).complete("The capital of France is", max_tokens=4)
    assert settled(cap) == (micros_ceil(out.input_tokens * IN + out.output_tokens * OUT), 0)


# -- the agent loop of docs/spend.md, as written there ----------------------------------------------------


def agent_loop_code() -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"<!-- agent-loop:begin -->\n```python\n(.*?)```\n<!-- agent-loop:end -->", text, re.S)
    assert match, "docs/spend.md lost its agent-loop block"
    return match.group(1)


def test_the_agent_loop_stops_every_agent_with_a_402_before_it_overspends(
    llama_server: Server, tmp_path: Path
) -> None:
    namespace: dict[str, Any] = {}
    exec(compile(agent_loop_code(), str(DOCS), "exec"), namespace)  # our own documented example, as written
    sent: list[str] = []
    limit = 400_000  # $0.40: a few steps per agent at this price
    cap = new_cap(tmp_path, "0.40", llama_server.alias)
    client = guard(sdk_client(llama_server, sent), budget=cap, max_input_tokens=1800,
                   tokenizer=get_tokenizer("local:smollm2"))  # fmt: skip
    usages: list[Any] = []

    def tool(resp: Any) -> str:  # a tool result of about sixty tokens: the prompt grows every step
        usages.append(resp.usage)
        return "Search results: " + "the harbour of Lisbon is old and busy with ships, " * 5

    tasks = [f"Task {i}: find the oldest harbour." for i in range(4)]
    results = namespace["run_agents"](client, llama_server.alias, tasks, tool, max_tokens=8)

    assert all(steps < 30 and isinstance(stop, SpendBudgetExceeded) and stop.status_code == 402
               for steps, stop in results)  # fmt: skip
    total, held = settled(cap)
    assert held == 0 and total <= limit  # the agents together never spent past the limit
    assert total == sum(cost(u) for u in usages)  # and what they spent is exactly what the server reported
    assert len(sent) == sum(steps for steps, _ in results) == len(usages)  # refused steps were never sent
    for _, stop in results:  # each refused step's worst case did not fit what was left
        assert stop.settled + stop.held + stop.requested > stop.limit == limit
    assert {r.key.rsplit(":", 1)[0] for r in cap.ledger.reservations()} == {f"agent-{i}" for i in range(4)}
    # The prompt grew at every step, so did each step's worst case; the agents ran several steps each.
    holds = {r.key: r.amount for r in cap.ledger.reservations()}
    assert min(steps for steps, _ in results) >= 2
    for i, (steps, _) in enumerate(results):
        amounts = [holds[f"agent-{i}:{step}"] for step in range(steps)]
        assert amounts == sorted(amounts) and amounts[0] < amounts[-1]
