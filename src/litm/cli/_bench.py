"""``litm bench``: does placement help? Strategy benchmark on NQ-Open, HotpotQA, 2Wiki or your own data.

litm bench --model local --k 10 --questions 100 --out litm-out/bench
litm bench --model local:qwen2.5-coder-1.5b --data hotpotqa --arms default,bracket --out litm-out/bench-hotpotqa
litm bench --data my-questions.jsonl --retriever hybrid --out litm-out/bench-mine
litm bench --model local:smollm2 --questions 20 --direct 10 --ablation 10 --out litm-out/bench-smol --resume
litm bench --model local:qwen2.5-coder-0.5b --k 20 --direct 0 --ablation-slots 1,10,20 --arms quote-first --out OUT
litm bench --model local:qwen2.5-coder-0.5b --k 20 --psc-calls 5 --psc-only --baseline RUN --out litm-out/bench-psc
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer

from litm.cli import app
from litm.cli._interrupt import stop_resumably
from litm.models._local.kv_reuse import REUSE_BATCH


def _split(values: list[str]) -> tuple[str, ...]:
    return tuple(v.strip() for item in values for v in item.split(",") if v.strip())


def _floats(values: list[str]) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in _split(values))
    except ValueError as exc:
        raise typer.BadParameter(f"expected numbers, got {values}") from exc


def _ints(values: list[str]) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in _split(values))
    except ValueError:
        raise typer.BadParameter(f"expected integers, got {values!r}") from None


@app.command("bench")
def bench_cmd(
    model: str = typer.Option("local", "--model", "-m", help="Model spec (local, local:smollm2, openai:..., ...)."),
    data: str = typer.Option(
        "nq", "--data", "-d", help="nq, hotpotqa, 2wiki, or a JSON Lines file in litm's format (docs/bench-data.md)."
    ),
    retriever: str = typer.Option(
        "auto",
        "--retriever",
        help="Document order: auto, file (the data's own), bm25, dense or hybrid (litm.retrieve).",
    ),
    profile_path: Path | None = typer.Option(
        None, "--profile", help="Measured position profile (litm probe) for the multi-gold questions' profile strategy."
    ),
    k: list[str] = typer.Option(["10"], "--k", help="Documents per prompt (repeat or comma-separate: --k 10 20)."),
    questions: int = typer.Option(100, "--questions", "-n", min=1, help="Evaluation questions (slot accuracy)."),
    strategies: list[str] = typer.Option(
        [], "--strategies", "-s", help="Strategies (default: none, edges, pyramid, langchain, profile, random)."
    ),
    direct: int = typer.Option(20, "--direct", min=0, help="Questions placed end to end by every strategy."),
    direct_ranks: list[str] = typer.Option(
        [], "--direct-ranks", help="Gold ranks of the direct run (default 1,mid,k)."
    ),
    ablation: int = typer.Option(
        30, "--ablation", min=0, help="Questions for the anchor / question-position ablation."
    ),
    ablation_slots: list[str] = typer.Option([], "--ablation-slots", help="Slots of the ablation (default 1,mid,k)."),
    ablation_designs: list[str] = typer.Option(
        [], "--ablation-designs", help="Multi-gold designs given the ablation arms (default middle)."
    ),
    arms: list[str] = typer.Option(
        [],
        "--arms",
        help="Ablation prompt arms (default plain-both,anchored,anchored-both; also default, bracket, the anchor "
        "elements default-position, default-score, default-recap, default-closing, default+middle, minimal, "
        "and quote-first).",
    ),
    no_controls: bool = typer.Option(False, "--no-controls", help="Skip the closed-book and oracle controls."),
    max_tokens: int = typer.Option(16, "--max-tokens", min=1, help="Answer length cap (first line is scored)."),
    seed: int = typer.Option(0, "--seed", help="Question split seed."),
    prompt_format: str = typer.Option(
        "auto", "--format", help="completion, chat (one user message), or auto: chat if the model has a template."
    ),
    likelihood: str = typer.Option(
        "auto", "--likelihood", help="Also score the gold answer's log-probability: auto (if the model can), on, off."
    ),
    reuse: str = typer.Option("aligned", "--reuse", help="Local KV reuse: aligned (= cold answers), full, cold."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="CPU threads for a local model (default: all)."),
    batch: int | None = typer.Option(
        None,
        "--batch",
        min=1,
        help=f"Local models: llama.cpp batch, the unit aligned reuse keeps ({REUSE_BATCH}; a resume: the run's own).",
    ),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Parallel requests (remote models)."),
    out: Path = typer.Option(Path("litm-out/bench"), "--out", "-o", help="Output directory."),
    resume: bool = typer.Option(False, "--resume", help="Continue a run in --out, skipping finished rows."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar with ETA."),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write PNG plots and report.html."),
    compress: list[str] = typer.Option(
        [], "--compress", help="Compression arms: drop, lead, embed, embed-edges, lm, lm-edges (comma-separated)."
    ),
    compress_ratios: list[str] = typer.Option(
        ["2,4"], "--compress-ratios", help="Compression ratios (4 keeps a quarter of the document tokens)."
    ),
    compress_slots: list[str] = typer.Option([], "--compress-slots", help="Gold slots compressed (default 1,mid,k)."),
    compress_designs: list[str] = typer.Option(
        ["middle,early"], "--compress-designs", help="Gold-set designs compressed (multi-gold data)."
    ),
    compress_model: str = typer.Option("local", "--compress-model", help="The lm compression scorer's local model."),
    compress_only: bool = typer.Option(
        False, "--compress-only", help="Only the compression arms; the uncompressed rows come from --baseline."
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="A committed uncompressed run of the same questions and model to pair with."
    ),
    psc_calls: int = typer.Option(
        0, "--psc-calls", min=0, help="The psc arm: permutation self-consistency with this many calls (0: off)."
    ),
    psc_slots: list[str] = typer.Option([], "--psc-slots", help="Gold slots of the psc arm (default 1,mid,k)."),
    psc_designs: list[str] = typer.Option(["middle"], "--psc-designs", help="Gold-set designs of the psc arm."),
    psc_only: bool = typer.Option(
        False, "--psc-only", help="Only the psc arm; the plain rows it is paired with come from --baseline."
    ),
) -> None:
    """Benchmark placement strategies and anchors on multi-document QA; write results and a report."""
    from litm.bench._compression_summary import write_compression_outputs
    from litm.bench._config import BenchConfig, BenchError
    from litm.bench._consistency import write_psc_outputs
    from litm.bench._design import NQ_ARMS, STRATEGIES
    from litm.bench._goldsets import GOLDSET_STRATEGIES
    from litm.bench._outputs import write_outputs
    from litm.bench._runner import run_bench
    from litm.bench._settings import recorded_batch
    from litm.models import load_model
    from litm.models._spec import parse_spec
    from litm.placement import PositionProfile

    multi = data != "nq"
    names = _split(strategies) or (tuple(s for s in STRATEGIES if s in GOLDSET_STRATEGIES) if multi else STRATEGIES)
    designs = _split(ablation_designs) or ("middle",)
    profile = PositionProfile.load(profile_path) if profile_path is not None else None
    config = BenchConfig(
        questions=questions,
        ks=_ints(k),
        strategies=names,
        direct_questions=direct,
        direct_ranks=_ints(direct_ranks),
        ablation_questions=ablation,
        ablation_slots=_ints(ablation_slots),
        ablation_arms=_split(arms) or (("default", "bracket") if multi else NQ_ARMS),
        ablation_designs=designs,
        data=data,
        retriever=retriever,
        controls=not no_controls,
        max_tokens=max_tokens,
        seed=seed,
        prompt_format=prompt_format,
        likelihood=likelihood,
        compress_arms=_split(compress),
        compress_ratios=_floats(compress_ratios),
        compress_slots=_ints(compress_slots),
        compress_designs=_split(compress_designs),
        compress_model=compress_model,
        compress_only=compress_only,
        baseline=str(baseline) if baseline is not None else None,
        psc_calls=psc_calls,
        psc_slots=_ints(psc_slots),
        psc_designs=_split(psc_designs),
        psc_only=psc_only,
    )
    if baseline is not None and not (baseline / "bench.jsonl").is_file():
        raise BenchError(f"--baseline {baseline} holds no bench.jsonl")
    options: dict[str, object] = {}
    if parse_spec(model).scheme == "local":
        options["reuse_prefix"] = reuse
        if threads is not None:
            options["n_threads"] = threads
        options["n_batch"] = batch or (resume and recorded_batch(out)) or REUSE_BATCH
    elif concurrency is not None:
        options["concurrency"] = concurrency
    m = load_model(model, **options)
    command = "litm " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    with stop_resumably(out / "bench.jsonl"):
        run = run_bench(m, config, out, resume=resume, progress=progress, command=command, profile=profile)
    typer.echo(f"{run.answered} prompts answered, {run.reused} reused identical prompts; {len(run.rows)} rows in {out}")
    if config.compress_arms:
        written = write_compression_outputs(out, run.rows, run.settings)
        typer.echo(f"compression summary: {written}")
    if config.psc_calls:
        typer.echo(f"psc summary: {write_psc_outputs(out, run.rows, run.settings)}")
    if config.compress_only or config.psc_only:
        return
    result = write_outputs(out, run.rows, run.settings, plots=plots)
    for kk, s in result.summary["by_k"].items():
        typer.echo(f"\n== k={kk}: {s['questions']} questions ==")
        typer.echo("slot accuracy: " + " ".join(f"{c['acc']:.2f}" for c in s["slot_accuracy"]))
        if s.get("likelihood"):
            typer.echo("slot likelihood: " + " ".join(f"{c['mean']:.2f}" for c in s["likelihood"]["slots"]))
        for dist, table in s["headline"].items():
            typer.echo(
                f"gap recovered ({dist} gold rank): " + json.dumps({n: v["gap_recovered"] for n, v in table.items()})
            )
    for kk, s in (result.summary.get("gold_sets") or {}).get("by_k", {}).items():
        typer.echo(f"\n== multi-gold, k={kk}: {s['questions']} questions ==")
        for design, cells in s["designs"].items():
            typer.echo(f"{design}: " + " ".join(f"{m} {c.get('acc', c.get('mean', 0)):.3f}" for m, c in cells.items()))
    if result.report is not None:
        typer.echo(f"\nreport: {result.report}")
