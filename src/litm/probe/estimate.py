"""What a sweep will cost before it runs: calls, tokens, prefill under each schedule, and money.

Every prompt is built (that needs only the tokenizer), so the token counts are the real ones. Prefill
is what a single KV cache must evaluate when prompts run in a given order: each prompt's tokens minus
the prefix it shares with the previous one. For a remote model that is what provider prompt caching
could save at best; the cost estimate charges every input token (no caching assumed).

Example:
    >>> est = estimate(load_model("openai:gpt-4o-mini"), ProbeConfig(trials=5))    # doctest: +SKIP
    >>> print(est.describe(price_in=0.15, price_out=0.60))                         # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from litm.errors import LitmError
from litm.eval.results import ResultsLog
from litm.models.base import Model
from litm.probe.corpus import Corpus
from litm.probe.grid import ProbeConfig, plan
from litm.probe.runner import Prepared, ProbeContext, batches, prepare, schedule

__all__ = ["Estimate", "estimate", "prefill_tokens"]


def _shared(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _encoder(model: Model) -> Callable[[str], list[int]]:
    """Token ids, or for a counting-only tokenizer (an estimate), 4-character chunks as pseudo-tokens."""
    tok = model.tokenizer
    try:
        tok.encode("probe")
        return tok.encode
    except LitmError:

        def approx(text: str) -> list[int]:
            return [hash(text[i : i + 4]) for i in range(0, len(text), 4)]

        return approx


def prefill_tokens(prompts: Sequence[str], encode: Callable[[str], list[int]]) -> int:
    """Tokens a single prefix cache evaluates for ``prompts`` in this order (at least 1 per prompt)."""
    total = 0
    prev: list[int] = []
    for p in prompts:
        toks = encode(p)
        # llama.cpp re-evaluates at least the last prompt token to get fresh logits.
        total += len(toks) - min(_shared(prev, toks), len(toks) - 1)
        prev = toks
    return total


@dataclass(frozen=True)
class Estimate:
    """Calls, input tokens, the ``max_tokens`` ceiling on output, and prefill for the two schedules."""

    calls: int
    done: int
    input_tokens: int
    max_output_tokens: int
    prefill_scheduled: int
    prefill_grid: int
    model: str

    def cost(self, price_in: float | None, price_out: float | None) -> float | None:
        """Dollars at the given prices per million tokens (output at its ceiling), or None."""
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
        cost = self.cost(price_in, price_out)
        if cost is not None:
            lines.append(f"estimated cost: ${cost:,.4f} (no prompt caching assumed)")
        else:
            lines.append("cost: pass --price-in / --price-out (USD per million tokens) for an estimate")
        return "\n".join(lines)


def estimate(
    model: Model, config: ProbeConfig, out_dir: str | Path | None = None, corpus: Corpus | None = None
) -> Estimate:
    """Build every pending prompt of ``config`` (skipping rows already in ``out_dir``) and count it."""
    ctx = ProbeContext(model, config, corpus)
    done: set[str] = set()
    if out_dir is not None and (Path(out_dir) / "results.jsonl").exists():
        done = ResultsLog(Path(out_dir) / "results.jsonl").keys()
    specs = [s for s in plan(config) if s.key not in done]
    scheduled: list[Prepared] = []
    for batch in batches(specs, "prefix"):
        scheduled.extend(schedule([prepare(s, ctx) for s in batch], "prefix"))
    by_key = {p.spec.key: p for p in scheduled}
    grid = [by_key[s.key] for batch in batches(specs, "grid") for s in batch]
    encode = _encoder(model)
    return Estimate(
        calls=len(specs),
        done=len(done),
        input_tokens=sum(p.built.prompt_tokens for p in scheduled),
        max_output_tokens=sum(p.max_tokens for p in scheduled),
        prefill_scheduled=prefill_tokens([p.built.prompt for p in scheduled], encode),
        prefill_grid=prefill_tokens([p.built.prompt for p in grid], encode),
        model=getattr(model, "spec", "") or model.name,
    )
