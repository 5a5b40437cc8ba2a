"""What compression costs against what it saves: seconds per 1k document tokens for each scorer, beside the
target model's prefill seconds and the API input dollars the shorter prompt saves. One process, one run.

For the first ``--questions`` NQ-Open k = 20 benchmark items (the documents ``litm bench`` uses, gold passage
first), each scorer compresses the documents to ``1/ratio`` of their tokens (counted with the target
model's tokenizer), from a cold score cache. The target model (Qwen2.5-Coder 0.5B through llama.cpp, two
threads, no prefix reuse) then evaluates the original prompt and the compressed one once each, and the
time to the first token of each is recorded (prefill: the prompt is evaluated, one token generated). The
dollars are input tokens times each listed model's input rate from litm's price table.

Every time is measured in this one run, on one machine; quote the ratios. Nothing else should run: a
benchmark or test suite on the same cores changes every figure.

    .venv/bin/python benchmarks/bench_compress.py --questions 10 --ratio 4 --json docs/results/compress-cost/cost.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from litm.bench._design import build_prompt
from litm.bench._sources import load_bench_items
from litm.compress import ScoreCache, Scorer, compress
from litm.compress._compress import TargetCounter
from litm.compress._scorers import EmbedScorer, LMScorer, RetrieverScorer, StaticScorer
from litm.models import load_model
from litm.placement._documents import Doc
from litm.spend import PriceTable

API_MODELS = (("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4-5"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--ratio", type=float, default=4.0)
    ap.add_argument("--target", default="local:qwen2.5-coder-0.5b")
    ap.add_argument("--lm", default="local,local:smollm2", help="lm scorer models (comma-separated)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    items, _ = load_bench_items("nq", questions=args.questions, k=20)
    target = load_model(args.target, n_threads=args.threads, reuse_prefix="cold")
    counter = TargetCounter.of(target)
    scorers: dict[str, Any] = {
        "retriever": lambda: RetrieverScorer(),
        "embed": lambda: EmbedScorer(threads=args.threads),
        "static": lambda: StaticScorer(),
    }
    for spec in [s for s in args.lm.split(",") if s]:  # --lm "" measures no lm scorer
        scorers[f"lm:{spec}"] = lambda spec=spec: LMScorer(spec, n_threads=args.threads, cache=ScoreCache())
    table = PriceTable.load()
    results: dict[str, Any] = {}
    prompts: dict[str, list[tuple[str, str]]] = {}
    for name, make in scorers.items():
        scorer: Scorer = make()
        if hasattr(scorer, "cache"):
            scorer.cache = ScoreCache()  # cold: every score computed in this run
        seconds, doc_tokens, kept = [], [], []
        pairs = []
        for item in items:
            passages = item.ranked(1, 20)
            docs = [Doc(text=p.text, id=str(i), title=p.title) for i, p in enumerate(passages, start=1)]
            began = time.perf_counter()
            out = compress(docs, item.question, tokenizer=counter, ratio=args.ratio, scorer=scorer)
            seconds.append(time.perf_counter() - began)
            doc_tokens.append(out.original_tokens)
            kept.append(out.tokens)
            ranks = [int(c.original.id) for c in out.kept]
            shown = [type(passages[0])(passages[r - 1].pid, passages[r - 1].title, c.doc.text)
                     for r, c in zip(ranks, out.kept, strict=True)]  # fmt: skip
            pairs.append((build_prompt(passages, list(range(1, 21)), item.question),
                          build_prompt(shown, ranks, item.question)))  # fmt: skip
        prompts[name] = pairs
        total = sum(doc_tokens)
        results[name] = {
            "seconds_per_1k_doc_tokens": round(1000 * sum(seconds) / total, 4),
            "doc_tokens_per_second": round(total / sum(seconds), 1),
            "median_seconds_per_question": round(statistics.median(seconds), 4),
            "kept_fraction": round(sum(kept) / total, 4),
        }
        print(f"{name:24s} " + ", ".join(f"{k} {v}" for k, v in results[name].items()), flush=True)

    # The target model's prefill of the original and of the compressed prompt (embed's), one each.
    prefill: dict[str, list[float]] = {"original": [], "compressed": []}
    tokens: dict[str, list[int]] = {"original": [], "compressed": []}
    for original, compressed in prompts["embed"]:
        for label, text in (("original", original), ("compressed", compressed)):
            message = [{"role": "user", "content": text}]
            began = time.perf_counter()
            done = target.complete(message, max_tokens=1, temperature=0.0)
            prefill[label].append(time.perf_counter() - began)
            tokens[label].append(done.input_tokens)
    saved = {
        "original_prefill_s": round(statistics.mean(prefill["original"]), 4),
        "compressed_prefill_s": round(statistics.mean(prefill["compressed"]), 4),
        "original_input_tokens": round(statistics.mean(tokens["original"]), 1),
        "compressed_input_tokens": round(statistics.mean(tokens["compressed"]), 1),
    }
    saved["prefill_saved_s"] = round(saved["original_prefill_s"] - saved["compressed_prefill_s"], 4)
    for r in results.values():
        per_q, gain = r["median_seconds_per_question"], saved["prefill_saved_s"]
        r["compress_s_over_prefill_saved"] = round(per_q / gain, 3) if gain else None
    dollars = {}
    cut = saved["original_input_tokens"] - saved["compressed_input_tokens"]
    for provider, model in API_MODELS:
        rate = table.rates(model, provider=provider).base.input  # pico-dollars per token
        dollars[f"{provider}:{model}"] = {
            "input_usd_per_1k_questions_original": round(saved["original_input_tokens"] * rate * 1000 / 1e12, 4),
            "input_usd_per_1k_questions_saved": round(cut * rate * 1000 / 1e12, 4),
        }
    print(json.dumps({"prefill": saved, "dollars": dollars}, indent=2))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({
            "command": f"python benchmarks/bench_compress.py --questions {args.questions} --ratio {args.ratio:g} "
                       f"--target {args.target} --lm {args.lm} --threads {args.threads}",
            "questions": len(items), "ratio": args.ratio, "scorers": results, "prefill": saved, "dollars": dollars,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
            "at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        }, indent=2) + "\n", encoding="utf-8")  # fmt: skip


if __name__ == "__main__":
    main()
