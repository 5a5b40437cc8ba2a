"""What a sweep will cost before it runs: calls, tokens, prefill under each schedule, and money.

Every prompt is built (that needs only the tokenizer), so the token counts are the real ones. Prefill
is what a single KV cache must evaluate when prompts run in a given order (:mod:`litm.probe._schedule`):
naive, the floor, the exact minimum, and the schedule's own cost. For a remote model the cache plan of
:mod:`litm.probe._caching` says how many prompt tokens the provider is expected to bill as cache reads
and writes, and the estimate prices the sweep with and without that caching (output at its
``max_tokens`` ceiling, so both are upper bounds on output), from the spend price table.

Example:
    >>> from litm.probe._testing import DeadZoneModel
    >>> est = estimate(DeadZoneModel(), ProbeConfig(lengths=(256,), depths=(0.0, 1.0), trials=1))
    >>> est.calls, est.input_tokens
    (3, 527)
    >>> print(est.describe(price_in=1.0, price_out=2.0).splitlines()[-1])
    estimated cost: $0.000719 (no prompt cache: $0.000719)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from litm.eval._results import ResultsLog
from litm.models._base import Model
from litm.probe._caching import cache_policy, plan_cache, planning_count
from litm.probe._corpus import Corpus
from litm.probe._cost import Pricer, provider_of
from litm.probe._grid import ProbeConfig, plan
from litm.probe._prepare import Prepared, ProbeContext, prepare
from litm.probe._runner import reuse_rule
from litm.probe._schedule import PrefillCost, PrefillMeter, batches, run_order, token_encoder
from litm.spend import Usage

__all__ = ["ProbeEstimate", "estimate", "prefill_tokens"]


def prefill_tokens(prompts: Sequence[str], encode: Callable[[str], list[int]]) -> int:
    """Tokens a single prefix cache evaluates for ``prompts`` in this order, reusing every shared token."""
    meter = PrefillMeter("full")
    meter.add_batch([(encode(p), None) for p in prompts])
    return meter.cost().scheduled


@dataclass(frozen=True)
class ProbeEstimate:
    """Calls, input tokens, the ``max_tokens`` ceiling on output, prefill, and the expected bill's usages."""

    calls: int
    done: int
    input_tokens: int
    max_output_tokens: int
    prefill_scheduled: int
    prefill_grid: int
    model: str
    name: str = ""
    provider: str | None = None
    prefill: PrefillCost | None = None
    cached: tuple[Usage, ...] = ()
    uncached: tuple[Usage, ...] = ()

    def bills(self, price_in: float | None = None, price_out: float | None = None) -> tuple[str, str] | None:
        """(with the provider's prompt cache, without it) in dollars, or None when the model has no price."""
        pricer = Pricer(self.name or self.model, self.provider, price_in=price_in, price_out=price_out)
        with_cache, without = pricer.bill(self.cached), pricer.bill(self.uncached)
        if with_cache.usd is None or without.usd is None:
            return None
        return with_cache.usd, without.usd

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """Dollars at the given prices per million tokens (output at its ceiling, no caching), or None."""
        if price_in is None and price_out is None:
            return None
        return (self.input_tokens * (price_in or 0) + self.max_output_tokens * (price_out or 0)) / 1e6

    def describe(self, price_in: float | None = None, price_out: float | None = None) -> str:
        ratio = self.prefill_scheduled / self.prefill_grid if self.prefill_grid else 1.0
        lines = [
            f"model: {self.model}",
            f"calls to run: {self.calls} ({self.done} already in the results file)",
            f"input tokens: {self.input_tokens:,}; output tokens at most: {self.max_output_tokens:,}",
            f"prefill with a prefix cache: {self.prefill_scheduled:,} scheduled vs {self.prefill_grid:,} "
            f"cell by cell ({ratio:.2f}x)",
        ]
        if self.prefill is not None:
            lines.append(self.prefill.describe())
        read = sum(u.cache_read_tokens for u in self.cached)
        if read:
            written = sum(u.cache_write_tokens for u in self.cached)
            lines.append(f"provider prompt cache: {read:,} input tokens expected as cache reads, {written:,} as writes")
        bills = self.bills(price_in, price_out)
        if bills is not None:
            lines.append(f"estimated cost: {bills[0]} (no prompt cache: {bills[1]})")
        else:
            lines.append("cost: pass --price-in / --price-out (USD per million tokens) for an estimate")
        return "\n".join(lines)


def estimate(
    model: Model,
    config: ProbeConfig,
    out_dir: str | Path | None = None,
    corpus: Corpus | None = None,
    *,
    model_options: dict[str, object] | None = None,
) -> ProbeEstimate:
    """Build every pending prompt of ``config`` (skipping rows already in ``out_dir``) and count it."""
    ctx = ProbeContext(model, config, corpus)
    done: set[str] = set()
    if out_dir is not None and (Path(out_dir) / "results.jsonl").exists():
        done = ResultsLog(Path(out_dir) / "results.jsonl").keys()
    specs = [s for s in plan(config) if s.key not in done]
    remote = bool(getattr(model, "remote", False))
    encode = token_encoder(model)
    rule = reuse_rule(model, model_options)
    meter = PrefillMeter(rule or "full")
    policy = cache_policy(model)
    count = planning_count(model)
    scheduled: list[Prepared] = []
    cached: list[Usage] = []
    for batch in batches(specs, "prefix"):
        items = run_order([prepare(s, ctx) for s in batch], "prefix", remote)
        meter.add_batch([(encode(p.built.prompt), p.needle_depth) for p in items])
        planned = plan_cache([p.built.prompt for p in items], count, policy) if policy is not None else []
        for i, p in enumerate(items):
            read, write = (planned[i].read_tokens, planned[i].write_tokens) if planned else (0, 0)
            tokens = max(p.built.prompt_tokens, read + write)
            cached.append(Usage(tokens, p.max_tokens, cache_read_tokens=read, cache_write_tokens=write))
        scheduled.extend(items)
    by_key = {p.spec.key: p for p in scheduled}
    grid = [by_key[s.key] for batch in batches(specs, "grid") for s in batch]
    return ProbeEstimate(
        calls=len(specs),
        done=len(done),
        input_tokens=sum(p.built.prompt_tokens for p in scheduled),
        max_output_tokens=sum(p.max_tokens for p in scheduled),
        prefill_scheduled=prefill_tokens([p.built.prompt for p in scheduled], encode),
        prefill_grid=prefill_tokens([p.built.prompt for p in grid], encode),
        model=getattr(model, "spec", "") or model.name,
        name=model.name,
        provider=provider_of(model),
        prefill=meter.cost() if rule is not None else None,
        cached=tuple(cached),
        uncached=tuple(Usage(u.input_tokens, u.output_tokens) for u in cached),
    )
