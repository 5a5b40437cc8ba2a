"""Prefill speed of a local model at llama.cpp batch 512, 128 and 64, side by side in one process.

Aligned prefix reuse (``litm.models._local.kv_reuse``) keeps shared prompt prefixes in whole batches, so a
smaller batch keeps more of them; this measures what a smaller batch costs in prefill speed on this
machine. Each round evaluates the same benchmark prompt (the first bundled NQ question, its gold passage in slot 5
of 10, Liu et al.'s format, about 1,300 tokens) cold once per batch size, the sizes in turn; the
figures are medians of the rounds and their ratio to batch 512. Run it alone::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_batch_size.py [--model local:qwen2.5-coder-0.5b]
        [--threads 1] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
from typing import Any

from litm.bench._data import load_items
from litm.bench._design import build_prompt
from litm.models import load_model

BATCHES = (512, 128, 64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="local:qwen2.5-coder-0.5b")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    item = load_items(1, k=10)[0]
    prompt = build_prompt(item.ranked(5, 10), list(range(1, 11)), item.question)  # the gold passage in slot 5
    models: dict[int, Any] = {
        b: load_model(args.model, n_batch=b, n_threads=args.threads, reuse_prefix="cold") for b in BATCHES
    }
    print(f"model {args.model}, {args.threads} thread(s), load average at start {os.getloadavg()}", flush=True)
    rates: dict[int, list[float]] = {b: [] for b in BATCHES}
    tokens = 0
    for rnd in range(args.rounds + 1):
        for b, model in models.items():
            done = model.complete(prompt, max_tokens=1)
            tokens = done.input_tokens
            if rnd:  # round 0 loads each model and warms the page cache: not timed
                rates[b].append(done.input_tokens / done.latency_s)
                print(f"round {rnd}  batch {b:>3}  {done.input_tokens} tokens  {rates[b][-1]:.1f} tok/s", flush=True)
    print(f"load average at end {os.getloadavg()}\n")
    print(f"| batch | prompt tokens | tok/s (median of {args.rounds}, range) | against 512 |")
    print("| ---: | ---: | ---: | ---: |")
    base = statistics.median(rates[512])
    for b in BATCHES:
        med = statistics.median(rates[b])
        print(f"| {b} | {tokens} | {med:.1f} ({min(rates[b]):.1f}-{max(rates[b]):.1f}) | {med / base:.2f}x |")


if __name__ == "__main__":
    main()
