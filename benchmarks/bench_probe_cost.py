"""What a dead-zone probe costs, three ways on the same grid in one process: model-seconds, tokens, dollars.

On the embedded model (Gemma 3 270M, llama.cpp on CPU), one needle grid (plain layout, no closed-book
control) is run three times, each in a fresh output directory:

==================  ===========================================================================
run                 what it is
==================  ===========================================================================
needlehaystack      the peers' way: one cold call per cell and trial (no KV reuse), cell by cell,
                    every cell to the full trial count
fixed-trie          litm's fixed grid: the trie schedule (nested filler, prompts sorted per trial),
                    aligned KV reuse (whole 64-token batches, answers equal to a cold run's)
adaptive            the same schedule with the sequential stopping rule (``adaptive=True``)
==================  ===========================================================================

Per run: model-seconds (the sum of call latencies, the model's own time), prompt tokens, prefill tokens
(what the model evaluated: prompt minus reused), the prefill account of the run (naive / floor / achieved)
and the two verdicts of the report (pooled dead-zone depths, effective length), compared with the
needlehaystack run's. Answers of the fixed-trie run are compared with the cold run's row by row (aligned
reuse must give the same answers).

For an API model (no call is made) the same three designs are priced from their token accounting on the
probe's default lengths (1k / 2k / 4k: an API probe's lengths; the embedded grid's prompts are shorter
than Anthropic's 1,024-token minimum cacheable prefix), prompts built with the model's offline token
estimate: needlehaystack = every prompt billed as uncached input (no ``cache_control``, so Anthropic
caches nothing); fixed-trie = the trie order with the cache plan of ``litm.probe._caching`` (reads at the
cache-read rate, writes at the cache-write rate); adaptive = the same, for the (length index, depth,
trial) cells the embedded adaptive run actually ran. Output is billed at the measured answer lengths'
ceiling (``max_tokens``). Prices: the spend price table (``litm.spend``); ``--api-models`` picks the models
(two Anthropic ones, which bill cache writes at 1.25x, and two OpenAI ones, which cache by themselves with no
write premium). Two more rows bound every schedule: ``ceiling-fixed`` bills each prompt's shareable prefix (the
longest it has in common with another prompt of its trial) at the cache-read rate and writes nothing, and
``ceiling-stopping`` does the same for ``--min-trials`` trials per cell, the fewest the stopping rule runs.

    nice /work/main/.venv/bin/python benchmarks/bench_probe_cost.py --out docs/results/bench-probe-cost
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from litm.models import load_model
from litm.models._base import Model
from litm.probe import ProbeConfig, run_probe
from litm.probe._analysis import analyze
from litm.probe._caching import cache_policy, plan_cache, planning_count
from litm.probe._cost import Pricer, provider_of
from litm.probe._grid import plan
from litm.probe._prepare import ProbeContext, prepare
from litm.probe._recipe import verify_row
from litm.probe._schedule import batches, lcp, run_order
from litm.spend import Usage

N_BATCH = 64
API_MODELS = "anthropic:claude-sonnet-4-5,anthropic:claude-haiku-4-5,openai:gpt-5-mini,openai:gpt-4.1-mini"


def _config(args: argparse.Namespace, **kw: Any) -> ProbeConfig:
    return ProbeConfig(
        tasks=("needle",),
        lengths=tuple(int(x) for x in args.lengths.split(",")),
        depths=tuple(float(x) for x in args.depths.split(",")),
        trials=args.trials,
        layouts=("plain",),
        closed_book=False,
        min_trials=args.min_trials,
        **kw,
    )


def _verdicts(rows: list[dict[str, Any]]) -> tuple[tuple[float, ...], int | None]:
    a = analyze(rows)["needle"]
    return a.dead_zone_pooled.depths, a.effective_length


def run_local(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    runs = (
        ("needlehaystack", "cold", {"order": "grid"}),
        ("fixed-trie", "aligned", {"order": "prefix"}),
        ("adaptive", "aligned", {"order": "prefix", "adaptive": True}),
    )
    out: dict[str, dict[str, Any]] = {}
    for name, reuse, kw in runs:
        target = args.out / "runs" / name
        if target.exists():
            shutil.rmtree(target)
        options: dict[str, Any] = {"reuse_prefix": reuse, "n_batch": N_BATCH}
        if args.threads:
            options["n_threads"] = args.threads
        model = load_model(args.model, **options)
        config = _config(args, **kw)
        wall0 = time.perf_counter()
        run = run_probe(model, config, target, progress=False, fresh=True, model_options=options)
        wall = time.perf_counter() - wall0
        assert all(verify_row(r) for r in run.rows), "a recipe did not rebuild its prompt"
        trials = [r for r in run.rows if r["kind"] == "trial"]
        out[name] = {
            "calls": len(trials),
            "wall_s": round(wall, 1),
            "model_s": round(run.model_s, 1),
            "input_tokens": run.input_tokens,
            "prefill_tokens": run.prefill_tokens,
            "prefill": run.prefill.to_dict() if run.prefill is not None else None,
            "verdicts": _verdicts(trials),
            "rows": trials,
            "stopping": run.stopping,
        }
        print(
            f"[{name}] {len(trials)} calls, wall {wall:.1f} s, model {run.model_s:.1f} s, "
            f"prefill {run.prefill_tokens} of {run.input_tokens}",
            flush=True,
        )
    return out


def api_bills(args: argparse.Namespace, adaptive_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The three designs priced for each API model at the probe's default lengths (no call is made)."""
    local_lengths = sorted(int(x) for x in args.lengths.split(","))
    api_lengths = tuple(int(x) for x in args.api_lengths.split(","))
    index = {length: i for i, length in enumerate(local_lengths)}
    ran = {(index[int(r["length"])], float(r["depth"]), int(r["trial"])) for r in adaptive_rows}
    config = _config(args, order="prefix")
    config = ProbeConfig(**{**config.to_dict(), "lengths": api_lengths})
    result: dict[str, Any] = {}
    for spec in args.api_models.split(","):
        model: Model = load_model(spec)
        ctx = ProbeContext(model, config)
        policy = cache_policy(model)
        assert policy is not None
        count = planning_count(model)
        pricer = Pricer(model.name, provider_of(model))
        plain: list[Usage] = []
        trie: list[Usage] = []
        adaptive: list[Usage] = []
        # The ceiling of any schedule: every prompt's shareable prefix (the longest it has in common with another
        # prompt of its trial) read at the cache rate and nothing written, for all trials or the stopping rule's
        # fewest (min_trials per cell: the best an adaptive run can do).
        best: list[tuple[int, Usage]] = []
        for group in batches(plan(config), "prefix"):
            items = run_order([prepare(s, ctx) for s in group], "prefix", remote=True)
            texts = [p.built.prompt for p in items]
            calls = plan_cache(texts, count, policy)
            kept = [(p, c) for p, c in zip(items, calls, strict=True)]
            for i, p in enumerate(items):
                shared = max((lcp(texts[i], t) for j, t in enumerate(texts) if j != i), default=0)
                reads = policy.cached(count(texts[i][:shared])) if shared else 0
                best.append((p.spec.trial, Usage(p.built.prompt_tokens, p.max_tokens, cache_read_tokens=reads)))
            for p, c in kept:
                tokens = max(p.built.prompt_tokens, c.read_tokens + c.write_tokens)
                plain.append(Usage(p.built.prompt_tokens, p.max_tokens))
                trie.append(
                    Usage(tokens, p.max_tokens, cache_read_tokens=c.read_tokens, cache_write_tokens=c.write_tokens)
                )
            # The adaptive run sends only the cells it ran; its cache plan is made over those prompts.
            sub = [p for p in items if (api_lengths.index(p.spec.length), p.spec.depth, p.spec.trial) in ran]
            for p, c in zip(sub, plan_cache([p.built.prompt for p in sub], count, policy), strict=True):
                tokens = max(p.built.prompt_tokens, c.read_tokens + c.write_tokens)
                adaptive.append(
                    Usage(tokens, p.max_tokens, cache_read_tokens=c.read_tokens, cache_write_tokens=c.write_tokens)
                )
        bills = {
            "needlehaystack": pricer.bill(plain),
            "fixed-trie": pricer.bill(trie),
            "adaptive": pricer.bill(adaptive),
            "ceiling-fixed": pricer.bill(u for _, u in best),
            "ceiling-stopping": pricer.bill(u for t, u in best if t < args.min_trials),
        }
        result[spec] = {k: b.to_dict() for k, b in bills.items()}
        base = bills["needlehaystack"].micros or 0
        for k, b in bills.items():
            ratio = base / b.micros if b.micros else float("nan")
            print(f"  {spec:<32} {k:<15} {b.describe()}  [{ratio:.2f}x cheaper than needlehaystack]")
    return result


def api_only(args: argparse.Namespace) -> None:
    """Price the three designs again (other ``--api-lengths``) from the embedded runs already in ``--out``."""
    rows = [json.loads(line) for line in (args.out / "runs" / "adaptive" / "results.jsonl").read_text().splitlines()]
    print(f"billed cost for an API model at lengths {args.api_lengths} (token accounting; no API call):")
    bills = api_bills(args, [r for r in rows if r["kind"] == "trial"])
    path = args.out / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary.setdefault("api_by_lengths", {})[args.api_lengths] = bills
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="local")
    ap.add_argument("--lengths", default="256,512,1024")
    ap.add_argument("--depths", default="0,0.25,0.5,0.75,1")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--min-trials", type=int, default=4)
    ap.add_argument("--api-lengths", default="1024,2048,4096")
    ap.add_argument("--api-models", default=API_MODELS, help="comma-separated API model specs to price")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", type=Path, default=Path("litm-out/bench-probe-cost"))
    ap.add_argument(
        "--api-only", action="store_true", help="only the API bills, from the adaptive run already in --out"
    )
    args = ap.parse_args()
    if args.api_only:
        api_only(args)
        return
    started = datetime.now(UTC).isoformat(timespec="seconds")
    load = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"model {args.model}; {platform.machine()}, {os.cpu_count()} CPU cores; started {started}")
    print(f"uptime at start: {load}", flush=True)
    local = run_local(args)
    cold = {r["key"]: r for r in local["needlehaystack"]["rows"]}
    base = local["needlehaystack"]
    print(
        f"\n{'run':<15} {'calls':>5} {'model s':>8} {'x fewer':>7} {'prompt tok':>10} {'prefill tok':>11} "
        f"{'floor':>7} {'vs floor':>8} {'dead zone':>12} {'eff. len':>8} {'verdicts':>8} {'same answers':>12}"
    )
    for name, r in local.items():
        floor = (r["prefill"] or {}).get("floor") or 0
        same = [cold[x["key"]]["output"] == x["output"] for x in r["rows"] if x["key"] in cold]
        zone, eff = r["verdicts"]
        print(
            f"{name:<15} {r['calls']:>5} {r['model_s']:>8.1f} {base['model_s'] / r['model_s']:>7.2f} "
            f"{r['input_tokens']:>10} {r['prefill_tokens']:>11} {floor:>7} "
            f"{(r['prefill_tokens'] / floor if floor else float('nan')):>8.3f} {list(zone)!s:>12} {eff!s:>8} "
            f"{'agree' if r['verdicts'] == base['verdicts'] else 'DIFFER':>8} "
            f"{sum(same)}/{len(same):<10}"
        )
    print("\nbilled cost for an API model (token accounting, cached-prefix prices; no API call):")
    bills = api_bills(args, local["adaptive"]["rows"])
    load_end = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"\nuptime at end: {load_end}")
    summary = {
        "command": "nice /work/main/.venv/bin/python benchmarks/bench_probe_cost.py " + " ".join(sys.argv[1:]),
        "started": started,
        "uptime_start": load,
        "uptime_end": load_end,
        "local": {k: {kk: vv for kk, vv in v.items() if kk != "rows"} for k, v in local.items()},
        "api": bills,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2, default=list) + "\n", encoding="utf-8")
    for name in local:  # keep the small files of each run, not the per-run logs
        for f in (args.out / "runs" / name).glob("*"):
            if f.name not in ("run.json", "results.jsonl"):
                f.unlink()


if __name__ == "__main__":
    main()
