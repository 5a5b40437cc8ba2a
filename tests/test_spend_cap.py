"""SpendCap, the user-facing API: reserve / settle / refund, the context manager, the decorator, async,
and the edge cases of issue 13, on both stores."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from litm.budget._margin import upper_of
from litm.errors import PriceUnknownError, ReservationError, SpendBudgetExceeded, SpendRequestError
from litm.models.tokenizers import TokenCount
from litm.models.tokenizers._base import UNSTATED_MARGIN
from litm.spend import PriceTable, SpendCap
from litm.spend._cost import APPROX_MARGIN
from litm.spend._ledger import SQLiteLedger
from spend_support import T0, Clock, MakeLedger, make_ledger_fixture  # noqa: F401

MINI = {"model": "gpt-4o-mini", "provider": "openai", "input_exact": True}


def make_cap(make_ledger: MakeLedger, clock: Clock | None = None, limit: str = "0.01", **options: Any) -> SpendCap:
    cap = SpendCap(make_ledger(clock or Clock()), scopes=["project:acme", "run:1"], **options)
    cap.set_limit("project:acme", limit, window="monthly")
    cap.set_limit("run:1", limit)
    return cap


def spent(cap: SpendCap) -> dict[tuple[str, str], tuple[int, int]]:
    return {(c.scope, c.window): (c.settled, c.held) for c in cap.status()}


def test_reserve_holds_the_worst_case_and_settle_charges_the_usage(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    r = cap.reserve(input_tokens=2000, max_tokens=500, **MINI)
    assert r.amount == 600 and r.max_tokens == 500 and not r.unbacked
    assert spent(cap)[("run:1", "total")] == (0, 600)
    out = r.settle({"prompt_tokens": 2000, "completion_tokens": 100})
    assert (out.cost, out.refunded) == (360, 240)
    assert spent(cap)[("run:1", "total")] == (360, 0)
    assert r.settle({"prompt_tokens": 9, "completion_tokens": 9}).replayed


def test_over_budget_call_is_refused_before_anything_runs(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger, limit="0.001")
    calls = []

    @cap.charged(max_tokens=1000, input_tokens=5000, **MINI)
    def call() -> dict[str, int]:
        calls.append(1)
        return {"prompt_tokens": 5000, "completion_tokens": 1}

    with pytest.raises(SpendBudgetExceeded) as info:
        call()
    assert calls == [] and info.value.status_code == 402 and info.value.requested == 1350
    assert spent(cap)[("run:1", "total")] == (0, 0)


def test_decorator_keeps_its_options_and_charges_unreadable_results_in_full(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)

    @cap.charged("gpt-4o-mini", provider="openai", max_tokens=100, input_tokens=1000, input_exact=True)
    def call(usage: object) -> object:
        return usage

    for _ in range(2):  # the second call still counts exactly (the options are not consumed)
        assert call({"prompt_tokens": 1000, "completion_tokens": 0}) == {"prompt_tokens": 1000, "completion_tokens": 0}
    assert spent(cap)[("run:1", "total")] == (300, 0)
    assert call("no usage here") == "no usage here"  # the call ran: its result comes back, its hold is charged
    assert spent(cap)[("run:1", "total")] == (300 + 210, 0)


def test_unknown_model_blocks_unless_an_explicit_amount_is_held(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    with pytest.raises(PriceUnknownError, match="'my-finetune'"):
        cap.reserve("my-finetune", provider="openai", input_tokens=10, max_tokens=10)
    assert spent(cap)[("run:1", "total")] == (0, 0)
    r = cap.reserve("my-finetune", provider="openai", amount="0.002")  # the caller states the worst case
    assert r.amount == 2000 and r.rates is None
    assert r.settle({"prompt_tokens": 10, "completion_tokens": 10}).cost == 2000  # unpriced: the full hold
    r2 = cap.reserve("my-finetune", provider="openai", amount="0.002")
    assert r2.settle(cost="0.0005").cost == 500


def test_an_unstated_count_gets_the_safety_margin(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    unstated = cap.reserve("gpt-4o-mini", provider="openai", input_tokens=2000, max_tokens=500)
    # One policy with the tokenizer layer: a count that states no margin gets UNSTATED_MARGIN (25 %).
    assert APPROX_MARGIN == UNSTATED_MARGIN == 0.25
    assert unstated.amount == 675 and unstated.estimate is not None and unstated.estimate.input_tokens == 2500
    exact = cap.estimate("gpt-4o-mini", provider="openai", input_tokens=2000, input_exact=True, max_tokens=500)
    assert exact.micros == 600


def test_a_token_count_is_held_at_its_own_bound(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    stated = TokenCount(2000, False, ("an estimate",), margin=0.1)
    r = cap.reserve("gpt-4o-mini", provider="openai", input_tokens=stated, max_tokens=500)
    assert r.estimate is not None and (r.estimate.input_tokens, r.estimate.margin) == (stated.upper, 0.1) == (2200, 0.1)
    # input_exact is not read for a TokenCount: the count says itself whether it is exact.
    exact = cap.estimate("gpt-4o-mini", provider="openai", input_tokens=TokenCount(2000, True), max_tokens=500)
    assert exact.input_tokens == 2000 and exact.micros == 600
    # An approximate count that states no margin is bounded as the token gate bounds it (upper_of).
    bare = TokenCount(2000, False)
    est = cap.estimate("gpt-4o-mini", provider="openai", input_tokens=bare, input_exact=True, max_tokens=500)
    assert est.input_tokens == upper_of(bare) == 2500
    with pytest.raises(SpendRequestError, match="margin"):
        SpendCap(cap.ledger, scopes=["run:1"], margin=-0.1).reserve(input_tokens=10, max_tokens=5, **MINI | {
            "input_exact": False})


def test_missing_max_tokens_is_refused(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    with pytest.raises(SpendRequestError, match="max_tokens is required"):
        cap.reserve(input_tokens=10, **MINI)
    with pytest.raises(SpendRequestError, match="no scopes"):
        SpendCap(cap.ledger).reserve(input_tokens=10, max_tokens=5, **MINI)
    with pytest.raises(SpendRequestError, match="bad scope"):
        cap.reserve(input_tokens=10, max_tokens=5, scopes=["run 1"], **MINI)


def test_cost_above_the_hold_is_recorded_and_logged(make_ledger: MakeLedger, caplog: pytest.LogCaptureFixture) -> None:
    cap = make_cap(make_ledger)
    r = cap.reserve(input_tokens=100, max_tokens=10, **MINI)
    with caplog.at_level(logging.WARNING, logger="litm.spend"):
        out = r.settle({"prompt_tokens": 100, "completion_tokens": 5000})  # a provider that ignored max_tokens
    assert out.over_hold and out.cost == 3015 > r.amount
    assert spent(cap)[("run:1", "total")] == (3015, 0)
    assert "above its hold" in caplog.text


def stream(chunks: int) -> Iterator[str]:
    for i in range(chunks):
        yield f"token{i}"
    raise ConnectionResetError("stream aborted by the peer")


def test_an_aborted_stream_is_charged_its_full_hold(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    with pytest.raises(ConnectionResetError), cap.hold(input_tokens=1000, max_tokens=200, **MINI) as r:
        for _ in stream(3):
            pass
    assert r.settlement is not None and r.settlement.cost == r.amount == 270
    assert spent(cap)[("run:1", "total")] == (270, 0)
    with cap.hold(input_tokens=1000, max_tokens=200, **MINI) as r2:
        r2.refund()  # certainly not sent: nothing charged
    assert spent(cap)[("run:1", "total")] == (270, 0)
    with cap.hold(input_tokens=1000, max_tokens=200, **MINI) as r3:
        pass  # forgot to settle: charged in full, never silently free
    assert r3.settlement is not None and r3.settlement.cost == 270


def test_a_late_settle_after_expiry_lowers_the_full_charge(make_ledger: MakeLedger) -> None:
    clock = Clock()
    cap = make_cap(make_ledger, clock, lease_s=30)
    r = cap.reserve(input_tokens=1000, max_tokens=500, **MINI)
    clock.advance(31)
    cap.ledger.sweep()
    assert spent(cap)[("run:1", "total")] == (450, 0)  # expired: charged in full
    out = r.settle({"prompt_tokens": 1000, "completion_tokens": 10})
    assert out.late and out.cost == 156
    assert spent(cap)[("run:1", "total")] == (156, 0)


def test_settle_by_key_from_another_process_uses_the_recorded_price_version(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    r = cap.reserve(input_tokens=1000, max_tokens=100, key="job-7:step-3", **MINI)
    other = SpendCap(cap.ledger, prices=PriceTable.load().with_prices({"gpt-4o-mini": {"input": "9", "output": "9"}}))
    with pytest.raises(PriceUnknownError, match="priced with table"):
        other.settle(r.key, {"prompt_tokens": 1000, "completion_tokens": 5})
    same = SpendCap(cap.ledger)
    assert same.settle(r.key, {"prompt_tokens": 1000, "completion_tokens": 5}).cost == 153
    with pytest.raises(ReservationError):
        same.settle("no-such-key", {"prompt_tokens": 1, "completion_tokens": 1})


def test_settle_by_key_keeps_the_request_context_of_the_reserve(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger, Clock(T0 + 200 * 86400))  # October 2026: OpenAI's priority tier is priced
    r = cap.reserve(input_tokens=1000, max_tokens=100, key="fast-1", price_context={"service_tier": "priority"}, **MINI)
    assert r.amount == 350
    out = SpendCap(cap.ledger).settle("fast-1", {"prompt_tokens": 1000, "completion_tokens": 100})
    assert out.cost == 250 + 100  # $0.25 / $1.00 per MTok: the priority rates, not the standard 150 + 60
    with pytest.raises(SpendRequestError):
        cap.reserve(input_tokens=1, max_tokens=1, price_context={"tier": "a|b"}, **MINI)


def test_the_same_key_never_holds_twice(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)
    a = cap.reserve(input_tokens=1000, max_tokens=100, key="agent:step-1", **MINI)
    b = cap.reserve(input_tokens=1000, max_tokens=100, key="agent:step-1", **MINI)
    assert b.record.replayed and spent(cap)[("run:1", "total")] == (0, a.amount)
    with pytest.raises(ReservationError):
        cap.reserve(input_tokens=5000, max_tokens=100, key="agent:step-1", **MINI)


def test_async_api_and_async_decorator(make_ledger: MakeLedger) -> None:
    cap = make_cap(make_ledger)

    @cap.charged(max_tokens=50, input_tokens=lambda text: (len(text.split()), False), model="gpt-4o-mini",
                 provider="openai")
    async def ask(text: str) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"prompt_tokens": len(text.split()), "completion_tokens": 3}

    async def main() -> None:
        r = await cap.areserve(input_tokens=100, max_tokens=10, **MINI)
        assert (await r.asettle({"prompt_tokens": 100, "completion_tokens": 10})).cost == 21
        results = await asyncio.gather(*(ask(f"question number {i}") for i in range(5)))
        assert len(results) == 5
        async with cap.ahold(input_tokens=10, max_tokens=10, **MINI) as r2:
            await r2.arefund()
        with pytest.raises(ValueError):
            async with cap.ahold(input_tokens=10, max_tokens=10, **MINI):
                raise ValueError("boom")

    asyncio.run(main())
    # 21 + 5 x (3 x 0.15 + 3 x 0.6 rounded up) + 0 + the aborted hold (10 x 0.15 + 10 x 0.6 -> 8)
    assert spent(cap)[("run:1", "total")] == (21 + 5 * 3 + 8, 0)


def test_fail_open_is_explicit_and_logged(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    ledger = SQLiteLedger(tmp_path / "s.db", busy_timeout_s=0.1)
    cap = SpendCap(ledger, scopes=["p"], fail_open=True)
    cap.set_limit("p", "1")
    ledger.path = tmp_path / "gone" / "s.db"  # the store becomes unreachable
    ledger.close()
    with caplog.at_level(logging.WARNING, logger="litm.spend"):
        r = cap.reserve(input_tokens=10, max_tokens=10, **MINI)
        r.settle({"prompt_tokens": 10, "completion_tokens": 10})
    assert r.unbacked and "UNBACKED" in caplog.text and "not recorded" in caplog.text
