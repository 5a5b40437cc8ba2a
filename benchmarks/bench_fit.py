"""Token-gate cost: litm's fit against the naive evict-one-and-recount loop, on the same input, same run.

For 20, 100 and 500 documents (real NQ-Open passages) and a budget that keeps about a quarter of them, it
prints the wall time and the number of tokenizer calls of ``litm.budget.fit`` (binary search over the
ranking) and of the naive loop (drop the lowest-ranked document, re-render, recount, repeat), plus the
ratio. Counts use the embedded model's own tokenizer (llama.cpp), or ``--tokenizer openai:gpt-4``.

    .venv/bin/python benchmarks/bench_fit.py [--tokenizer local] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from importlib import resources
from typing import Any

from litm.budget import fit
from litm.budget._counting import Counter
from litm.placement import place
from litm.prompt import PromptBuilder
from litm.tokens import get_tokenizer

STRATEGY = "pyramid"


def passages(n: int) -> list[dict[str, Any]]:
    with gzip.open(str(resources.files("litm") / "data" / "nq-open-oracle.jsonl.gz"), "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for _, line in zip(range(n), f, strict=False)]
    return [{"id": f"nq-{i}", "title": r["ctxs"][0]["title"], "text": r["ctxs"][0]["text"], "score": 1 - i / n}
            for i, r in enumerate(rows)]


def naive_fit(docs: list[dict[str, Any]], question: str, builder: PromptBuilder, counter: Counter, budget: int) -> int:
    kept = list(docs)
    while True:
        if counter.text(builder.build(place(kept, STRATEGY), question).text) <= budget or not kept:
            return len(kept)
        kept.pop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokenizer", default="local")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tok = get_tokenizer(args.tokenizer)
    builder = PromptBuilder()
    question = "who got the first nobel prize in physics"
    print(f"tokenizer: {tok.name}")
    print(f"{'n':>5} {'budget':>7} {'kept':>5} {'fit ms':>9} {'fit calls':>9} {'naive ms':>10} {'naive calls':>11} "
          f"{'time ratio':>10}")
    for n in (20, 100, 500):
        docs = passages(n)
        full = tok.count(builder.build(place(docs, STRATEGY), question).text)
        budget = full // 4
        fit_times, naive_times = [], []
        for _ in range(args.repeat):
            c1 = Counter(tok)
            t0 = time.perf_counter()
            result = fit(docs, question, builder, c1, budget, strategy=STRATEGY)
            fit_times.append(time.perf_counter() - t0)
            c2 = Counter(tok)
            t0 = time.perf_counter()
            kept = naive_fit(docs, question, builder, c2, budget)
            naive_times.append(time.perf_counter() - t0)
            assert kept == len(result.kept), (kept, len(result.kept))
        f, nv = statistics.median(fit_times), statistics.median(naive_times)
        print(f"{n:>5} {budget:>7} {len(result.kept):>5} {f * 1e3:>9.1f} {c1.calls:>9} {nv * 1e3:>10.1f} "
              f"{c2.calls:>11} {f / nv:>10.3f}")


if __name__ == "__main__":
    main()
