"""Speed of the local backend and what prefix reuse costs in answer stability.

Prints, for a local model (default: the embedded Gemma 3 270M):

1. prefill tokens/s for prompts of about 1k, 2k and 4k tokens, evaluated cold (one generated token);
2. the prefix-reuse speed-up: a second question on the same ~3,000-token context, with the KV cache of
   the first question reused, against the same prompt evaluated cold, for both reuse modes: ``full``
   (the longest shared prefix) and ``aligned`` (whole 512-token chunks only, litm's default);
3. how often greedy answers with reuse agree with cold answers: NQ-Open questions asked in a row over
   one shared context of their gold passages (``full`` re-evaluates only the short question tail, the
   case where llama.cpp's logits drift most from a cold run).

Filler and questions are real text: NaturalQuestions-Open gold passages from the bundled
``nq-open-oracle.jsonl.gz`` (Liu et al. 2023 release). Timings depend on the machine and its load (the
load average is printed; timings 1 and 2 are the best of ``--repeats`` runs); the agreement count does not.

Usage: python benchmarks/bench_models.py [--model local] [--questions 10] [--threads N] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import time
from importlib import resources
from typing import Any

from litm.models import load_model
from litm.models._local import LocalModel


def nq_rows() -> list[dict[str, Any]]:
    data = resources.files("litm") / "data" / "nq-open-oracle.jsonl.gz"
    with gzip.open(str(data), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def passage(row: dict[str, Any]) -> str:
    ctx = row["ctxs"][0]
    return f"Document (Title: {ctx['title']}) {ctx['text']}"


def text_of_tokens(model: LocalModel, paragraphs: list[str], target: int) -> str:
    """Real prose of about ``target`` tokens: whole passages, the last one cut to fit."""
    text = ""
    for para in paragraphs:
        candidate = f"{text}{para}\n\n"
        if model.count_tokens(candidate) > target:
            lo, hi = 0, len(para)
            while lo < hi:  # the longest cut of this passage that still fits
                mid = (lo + hi + 1) // 2
                if model.count_tokens(f"{text}{para[:mid]}") <= target:
                    lo = mid
                else:
                    hi = mid - 1
            return f"{text}{para[:lo]}"
        text = candidate
    raise ValueError(f"not enough filler text for {target} tokens")


def timed(model: LocalModel, prompt: str, **kwargs: Any) -> tuple[str, int, float, int]:
    out = model.complete(prompt, **kwargs)
    return out.text, out.input_tokens, out.latency_s, out.cached_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local", help="a local model spec (default: the embedded Gemma)")
    parser.add_argument("--questions", type=int, default=10, help="questions for the agreement check")
    parser.add_argument("--prefix", type=int, default=3000, help="shared context length for the speed-up")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: usable cores)")
    parser.add_argument("--repeats", type=int, default=3, help="timings 1 and 2: best of this many runs")
    args = parser.parse_args()
    reps = max(1, args.repeats)

    start = time.perf_counter()
    # Three views of one loaded model (they share the llama.cpp context and its KV cache).
    modes: dict[str, LocalModel] = {}
    for name in ("cold", "full", "aligned"):
        model = load_model(args.model, reuse_prefix=name, n_threads=args.threads)
        assert isinstance(model, LocalModel), "the benchmark measures local models"
        modes[name] = model
    cold = modes["cold"]
    rows = nq_rows()
    filler = [passage(r) for r in rows[100:400]]
    cold.complete("Warm-up: the first evaluation allocates llama.cpp's compute buffers.", max_tokens=1)
    print(f"model {cold.spec} ({cold.path.name}), {cold.n_threads} threads, flash attention on")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start\n")

    print(f"1. prefill, cold (prompt tokens / latency of a 1-token completion, best of {reps})")
    for target in (1024, 2048, 4096):
        prompt = text_of_tokens(cold, filler, target)
        n = cold.count_tokens(prompt)
        latency = min(timed(cold, prompt, max_tokens=1)[2] for _ in range(reps))
        print(f"   {n:>5} tokens  {latency:6.2f} s  {n / latency:7.0f} tokens/s")

    print(f"\n2. prefix reuse: a second question on a shared ~{args.prefix}-token context")
    context = text_of_tokens(cold, filler[150:], args.prefix)
    q1, q2 = rows[0]["question"], rows[1]["question"]

    def ask(question: str) -> str:
        return f"{context}\n\nQuestion: {question}?\nAnswer:"

    runs = [timed(cold, ask(q2), max_tokens=8, stop=["\n"]) for _ in range(reps)]
    cold_text, n, cold_s = runs[0][0], runs[0][1], min(r[2] for r in runs)
    print(f"   cold     {n:>5} tokens evaluated             {cold_s:6.2f} s")
    for name in ("full", "aligned"):
        runs = []
        for _ in range(reps):
            timed(cold, ask(q1), max_tokens=8, stop=["\n"])  # the first question, cold: its context is cached
            runs.append(timed(modes[name], ask(q2), max_tokens=8, stop=["\n"]))
        text, reused, secs = runs[0][0], runs[0][3], min(r[2] for r in runs)
        print(f"   {name:<8} {n - reused:>5} tokens evaluated ({reused:>4} reused) {secs:6.2f} s  "
              f"speed-up {cold_s / secs:5.1f}x  same answer as cold: {text == cold_text}")  # fmt: skip

    k = args.questions
    print(f"\n3. greedy answers with reuse vs cold: {k} NQ-Open questions in a row over one shared context")
    chosen = rows[:k]
    shared = "".join(f"{passage(r)}\n\n" for r in chosen)

    def nq(row: dict[str, Any]) -> str:
        return f"{shared}Question: {row['question']}?\nAnswer:"

    answers: dict[str, list[tuple[str, int, float, int]]] = {}
    for name in ("cold", "full", "aligned"):
        timed(cold, nq(rows[k]), max_tokens=12, stop=["\n"])  # another question primes the cache
        answers[name] = [timed(modes[name], nq(r), max_tokens=12, stop=["\n"]) for r in chosen]
    for i in range(k):
        c, f, a = answers["cold"][i], answers["full"][i], answers["aligned"][i]
        print(f"   cold {c[0].strip()[:30]!r:<34} full {'same' if f[0] == c[0] else 'DIFF'} (tail {c[1] - f[3]:>3})"
              f"  aligned {'same' if a[0] == c[0] else 'DIFF'} (tail {c[1] - a[3]:>3})")  # fmt: skip
    mean = {name: sum(x[2] for x in answers[name]) / k for name in answers}
    for name in ("full", "aligned"):
        agree = sum(answers[name][i][0] == answers["cold"][i][0] for i in range(k))
        print(f"   {name:<8} agrees with cold on {agree}/{k}; mean latency {mean[name]:.2f} s "
              f"vs cold {mean['cold']:.2f} s ({mean['cold'] / mean[name]:.1f}x)")  # fmt: skip
    print(f"   context {answers['cold'][0][1]} tokens")

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory {peak_mb:.0f} MB; total {time.perf_counter() - start:.0f} s; "
          f"load average {os.getloadavg()[0]:.2f} at end")  # fmt: skip


if __name__ == "__main__":
    main()
