"""``guard(client, budget=cap)``: the spend cap composed with the token gate, at the HTTP boundary.

The real ``openai`` and ``anthropic`` SDKs over a capturing transport (``http_capture``): "never sent" is the
transport seeing nothing. The ledger is a real SQLite file (and a real Redis server for the shared-store
test); the prices are the shipped snapshot (gpt-4o-mini $0.15 / $0.60, claude-sonnet-4-6 $3 / $15 per MTok,
i.e. 0.15 / 0.6 and 3 / 15 micro-dollars per token).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import pytest

from http_capture import USAGE_CHAT, Capture, Sent, anthropic_client, http, openai_client, reply, run
from litm.budget import SpendStep, guard, spend_key
from litm.budget._margin import upper_of
from litm.errors import (
    ContextBudgetExceeded,
    InvalidOptionError,
    PriceUnknownError,
    ReservationError,
    SpendBudgetExceeded,
    SpendRequestError,
)
from litm.models.tokenizers import count_request
from litm.spend import SpendCap
from litm.spend._ledger import SQLiteLedger
from litm.spend._money import micros_ceil
from litm.tokens import get_tokenizer
from spend_support import T0, Clock, MakeLedger, make_ledger_fixture  # noqa: F401

O200K = get_tokenizer("openai:gpt-4o-mini")  # exact for gpt-4o-mini, offline
SMALL = [{"role": "user", "content": "Say hi."}]
IN, OUT = 150_000, 600_000  # gpt-4o-mini, pico-dollars per token
CHAT_COST = micros_ceil(11 * IN + 1 * OUT)  # the transport's usage: 11 prompt tokens, 1 completion token


@pytest.fixture(params=[False, True], ids=["sync", "async"])
def is_async(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@dataclass
class Provider(Capture):
    """A capturing provider whose answers follow ``script``: a status code, or an exception to raise (a
    transport failure), one per request; 200 (the normal answer) once the script runs out."""

    script: list[Any] = field(default_factory=list)
    during: Any = None  # called with each request body before it is answered (a clock step, say)

    def handle(self, request: Any) -> Any:
        body = json.loads(request.content) if request.content else {}
        self.sent.append(Sent(request.method, request.url.path, body))
        if self.during is not None:
            self.during(body)
        action = self.script.pop(0) if self.script else 200
        if isinstance(action, BaseException):
            raise action
        if action != 200:
            # retry-after-ms keeps the SDK's retry wait at a millisecond
            return http.Response(action, headers={"retry-after-ms": "1"},
                                 json={"error": {"message": "boom", "type": "server_error"}})  # fmt: skip
        return reply(request.url.path, body)


def new_cap(path: Path, limit: str = "0.01", clock: Clock | None = None, ledger: Any = None) -> SpendCap:
    cap = SpendCap(ledger or SQLiteLedger(path / "spend.db", clock=clock or Clock()), scopes=["project:acme", "run:1"])
    cap.set_limit("project:acme", limit, window="daily")
    cap.set_limit("run:1", limit)
    return cap


def spent(cap: SpendCap) -> tuple[int, int]:
    """(settled, held) of the run's total counter."""
    (run_total,) = [c for c in cap.status(["run:1"])]
    return run_total.settled, run_total.held


def worst(tokens: int, max_tokens: int) -> int:
    return micros_ceil(tokens * IN + max_tokens * OUT)


def chat(client: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("messages", SMALL)
    return client.chat.completions.create(model="gpt-4o-mini", **kwargs)


# -- the common path ------------------------------------------------------------------------------------


def test_a_call_reserves_the_gate_bound_and_settles_the_reported_usage(make_ledger: MakeLedger, is_async: bool) -> None:
    cap = new_cap(Path(), ledger=make_ledger(Clock()))
    provider = Provider()
    client = guard(openai_client(provider, is_async=is_async), max_input_tokens=60, tokenizer=O200K, budget=cap)
    assert isinstance(client, openai.AsyncOpenAI if is_async else openai.OpenAI)
    resp = run(chat(client, max_completion_tokens=50))
    assert resp.usage.prompt_tokens == 11 and len(provider.sent) == 1
    assert provider.bodies[0]["max_completion_tokens"] == 50 and "stream_options" not in provider.bodies[0]
    (reserve, settle) = reversed([e for e in cap.history("run:1") if e.kind in ("reserve", "settle")])
    tokens = O200K.count_messages(SMALL)
    assert reserve.deltas[0][1] == worst(tokens, 50)  # the gate's exact count + 50 output tokens
    assert settle.deltas[0][2] == CHAT_COST  # exactly the reported usage
    assert spent(cap) == (CHAT_COST, 0)


def test_an_over_budget_call_is_refused_before_anything_is_sent(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path, limit="0.0005")  # 500 µ$: 1000 output tokens at $0.60/M do not fit
    provider = Provider()
    client = guard(openai_client(provider, is_async=is_async), tokenizer=O200K, budget=cap)  # no token limit
    with pytest.raises(SpendBudgetExceeded) as info:
        run(chat(client, max_tokens=1000))
    assert info.value.status_code == 402 and info.value.requested == worst(O200K.count_messages(SMALL), 1000)
    assert provider.sent == [] and spent(cap) == (0, 0)
    run(chat(client, max_tokens=100))  # a call that fits goes through
    assert len(provider.sent) == 1 and spent(cap) == (CHAT_COST, 0)


def test_the_token_gate_refuses_first_and_reserves_nothing(tmp_path: Path) -> None:
    cap = new_cap(tmp_path)
    provider = Provider()
    client = guard(openai_client(provider), max_input_tokens=5, tokenizer=O200K, budget=cap)
    with pytest.raises(ContextBudgetExceeded):
        chat(client, max_tokens=10)
    assert provider.sent == [] and cap.history("run:1", 1)[0].kind == "limit"


def test_an_approximate_count_is_held_at_the_gate_bound_without_a_second_margin(tmp_path: Path) -> None:
    cap = new_cap(tmp_path, limit="1")
    provider = Provider()
    estimate = get_tokenizer("anthropic:claude-sonnet-4-6")  # offline: an estimate with a stated margin
    assert not estimate.exact
    client = guard(anthropic_client(provider), tokenizer=estimate, budget=cap)
    client.messages.create(model="claude-sonnet-4-6", max_tokens=20, messages=SMALL)
    counted = count_request(estimate, {"messages": SMALL}, "anthropic")
    reserve = next(e for e in cap.history("run:1") if e.kind == "reserve")
    # No cache_control in the request: held at the input rate, the gate's bound, no margin added on top.
    assert reserve.deltas[0][1] == micros_ceil(upper_of(counted) * 3_000_000 + 20 * 15_000_000)
    assert spent(cap) == (micros_ceil(11 * 3_000_000 + 1 * 15_000_000), 0)


def test_an_anthropic_request_that_caches_is_held_at_the_cache_write_rate(tmp_path: Path) -> None:
    cap = new_cap(tmp_path, limit="1")
    client = guard(anthropic_client(Provider()), tokenizer=get_tokenizer("openai:gpt-4"), budget=cap)
    system = [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    client.messages.create(model="claude-sonnet-4-6", max_tokens=20, messages=SMALL, system=system)
    n = count_request(get_tokenizer("openai:gpt-4"), {"messages": SMALL, "system": system}, "anthropic").upper
    reserve = next(e for e in cap.history("run:1") if e.kind == "reserve")
    assert reserve.deltas[0][1] == micros_ceil(n * 6_000_000 + 20 * 15_000_000)  # 1 h writes: 2x input


def test_n_choices_are_held_n_times(tmp_path: Path) -> None:
    cap = new_cap(tmp_path)
    client = guard(openai_client(Provider()), tokenizer=O200K, budget=cap)
    chat(client, max_tokens=40, n=3)
    reserve = next(e for e in cap.history("run:1") if e.kind == "reserve")
    assert reserve.deltas[0][1] == worst(O200K.count_messages(SMALL), 120)


# -- refused before sending -------------------------------------------------------------------------------


def test_a_call_without_an_output_limit_is_refused_and_no_limit_is_added(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path)
    provider = Provider()
    client = guard(openai_client(provider, is_async=is_async), tokenizer=O200K, budget=cap)
    with pytest.raises(SpendRequestError, match="max_completion_tokens or max_tokens"):
        run(chat(client))
    with pytest.raises(SpendRequestError, match="max_output_tokens"):
        run(client.responses.create(model="gpt-4o-mini", input="Say hi."))
    with pytest.raises(SpendRequestError, match="max_tokens must be an integer"):
        run(chat(client, max_tokens=0))
    anthropic = guard(anthropic_client(provider, is_async=is_async), tokenizer=O200K, budget=cap)
    with pytest.raises(SpendRequestError, match="max_tokens"):
        run(anthropic.post("/v1/messages", cast_to=object, body={"model": "claude-sonnet-4-6", "messages": SMALL}))
    assert provider.sent == [] and spent(cap) == (0, 0)


def test_an_unknown_model_is_refused_never_priced_at_zero(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path)
    provider = Provider()
    client = guard(openai_client(provider, is_async=is_async), tokenizer=O200K, budget=cap)
    with pytest.raises(PriceUnknownError, match="'my-finetune'"):
        run(client.chat.completions.create(model="my-finetune", messages=SMALL, max_tokens=5))
    assert provider.sent == []
    # A price of the caller's own makes it a known model.
    priced = guard(openai_client(provider, is_async=is_async), tokenizer=O200K,
                   budget=cap.with_prices({"my-finetune": {"input": "1", "output": "2"}}))  # fmt: skip
    run(priced.chat.completions.create(model="my-finetune", messages=SMALL, max_tokens=5))
    assert len(provider.sent) == 1 and spent(cap) == (11 * 1 + 1 * 2, 0)


def test_a_key_names_one_call(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path)
    provider = Provider()
    client = guard(openai_client(provider, is_async=is_async), tokenizer=O200K, budget=cap)
    with spend_key("run-7:step-3"):
        run(chat(client, max_tokens=5))
    assert cap.ledger.get("run-7:step-3").state == "settled"
    with pytest.raises(ReservationError, match="already in the ledger"), spend_key("run-7:step-3"):
        run(chat(client, max_tokens=5))
    assert len(provider.sent) == 1
    keyed = guard(openai_client(provider, is_async=is_async), tokenizer=O200K,
                  budget=SpendStep(cap, key=lambda call: f"job-{len(call.body['messages'])}"))  # fmt: skip
    run(chat(keyed, max_tokens=5))
    assert cap.ledger.get("job-1").state == "settled"


def test_guard_needs_a_budget_or_a_token_limit(tmp_path: Path) -> None:
    raw = openai_client(Provider())
    with pytest.raises(InvalidOptionError, match="max_input_tokens=, budget="):
        guard(raw, tokenizer=O200K)
    with pytest.raises(SpendRequestError, match="SpendCap"):
        guard(raw, tokenizer=O200K, budget="spend.db")  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="trim"):
        guard(raw, tokenizer=O200K, budget=new_cap(tmp_path), on_exceed="trim")


# -- provider errors and the SDK's retries ----------------------------------------------------------------


@pytest.mark.parametrize(("failure", "charged"), [
    (400, False),  # refused: nothing billed
    (429, False),
    (500, True),   # may have run
    (http.ConnectError("connection refused"), False),  # never reached the provider
    (http.ReadTimeout("no answer"), True),  # sent, then no answer: may have run
])  # fmt: skip
def test_a_failed_call_is_refunded_only_when_nothing_can_have_been_billed(
    tmp_path: Path, is_async: bool, failure: Any, charged: bool
) -> None:
    cap = new_cap(tmp_path)
    provider = Provider(script=[failure])
    client = guard(openai_client(provider, is_async=is_async), tokenizer=O200K, budget=cap)
    with pytest.raises(openai.APIError):
        run(chat(client, max_tokens=50))
    hold = worst(O200K.count_messages(SMALL), 50)
    assert len(provider.sent) == 1 and spent(cap) == ((hold if charged else 0), 0)


def test_a_retry_after_a_refusal_reuses_the_hold(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path)
    provider = Provider(script=[429])
    client = guard(openai_client(provider, is_async=is_async).with_options(max_retries=1), tokenizer=O200K,
                   budget=cap)  # fmt: skip
    run(chat(client, max_tokens=50))
    assert len(provider.sent) == 2 and spent(cap) == (CHAT_COST, 0)
    assert [e.kind for e in reversed(cap.history("run:1", 2))] == ["reserve", "settle"]


def test_a_retry_after_a_billable_failure_is_reserved_on_its_own(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path)
    provider = Provider(script=[500])
    client = guard(openai_client(provider, is_async=is_async).with_options(max_retries=1), tokenizer=O200K,
                   budget=cap)  # fmt: skip
    with spend_key("step-1"):
        run(chat(client, max_tokens=50))
    hold = worst(O200K.count_messages(SMALL), 50)
    assert len(provider.sent) == 2 and spent(cap) == (hold + CHAT_COST, 0)  # the 500 may have run: charged
    assert cap.ledger.get("step-1").charged == hold and cap.ledger.get("step-1~1").charged == CHAT_COST


def test_a_retry_that_does_not_fit_is_never_sent(tmp_path: Path, is_async: bool) -> None:
    tokens = O200K.count_messages(SMALL)
    hold = worst(tokens, 500)
    cap = new_cap(tmp_path, limit=f"0.{hold + hold // 2:06d}")  # one hold fits, two do not
    provider = Provider(script=[502])
    client = guard(openai_client(provider, is_async=is_async).with_options(max_retries=2), tokenizer=O200K,
                   budget=cap)  # fmt: skip
    with pytest.raises(SpendBudgetExceeded):
        run(chat(client, max_tokens=500))
    assert len(provider.sent) == 1 and spent(cap) == (hold, 0)


# -- streams ----------------------------------------------------------------------------------------------


@dataclass
class OpenAIStreams(Provider):
    """Streams as OpenAI sends them: usage only when ``stream_options.include_usage`` asks for it, in one
    extra last chunk whose ``choices`` is empty."""

    def handle(self, request: Any) -> Any:
        super().handle(request)
        body = self.sent[-1].body
        base = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}
        chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
                  {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]  # fmt: skip
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": USAGE_CHAT})
        sse = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return http.Response(200, headers={"content-type": "text/event-stream"}, content=sse.encode())


def test_a_chat_stream_settles_when_it_ends_and_shows_only_what_was_asked(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path)
    provider = OpenAIStreams()
    client = guard(openai_client(provider, is_async=is_async), tokenizer=O200K, budget=cap)

    async def collect_async(stream: Any) -> list[Any]:
        return [chunk async for chunk in await stream]

    def collect(**kwargs: Any) -> list[Any]:
        stream = chat(client, max_tokens=50, stream=True, **kwargs)
        return asyncio.run(collect_async(stream)) if is_async else list(stream)

    chunks = collect()
    assert provider.bodies[0]["stream_options"] == {"include_usage": True}  # added, so the usage comes back
    # The provider's last chunk only carried the usage: the caller, who did not ask for it, does not see it.
    assert [c.choices[0].delta.content for c in chunks] == ["ok", None] and chunks[-1].usage is None
    assert spent(cap) == (CHAT_COST, 0)
    asked = collect(stream_options={"include_usage": True})
    assert len(asked) == 3 and asked[-1].choices == [] and asked[-1].usage.prompt_tokens == 11
    assert spent(cap) == (2 * CHAT_COST, 0)


def test_stream_helpers_and_responses_and_anthropic_streams_settle(tmp_path: Path) -> None:
    cap = new_cap(tmp_path, limit="1")
    provider = Provider()
    client = guard(openai_client(provider), tokenizer=O200K, budget=cap)
    with client.chat.completions.stream(model="gpt-4o-mini", messages=SMALL, max_tokens=20) as stream:
        assert stream.get_final_completion().choices[0].message.content == "ok"
    with client.responses.stream(model="gpt-4o-mini", input="Say hi.", max_output_tokens=20) as events:
        assert events.get_final_response().output_text == "ok"
    claude = guard(anthropic_client(provider), tokenizer=O200K, budget=cap)
    with claude.messages.stream(model="claude-sonnet-4-6", max_tokens=20, messages=SMALL) as messages:
        assert messages.get_final_text() == "ok"
    assert spent(cap) == (2 * CHAT_COST + micros_ceil(11 * 3_000_000 + 15_000_000), 0)


CLAUDE_COST = micros_ceil(11 * 3_000_000 + 1 * 15_000_000)  # claude-sonnet-4-6, the transport's usage
# api -> (output-limit field, the reported usage priced)
APIS = {"chat": ("max_tokens", CHAT_COST), "responses": ("max_output_tokens", CHAT_COST),
        "anthropic": ("max_tokens", CLAUDE_COST)}  # fmt: skip


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("api", list(APIS))
def test_every_api_holds_before_and_settles_its_usage_sync_and_async(
    tmp_path: Path, api: str, stream: bool, is_async: bool
) -> None:
    cap = new_cap(tmp_path, limit="1")
    provider = Provider()
    make = anthropic_client if api == "anthropic" else openai_client
    client = guard(make(provider, is_async=is_async), tokenizer=O200K, budget=cap)
    limit_field, cost = APIS[api]
    extra: dict[str, Any] = {limit_field: 50, **({"stream": True} if stream else {})}

    def call() -> Any:
        if api == "chat":
            return client.chat.completions.create(model="gpt-4o-mini", messages=SMALL, **extra)
        if api == "responses":
            return client.responses.create(model="gpt-4o-mini", input="Say hi.", **extra)
        return client.messages.create(model="claude-sonnet-4-6", messages=SMALL, **extra)

    async def consume_async() -> Any:
        got = await call()
        return [event async for event in got] if stream else got

    got = asyncio.run(consume_async()) if is_async else (list(call()) if stream else call())
    assert got and len(provider.sent) == 1 and provider.bodies[0][limit_field] == 50
    (reserve, settle) = reversed([e for e in cap.history("run:1") if e.kind in ("reserve", "settle")])
    assert reserve.deltas[0][1] > cost  # held the worst case before sending
    assert settle.deltas[0][2] == cost and spent(cap) == (cost, 0)  # settled exactly the reported usage


def test_an_aborted_stream_is_charged_its_full_hold(tmp_path: Path, is_async: bool) -> None:
    cap = new_cap(tmp_path)
    client = guard(openai_client(Provider(), is_async=is_async), tokenizer=O200K, budget=cap)
    hold = worst(O200K.count_messages(SMALL), 50)

    async def first_then_close() -> None:
        stream = await chat(client, max_tokens=50, stream=True)
        async for _ in stream:
            break
        await stream.close()

    if is_async:
        asyncio.run(first_then_close())
    else:
        stream = chat(client, max_tokens=50, stream=True)
        next(iter(stream))
        stream.close()  # the reader stopped before the usage came: the provider may bill up to the hold
    assert spent(cap) == (hold, 0)


def test_a_stream_that_breaks_is_charged_its_full_hold(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Any:
        yield b'data: {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}\n\n'
        raise http.ReadError("connection reset by peer")

    @dataclass
    class Breaking(Provider):
        def handle(self, request: Any) -> Any:
            super().handle(request)
            return http.Response(200, headers={"content-type": "text/event-stream"}, content=broken())

    cap = new_cap(tmp_path)
    client = guard(openai_client(Breaking()), tokenizer=O200K, budget=cap)
    with caplog.at_level(logging.WARNING, logger="litm.spend"), pytest.raises(openai.APIError):
        list(chat(client, max_tokens=50, stream=True))
    assert spent(cap) == (worst(O200K.count_messages(SMALL), 50), 0) and "stream failed" in caplog.text


def test_a_stream_never_read_keeps_its_hold_until_its_lease_charges_it(tmp_path: Path) -> None:
    clock = Clock()
    cap = new_cap(tmp_path, clock=clock)
    client = guard(openai_client(Provider()), tokenizer=O200K, budget=cap)
    stream = chat(client, max_tokens=50, stream=True)
    del stream  # dropped unread: nothing says what the provider billed
    hold = worst(O200K.count_messages(SMALL), 50)
    assert spent(cap) == (0, hold)  # still held, so no other call can spend it
    clock.advance(cap.lease_s + 1)
    cap.ledger.sweep()
    assert spent(cap) == (hold, 0)


def test_a_late_settle_after_the_lease_expired_lowers_the_charge(tmp_path: Path) -> None:
    clock = Clock()
    cap = new_cap(tmp_path, limit="1", clock=clock)
    cap.lease_s = 30
    client = guard(openai_client(Provider()), tokenizer=O200K, budget=cap)
    stream = chat(client, max_tokens=50, stream=True)
    hold = worst(O200K.count_messages(SMALL), 50)
    clock.advance(31)
    assert cap.ledger.sweep() == 1 and spent(cap) == (hold, 0)  # the reader is slow: charged in full
    list(stream)
    assert spent(cap) == (CHAT_COST, 0)  # the usage arrived: the charge moves down to it


def test_a_window_rollover_during_a_call_books_to_the_reserving_day(tmp_path: Path) -> None:
    clock = Clock(T0 + 59)  # 23:59:59 UTC, 31 March
    cap = new_cap(tmp_path, limit="1", clock=clock)
    provider = Provider(during=lambda body: clock.advance(2))  # the answer arrives on 1 April
    client = guard(openai_client(provider), tokenizer=O200K, budget=cap)
    chat(client, max_tokens=5)
    daily = {c.wid: (c.settled, c.held) for c in cap.ledger.status(["project:acme"])}
    assert daily == {"d2026-04-01": (0, 0)}  # the new day starts clean
    assert cap.ledger.counters()["project:acme|daily|d2026-03-31"] == (0, CHAT_COST)


# -- raw responses ----------------------------------------------------------------------------------------


def test_raw_response_wrappers_are_settled(tmp_path: Path) -> None:
    cap = new_cap(tmp_path)
    client = guard(openai_client(Provider()), tokenizer=O200K, budget=cap)
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o-mini", messages=SMALL, max_tokens=5)
    assert raw.parse().usage.prompt_tokens == USAGE_CHAT["prompt_tokens"]
    with client.chat.completions.with_streaming_response.create(model="gpt-4o-mini", messages=SMALL,
                                                                max_tokens=5) as response:  # fmt: skip
        assert response.parse().choices[0].message.content == "ok"
    assert spent(cap) == (2 * CHAT_COST, 0)


def test_a_busy_ledger_under_a_short_lock_wait_leaves_the_hold_open_to_book_again(tmp_path: Path) -> None:
    # The gateway settles on its event loop within SQLiteLedger.lock_wait and, when another connection holds
    # the write lock, settles again in a thread: the first try must leave the hold open, not log it away to
    # its lease (which would charge the call in full).
    import sqlite3

    from litm.budget import TokenGate
    from litm.budget._guard import Call
    from litm.errors import LedgerBusyError

    ledger = SQLiteLedger(tmp_path / "s.db")
    cap = SpendCap(ledger)
    cap.set_limit("team:a", "1")
    step = SpendStep(cap, key=lambda _call: "k1", scopes=("team:a",))
    body = {"model": "gpt-4o-mini", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    call = step.before(TokenGate(None, get_tokenizer("openai:gpt-4o-mini")).before(Call("openai-chat", "", body)))
    answer = {"usage": {"prompt_tokens": 8, "completion_tokens": 3, "total_tokens": 11}}
    blocker = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with ledger.lock_wait(0.01), pytest.raises(LedgerBusyError):
            step.after(call, answer)
        assert not SpendStep.reservation(call).closed
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    step.after(call, answer)
    record = ledger.get("k1")
    assert record is not None and record.state == "settled"
    assert SpendStep.reservation(call).settlement is not None
    assert SpendStep.reservation(call).settlement.cost < record.amount  # type: ignore[union-attr]
