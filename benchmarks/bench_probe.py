"""Dead-zone probe on the embedded model: the accuracy table, and what the prefix-sharing schedule saves.

Runs a needle grid (3 lengths x 5 depths x 10 trials, plus a 10-trial closed-book control) on the
embedded Gemma 3 270M four times, each in a fresh output directory:

========================  ========  ==========  ============================================
run                       order     KV reuse    purpose
========================  ========  ==========  ============================================
scheduled-aligned         prefix    aligned     the probe's default; its files are the result
naive-aligned             grid      aligned     baseline order for the default reuse mode
scheduled-full            prefix    full        every shared token reused (fastest)
cold                      prefix    cold        reference answers: no KV reuse at all
========================  ========  ==========  ============================================

"grid" (naive) runs cell by cell (length, depth, trial), so consecutive prompts share nothing but the
layout; "prefix" sorts each trial's prompts so shared prefixes run back to back.
It prints the accuracy table with Wilson intervals, the effective context length, and per run the wall
time, CPU time, prompt tokens, prefill tokens (prompt tokens the model actually evaluated) and the
agreement of its answers with the cold run. Each run's prompts are also rebuilt from the row recipes
(checking every ``prompt_sha256``) and replayed through the tokenizer in the order they ran, which gives
the prefill that full reuse would need for that order ("prefill if full"): the naive order's figure
there stands in for a naive-full run, which would evaluate the same tokens as naive-aligned. Wall time
on a shared machine is noisy; prefill tokens are deterministic. The ratio scheduled / naive is the figure.

    nice .venv/bin/python benchmarks/bench_probe.py --out docs/results/probe-gemma3-270m
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from litm.models import load_model
from litm.probe import ProbeConfig, recommended_max_input_tokens, run_probe, write_outputs
from litm.probe._estimate import prefill_tokens
from litm.probe._export import accuracy_table
from litm.probe._recipe import rebuild_prompt, verify_row

RUNS = (
    ("scheduled-aligned", "prefix", "aligned"),
    ("naive-aligned", "grid", "aligned"),
    ("scheduled-full", "prefix", "full"),
    ("cold", "prefix", "cold"),
)


def agreement(rows: list[dict[str, Any]], reference: dict[str, dict[str, Any]]) -> tuple[float, float]:
    """(share of identical outputs, share of identical hit/miss) against the reference run, by row key."""
    both = [(r, reference[r["key"]]) for r in rows if r["key"] in reference]
    if not both:
        return float("nan"), float("nan")
    same_text = sum(a["output"] == b["output"] for a, b in both) / len(both)
    same_hit = sum(a["hit"] == b["hit"] for a, b in both) / len(both)
    return same_text, same_hit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="local")
    ap.add_argument("--lengths", default="512,1024,2048")
    ap.add_argument("--depths", default="0,0.25,0.5,0.75,1")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--out", type=Path, default=Path("litm-out/bench-probe"), help="files of the default run")
    ap.add_argument("--work", type=Path, default=Path("litm-out/bench-probe-runs"), help="the other runs")
    ap.add_argument("--runs", default=",".join(name for name, _, _ in RUNS))
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all usable cores)")
    ap.add_argument("--max-tokens", type=int, default=None, help="answer length (default: the task's own)")
    args = ap.parse_args()

    wanted = set(args.runs.split(","))
    started = datetime.now(UTC).isoformat(timespec="seconds")
    results: dict[str, dict[str, Any]] = {}
    for name, order, reuse in RUNS:
        if name not in wanted:
            continue
        out = args.out if name == "scheduled-aligned" else args.work / name
        if out.exists():
            shutil.rmtree(out)
        options: dict[str, Any] = {"reuse_prefix": reuse}
        if args.threads:
            options["n_threads"] = args.threads
        model = load_model(args.model, **options)
        config = ProbeConfig(
            tasks=("needle",),
            lengths=tuple(int(x) for x in args.lengths.split(",")),
            depths=tuple(float(x) for x in args.depths.split(",")),
            trials=args.trials,
            order=order,  # type: ignore[arg-type]
            max_tokens=args.max_tokens,
        )
        cpu0, wall0 = time.process_time(), time.perf_counter()
        command = "nice .venv/bin/python benchmarks/bench_probe.py " + " ".join(sys.argv[1:])
        run = run_probe(model, config, out, progress=False, fresh=True, command=command)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        model_s = sum(r["latency_s"] for r in run.rows)
        prompts = [rebuild_prompt(r["recipe"]) for r in run.rows]  # rows are in the order they ran
        assert all(verify_row(r) for r in run.rows), "a recipe did not rebuild its prompt"
        full = prefill_tokens(prompts, model.tokenizer.encode)
        results[name] = {
            "run": run,
            "order": order,
            "reuse": reuse,
            "wall": wall,
            "cpu": cpu,
            "model_s": model_s,
            "prefill_if_full": full,
        }
        print(
            f"[{name}] {len(run.rows)} calls, wall {wall:.1f} s, cpu {cpu:.1f} s, "
            f"prefill {run.prefill_tokens} of {run.input_tokens} prompt tokens",
            flush=True,
        )
        if name == "scheduled-aligned":
            outputs = write_outputs(out, run.rows, run.settings, context_window=model.context_window)
            results[name]["outputs"] = outputs

    reference = {r["key"]: r for r in results["cold"]["run"].rows} if "cold" in results else {}
    print(f"\nmodel {args.model}; machine {platform.machine()}, {os.cpu_count()} CPU cores; started {started}")
    if "scheduled-aligned" in results:
        outputs = results["scheduled-aligned"]["outputs"]
        a = outputs.analyses["needle"]
        print("\n== needle accuracy, Wilson 95% interval, by length (rows) and depth (columns) ==")
        print(accuracy_table(a))
        for line in a.findings:
            print(f"- {line}")
        rec, why = recommended_max_input_tokens(a)
        print(f"- effective context length: {a.effective_length}; recommended max_input_tokens: {rec} ({why})")
    print(
        f"\n{'run':<18} {'order':<7} {'reuse':<8} {'calls':>5} {'wall s':>8} {'cpu s':>8} {'model s':>8} "
        f"{'prompt tok':>10} {'prefill tok':>11} {'if full':>8} {'same text':>9} {'same hit':>8}"
    )
    for name, r in results.items():
        run = r["run"]
        text, hit = agreement(run.rows, reference) if reference else (float("nan"), float("nan"))
        print(
            f"{name:<18} {r['order']:<7} {r['reuse']:<8} {len(run.rows):>5} {r['wall']:>8.1f} {r['cpu']:>8.1f} "
            f"{r['model_s']:>8.1f} {run.input_tokens:>10} {run.prefill_tokens:>11} {r['prefill_if_full']:>8} "
            f"{text:>9.3f} {hit:>8.3f}"
        )
    naive = results.get("naive-aligned")
    for reuse in ("aligned", "full"):
        s = results.get(f"scheduled-{reuse}")
        if s and naive:
            # The naive order shares (almost) nothing, so naive-aligned is also the naive-full baseline;
            # its "if full" prefill shows how little full reuse would save in that order.
            base = naive["prefill_if_full"] if reuse == "full" else naive["run"].prefill_tokens
            print(
                f"scheduled / naive ({reuse} reuse): wall {s['wall'] / naive['wall']:.2f}, "
                f"cpu {s['cpu'] / naive['cpu']:.2f}, prefill tokens {s['run'].prefill_tokens / base:.2f}"
            )
    summary = {
        name: {k: v for k, v in r.items() if k not in ("run", "outputs")}
        | {"prefill_tokens": r["run"].prefill_tokens, "input_tokens": r["run"].input_tokens}
        for name, r in results.items()
    }
    (args.work).mkdir(parents=True, exist_ok=True)
    (args.work / "bench-summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
