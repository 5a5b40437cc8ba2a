"""Cheaper probes (issue 18): the trie schedule, the stopping rule, provider caching and the cost report."""

from __future__ import annotations

from pathlib import Path

import pytest

from litm.models import load_model
from litm.probe import ProbeConfig, run_probe
from litm.probe._caching import CachePolicy, plan_cache
from litm.probe._cost import Pricer, row_usage
from litm.probe._grid import plan
from litm.probe._prepare import ProbeContext, prepare
from litm.probe._schedule import PrefillMeter, batches, lcp, run_order
from litm.probe._sequential import StoppingRule, simulate
from litm.probe._testing import DeadZoneModel
from litm.spend._cost import Usage
from litm.spend._prices import default_table
from test_models_remote import Recorder, anthropic_message

# -- trie schedule --------------------------------------------------------------------------------


def test_nested_filler_makes_a_shorter_length_a_prefix_of_the_longer_up_to_its_needle() -> None:
    cfg = ProbeConfig(lengths=(200, 400, 800), depths=(0.0, 0.5, 1.0), trials=2, layouts=("plain",), closed_book=False)
    ctx = ProbeContext(DeadZoneModel(), cfg)
    for group in batches(plan(cfg), "prefix"):
        items = [prepare(s, ctx) for s in group]
        needle_at = {id(p): p.built.prompt.index(p.instance.needles[0][1]) for p in items}
        for short in items:
            for long in items:
                if long.spec.length > short.spec.length:
                    # Same filler up to the first needle of the two (the separator before a needle aside): one
                    # trie across lengths as well as depths.
                    first = min(needle_at[id(short)], needle_at[id(long)])
                    assert lcp(short.built.prompt, long.built.prompt) >= first - 1


def test_prefill_account_on_a_constructed_trie() -> None:
    # Two prompts sharing 3 tokens; the deeper needle (1.0) one is the longest. Floor: 6 + (1-1)*6 + (1-.5)*6.
    meter = PrefillMeter("aligned:2")
    meter.add_batch([([1, 2, 3, 4, 5, 6], 1.0), ([1, 2, 3, 9, 9, 9], 0.5)])
    cost = meter.cost()
    assert (cost.naive, cost.floor, cost.trie) == (12, 9, 9)
    assert cost.scheduled == 6 + 6 - 2  # aligned reuse keeps one whole 2-token block of the 3 shared
    cold = PrefillMeter("cold")
    cold.add_batch([([1, 2, 3], None), ([1, 2, 3], None)])
    assert cold.cost().scheduled == 6 and cold.cost().floor == 6  # no needle: nothing is shared by design


def test_trie_schedule_gives_the_cold_prompts_and_answers_under_aligned_reuse(tmp_path: Path) -> None:
    cfg = ProbeConfig(lengths=(128, 256), depths=(0.0, 0.5, 1.0), trials=1, layouts=("plain",), closed_book=False)
    options = {"n_batch": 64, "n_threads": 1}
    trie = run_probe(load_model("local", reuse_prefix="aligned", **options), cfg, tmp_path / "t", progress=False,
                     model_options=options)  # fmt: skip
    cold_cfg = ProbeConfig(**{**cfg.to_dict(), "order": "grid"})
    cold = run_probe(load_model("local", reuse_prefix="cold", **options), cold_cfg, tmp_path / "c", progress=False,
                     model_options=options)  # fmt: skip
    by_key = {r["key"]: r for r in cold.rows}
    assert len(trie.rows) == len(cold.rows) == 6
    for r in trie.rows:
        assert r["prompt_sha256"] == by_key[r["key"]]["prompt_sha256"]
        assert r["output"] == by_key[r["key"]]["output"]  # aligned reuse: the answer a cold call gives
    assert trie.prefill is not None and cold.prefill is not None
    assert trie.prefill_tokens < cold.prefill_tokens == cold.input_tokens
    assert trie.prefill.scheduled == trie.prefill_tokens  # the account predicts what llama.cpp evaluated
    # The exact minimum bounds it; the floor formula is approximate (depth-0 needles share across lengths).
    assert trie.prefill.trie <= trie.prefill_tokens <= trie.prefill.naive == cold.input_tokens
    assert abs(trie.prefill_tokens - trie.prefill.floor) <= 0.1 * trie.prefill.floor


# -- stopping rule --------------------------------------------------------------------------------


def test_stopping_rule_stops_settled_cells_and_keeps_a_cell_near_the_decision() -> None:
    rule = StoppingRule(trials=12, min_trials=4)
    near = {(512, 0.0): (4, 4), (512, 0.5): (2, 4), (512, 1.0): (4, 4)}
    stopped = rule.settled(near, frozen=set())
    assert (512, 0.5) not in stopped  # 2/4 against 4/4: eight more trials could make it a dead zone
    clear = {(512, 0.0): (4, 4), (512, 0.5): (0, 4), (512, 1.0): (4, 4)}
    assert rule.settled(clear, frozen=set()) == set(clear)
    assert rule.settled(clear, frozen=set()) == rule.settled(clear, frozen=set())  # seeded by the counts


def test_stopping_rule_budget_minimum_and_precision() -> None:
    rule = StoppingRule(trials=6, min_trials=4, flip_risk=0.0)  # no verdict-based stops: the other rules alone
    counts = {(512, 0.0): (6, 6), (512, 0.5): (3, 3), (512, 1.0): (2, 5)}
    assert rule.settled(counts, frozen=set()) == {(512, 0.0)}  # at the budget; 3 < min_trials; 2/5 is wide
    precise = StoppingRule(trials=100, min_trials=4, target_half_width=0.15, flip_risk=0.0)
    assert precise.settled({(512, 0.0): (40, 40), (512, 0.5): (15, 30)}, frozen=set()) == {(512, 0.0)}
    with pytest.raises(ValueError, match="flip_risk"):
        StoppingRule(trials=6, flip_risk=1.5)


def test_simulated_error_rates_of_the_adaptive_verdicts() -> None:
    truth = {(length, d): (0.2 if d == 0.5 else 0.95) for length in (512, 1024) for d in (0.0, 0.5, 1.0)}
    res = simulate(truth, StoppingRule(trials=10, min_trials=4), runs=40, seed=1)
    assert res.trials_share < 0.75  # the rule saves trials on a clear dead zone
    assert res.adaptive_dead_zone_wrong <= res.fixed_dead_zone_wrong + 0.1
    assert res.dead_zone_differs <= 0.1


# -- provider caching and the cost report ---------------------------------------------------------


def test_cache_plan_reads_what_an_earlier_request_wrote() -> None:
    policy = CachePolicy("anthropic", min_tokens=2, step=1, explicit=True)
    prompts = ["aaaa bbbb X cccc", "aaaa bbbb cccc Y", "aaaa bbbb cccc dddd"]
    calls = plan_cache(prompts, lambda s: len(s.split()), policy)
    assert [c.breakpoints for c in calls] == [(10,), (10, 15), (15,)]
    assert [(c.read_tokens, c.write_tokens) for c in calls] == [(0, 2), (2, 1), (3, 0)]
    auto = plan_cache(prompts, lambda s: len(s.split()), CachePolicy("openai", 2, 1, explicit=False))
    assert all(c.breakpoints == () for c in auto) and [c.read_tokens for c in auto] == [0, 2, 3]


def test_anthropic_requests_carry_cache_control_at_the_breakpoints() -> None:
    rec = Recorder((200, anthropic_message("Paris", cache_read_input_tokens=1500, cache_creation_input_tokens=200)))
    model = load_model("anthropic:claude-haiku-4-5", api_key="sk-ant-test", http_client=rec.client())
    prompt = "filler " * 10 + "needle. Question?"
    out = model.complete(prompt, max_tokens=4, cache_at=(70,))
    (turn,) = rec.body()["messages"]
    assert turn["content"] == [
        {"type": "text", "text": prompt[:70], "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": prompt[70:]},
    ]
    assert (out.cached_tokens, out.cache_write_tokens, out.input_tokens) == (1500, 200, 21 + 1500 + 200)
    with pytest.raises(ValueError, match="cache_at"):
        model.complete(prompt, max_tokens=4, cache_at=(0,))
    with pytest.raises(ValueError, match="at most 4"):
        model.complete(prompt, max_tokens=4, cache_at=(1, 2, 3, 4, 5))


def test_cost_report_prices_cached_and_uncached_tokens_apart() -> None:
    table = default_table().with_prices(
        {"my-model": {"input": "3", "output": "15", "cache_read": "0.3", "cache_write": "3.75"}}
    )
    pricer = Pricer("my-model", prices=table)
    usage = Usage(10_000, 100, cache_read_tokens=8_000, cache_write_tokens=1_000)
    bill = pricer.bill([usage, Usage(2_000, 10)])
    # Per million tokens: 1,000 plain x $3 + 8,000 read x $0.3 + 1,000 write x $3.75 + 100 out x $15,
    # then 2,000 x $3 + 10 x $15.
    assert bill.micros == (3000 + 2400 + 3750 + 1500) + (6000 + 150)
    assert (bill.uncached_tokens, bill.cache_read_tokens, bill.cache_write_tokens) == (3_000, 8_000, 1_000)
    assert bill.usd == "$0.0168"
    # Unknown to the table, priced by override only: cache tokens are charged as input.
    flat = Pricer("unknown-model", price_in=2.0, price_out=8.0).bill([usage])
    assert flat.micros == 20_000 + 800
    assert Pricer("unknown-model").bill([usage]).micros is None  # no price: tokens, never a guessed dollar
    row = {"input_tokens": 10_000, "output_tokens": 100, "cached_tokens": 8_000, "cache_write_tokens": 1_000}
    assert row_usage(row) == usage


def test_remote_run_bills_the_rows_and_orders_prompts_for_the_cache(tmp_path: Path) -> None:
    cfg = ProbeConfig(lengths=(200, 400), depths=(0.0, 0.5, 1.0), trials=1, layouts=("plain",), closed_book=False)
    ctx = ProbeContext(DeadZoneModel(remote=True), cfg)
    (group,) = list(batches(plan(cfg), "prefix"))
    items = run_order([prepare(s, ctx) for s in group], "prefix", remote=True)
    longest = max(items, key=lambda p: (p.built.prompt_tokens, p.needle_depth or 0.0)).built.prompt
    shared = [lcp(p.built.prompt, longest) for p in items]
    assert shared == sorted(shared)  # each request leaves the longest prompt no earlier than the one before
    pricer = Pricer("fake", price_in=1.0, price_out=2.0)  # $1 / $2 per million: a token is 1 / 2 micro-dollars
    run = run_probe(DeadZoneModel(remote=True), cfg, tmp_path, progress=False, prices=pricer)
    assert run.bill is not None and run.bill.calls == 6
    assert run.bill.input_tokens == sum(r["input_tokens"] for r in run.rows) == run.input_tokens
    assert run.bill.micros == run.input_tokens + 2 * sum(r["output_tokens"] for r in run.rows)
