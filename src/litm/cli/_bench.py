"""``litm bench``: does placement help? Strategy benchmark on NQ-Open, HotpotQA, 2Wiki or your own data.

litm bench --model local --k 10 --questions 100 --out litm-out/bench
litm bench --model local:qwen2.5-coder-1.5b --data hotpotqa --arms default,bracket --out litm-out/bench-hotpotqa
litm bench --data my-questions.jsonl --retriever hybrid --out litm-out/bench-mine
litm bench --model local:smollm2 --questions 20 --direct 10 --ablation 10 --out litm-out/bench-smol --resume
litm bench --model local:qwen2.5-coder-0.5b --k 20 --direct 0 --ablation-slots 1,10,20 --arms quote-first --out OUT
litm bench --model local:qwen2.5-coder-0.5b --k 20 --psc-calls 5 --psc-only --baseline RUN --out litm-out/bench-psc
litm bench --config bench.toml --questions 20   # options from a file (Python API names), flags override it
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from litm.cli import app
from litm.cli._config import Key, config_option, with_config
from litm.cli._help import PanelCommand
from litm.cli._interrupt import stop_resumably
from litm.models._local.kv_reuse import REUSE_BATCH

if TYPE_CHECKING:
    from litm.bench._command import BenchCommand


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


def _items(value: object) -> list[str]:
    """A list option's items as text: repeated or comma-separated flags, or the file's list (or one string)."""
    return [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]


_MODEL, _DATA, _ARMS, _COMPRESS, _PSC, _RUN = (
    "Model", "Data and questions", "Strategies and ablation", "Compression arms", "Self-consistency arm", "Run"
)  # fmt: skip

#: ``--config`` keys: the Python API's names (BenchConfig's fields, load_model's options, the run's), each
#: with the option it stands for.
KEYS = {
    "model": Key("model", ("str",)),
    "reuse_prefix": Key("reuse", ("str",), choices=("aligned", "full", "cold")),
    "n_threads": Key("threads", ("int",), low=1),
    "n_batch": Key("batch", ("int",), low=1),
    "concurrency": Key("concurrency", ("int",), low=1),
    "data": Key("data", ("str",)),
    "retriever": Key("retriever", ("str",)),
    "ks": Key("k", ("list[int]", "int", "str")),
    "questions": Key("questions", ("int",), low=1),
    "seed": Key("seed", ("int",)),
    "max_tokens": Key("max_tokens", ("int",), low=1),
    "prompt_format": Key("prompt_format", ("str",)),
    "likelihood": Key("likelihood", ("str",)),
    "controls": Key("no_controls", ("bool",)),
    "profile": Key("profile_path", ("str",)),
    "strategies": Key("strategies", ("list[str]", "str")),
    "direct_questions": Key("direct", ("int",), low=0),
    "direct_ranks": Key("direct_ranks", ("list[int]", "str")),
    "ablation_questions": Key("ablation", ("int",), low=0),
    "ablation_slots": Key("ablation_slots", ("list[int]", "str")),
    "ablation_designs": Key("ablation_designs", ("list[str]", "str")),
    "ablation_arms": Key("arms", ("list[str]", "str")),
    "ablation_only": Key("ablation_only", ("bool",)),
    "compress_arms": Key("compress", ("list[str]", "str")),
    "compress_ratios": Key("compress_ratios", ("list[float]", "str")),
    "compress_slots": Key("compress_slots", ("list[int]", "str")),
    "compress_designs": Key("compress_designs", ("list[str]", "str")),
    "compress_model": Key("compress_model", ("str",)),
    "compress_only": Key("compress_only", ("bool",)),
    "baseline": Key("baseline", ("str",)),
    "psc_calls": Key("psc_calls", ("int",), low=0),
    "psc_slots": Key("psc_slots", ("list[int]", "str")),
    "psc_designs": Key("psc_designs", ("list[str]", "str")),
    "psc_only": Key("psc_only", ("bool",)),
    "out": Key("out", ("str",)),
    "resume": Key("resume", ("bool",)),
    "progress": Key("progress", ("bool",)),
    "plots": Key("plots", ("bool",)),
}


def _job(v: dict[str, object]) -> BenchCommand:
    """The benchmark the merged options describe (BenchConfig checks the values; the types were checked)."""
    from litm.bench._command import BenchCommand, with_data_defaults
    from litm.bench._config import BenchConfig

    def names(key: str) -> tuple[str, ...]:
        return _split(_items(v[key]))

    def ints(key: str) -> tuple[int, ...]:
        return _ints(_items(v[key]))

    config = BenchConfig(
        questions=int(str(v["questions"])), ks=ints("ks"), strategies=names("strategies"),
        direct_questions=int(str(v["direct_questions"])), direct_ranks=ints("direct_ranks"),
        ablation_questions=int(str(v["ablation_questions"])), ablation_slots=ints("ablation_slots"),
        ablation_arms=names("ablation_arms"), ablation_designs=names("ablation_designs") or ("middle",),
        data=str(v["data"]), retriever=str(v["retriever"]), controls=v["controls"] is True,
        max_tokens=int(str(v["max_tokens"])), seed=int(str(v["seed"])), prompt_format=str(v["prompt_format"]),
        likelihood=str(v["likelihood"]), compress_arms=names("compress_arms"),
        compress_ratios=_floats(_items(v["compress_ratios"])), compress_slots=ints("compress_slots"),
        compress_designs=names("compress_designs"), compress_model=str(v["compress_model"]),
        compress_only=v["compress_only"] is True, baseline=None if v["baseline"] is None else str(v["baseline"]),
        psc_calls=int(str(v["psc_calls"])), psc_slots=ints("psc_slots"), psc_designs=names("psc_designs"),
        psc_only=v["psc_only"] is True, ablation_only=v["ablation_only"] is True,
    )  # fmt: skip
    threads, batch, concurrency = v["n_threads"], v["n_batch"], v["concurrency"]
    return BenchCommand(
        str(v["model"]), with_data_defaults(config), Path(str(v["out"])),
        profile=None if v["profile"] is None else Path(str(v["profile"])), resume=v["resume"] is True,
        progress=v["progress"] is True, plots=v["plots"] is True, reuse_prefix=str(v["reuse_prefix"]),
        n_threads=None if threads is None else int(str(threads)), n_batch=None if batch is None else int(str(batch)),
        concurrency=None if concurrency is None else int(str(concurrency)),
        command="litm " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
    )  # fmt: skip


@app.command("bench", cls=PanelCommand)
def bench_cmd(
    ctx: typer.Context,
    config_file: Path | None = config_option("docs/bench.md"),
    model: str = typer.Option(
        "local", "--model", "-m", help="Model spec (local, local:smollm2, openai:..., ...).", rich_help_panel=_MODEL
    ),
    reuse: str = typer.Option(
        "aligned", "--reuse", help="Local KV reuse: aligned (= cold answers), full, cold.", rich_help_panel=_MODEL
    ),
    threads: int | None = typer.Option(
        None, "--threads", min=1, help="CPU threads for a local model (default: all).", rich_help_panel=_MODEL
    ),
    batch: int | None = typer.Option(
        None, "--batch", min=1,
        help=f"Local models: llama.cpp batch, the unit aligned reuse keeps ({REUSE_BATCH}; a resume: the run's own).",
        rich_help_panel=_MODEL,
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, help="Parallel requests (remote models).", rich_help_panel=_MODEL
    ),
    data: str = typer.Option(
        "nq", "--data", "-d", help="nq, hotpotqa, 2wiki, or a JSON Lines file in litm's format (docs/bench-data.md).",
        rich_help_panel=_DATA,
    ),
    retriever: str = typer.Option(
        "auto", "--retriever",
        help="Document order: auto, file (the data's own), bm25, dense or hybrid (litm.retrieve).",
        rich_help_panel=_DATA,
    ),
    k: list[str] = typer.Option(
        ["10"], "--k", help="Documents per prompt (repeat or comma-separate: --k 10 20).", rich_help_panel=_DATA
    ),
    questions: int = typer.Option(
        100, "--questions", "-n", min=1, help="Evaluation questions (slot accuracy).", rich_help_panel=_DATA
    ),
    seed: int = typer.Option(0, "--seed", help="Question split seed.", rich_help_panel=_DATA),
    max_tokens: int = typer.Option(
        16, "--max-tokens", min=1, help="Answer length cap (first line is scored).", rich_help_panel=_DATA
    ),
    prompt_format: str = typer.Option(
        "auto", "--format", help="completion, chat (one user message), or auto: chat if the model has a template.",
        rich_help_panel=_DATA,
    ),
    likelihood: str = typer.Option(
        "auto", "--likelihood", help="Also score the gold answer's log-probability: auto (if the model can), on, off.",
        rich_help_panel=_DATA,
    ),
    no_controls: bool = typer.Option(
        False, "--no-controls", help="Skip the closed-book and oracle controls.", rich_help_panel=_DATA
    ),
    profile_path: Path | None = typer.Option(
        None, "--profile",
        help="Measured position profile (litm probe) for the multi-gold questions' profile strategy.",
        rich_help_panel=_ARMS,
    ),
    strategies: list[str] = typer.Option(
        [], "--strategies", "-s", help="Strategies (default: none, edges, pyramid, langchain, profile, random).",
        rich_help_panel=_ARMS,
    ),
    direct: int = typer.Option(
        20, "--direct", min=0, help="Questions placed end to end by every strategy.", rich_help_panel=_ARMS
    ),
    direct_ranks: list[str] = typer.Option(
        [], "--direct-ranks", help="Gold ranks of the direct run (default 1,mid,k).", rich_help_panel=_ARMS
    ),
    ablation: int = typer.Option(
        30, "--ablation", min=0, help="Questions for the anchor / question-position ablation.", rich_help_panel=_ARMS
    ),
    ablation_slots: list[str] = typer.Option(
        [], "--ablation-slots", help="Slots of the ablation (default 1,mid,k).", rich_help_panel=_ARMS
    ),
    ablation_designs: list[str] = typer.Option(
        [], "--ablation-designs", help="Multi-gold designs given the ablation arms (default middle).",
        rich_help_panel=_ARMS,
    ),
    arms: list[str] = typer.Option(
        [], "--arms",
        help="Ablation prompt arms (default plain-both,anchored,anchored-both; also default, bracket, the anchor "
        "elements default-position, default-score, default-recap, default-closing, default+middle, minimal, "
        "and quote-first).",
        rich_help_panel=_ARMS,
    ),
    ablation_only: bool = typer.Option(
        False, "--ablation-only",
        help="Only the ablation arms and the plain prompts they pair with (no slot sweep, no strategies).",
        rich_help_panel=_ARMS,
    ),
    compress: list[str] = typer.Option(
        [], "--compress", help="Compression arms (comma-separated): drop, lead, embed, embed-edges, embed-link, "
        "static, static-edges, static-link, lm, lm-edges.",
        rich_help_panel=_COMPRESS,
    ),
    compress_ratios: list[str] = typer.Option(
        ["2,4"], "--compress-ratios", help="Compression ratios (4 keeps a quarter of the document tokens).",
        rich_help_panel=_COMPRESS,
    ),
    compress_slots: list[str] = typer.Option(
        [], "--compress-slots", help="Gold slots compressed (default 1,mid,k).", rich_help_panel=_COMPRESS
    ),
    compress_designs: list[str] = typer.Option(
        ["middle,early"], "--compress-designs", help="Gold-set designs compressed (multi-gold data).",
        rich_help_panel=_COMPRESS,
    ),
    compress_model: str = typer.Option(
        "local", "--compress-model", help="The lm compression scorer's local model.", rich_help_panel=_COMPRESS
    ),
    compress_only: bool = typer.Option(
        False, "--compress-only",
        help="Only the compression arms; the uncompressed rows come from --baseline, or only those paired are run.",
        rich_help_panel=_COMPRESS,
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="A committed uncompressed run of the same questions and model to pair with.",
        rich_help_panel=_COMPRESS,
    ),
    psc_calls: int = typer.Option(
        0, "--psc-calls", min=0, help="The psc arm: permutation self-consistency with this many calls (0: off).",
        rich_help_panel=_PSC,
    ),
    psc_slots: list[str] = typer.Option(
        [], "--psc-slots", help="Gold slots of the psc arm (default 1,mid,k).", rich_help_panel=_PSC
    ),
    psc_designs: list[str] = typer.Option(
        ["middle"], "--psc-designs", help="Gold-set designs of the psc arm.", rich_help_panel=_PSC
    ),
    psc_only: bool = typer.Option(
        False, "--psc-only",
        help="Only the psc arm, paired with the plain rows of --baseline, else with each row's call 0 (the plain "
        "prompt).",
        rich_help_panel=_PSC,
    ),
    out: Path = typer.Option(Path("litm-out/bench"), "--out", "-o", help="Output directory.", rich_help_panel=_RUN),
    resume: bool = typer.Option(
        False, "--resume", help="Continue a run in --out, skipping finished rows.", rich_help_panel=_RUN
    ),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a progress bar with ETA.", rich_help_panel=_RUN
    ),
    plots: bool = typer.Option(
        True, "--plots/--no-plots", help="Write PNG plots and report.html.", rich_help_panel=_RUN
    ),
) -> None:
    """Benchmark placement strategies and anchors on multi-document QA; write results and a report."""
    from litm.bench._command import run_bench_command

    values: dict[str, object] = {
        "model": model, "reuse_prefix": reuse, "n_threads": threads, "n_batch": batch, "concurrency": concurrency,
        "data": data, "retriever": retriever, "ks": k, "questions": questions, "seed": seed,
        "max_tokens": max_tokens, "prompt_format": prompt_format, "likelihood": likelihood,
        "controls": not no_controls, "profile": None if profile_path is None else str(profile_path),
        "strategies": strategies, "direct_questions": direct, "direct_ranks": direct_ranks,
        "ablation_questions": ablation, "ablation_slots": ablation_slots, "ablation_designs": ablation_designs,
        "ablation_arms": arms, "ablation_only": ablation_only, "compress_arms": compress,
        "compress_ratios": compress_ratios,
        "compress_slots": compress_slots, "compress_designs": compress_designs, "compress_model": compress_model,
        "compress_only": compress_only, "baseline": None if baseline is None else str(baseline),
        "psc_calls": psc_calls, "psc_slots": psc_slots, "psc_designs": psc_designs, "psc_only": psc_only,
        "out": str(out), "resume": resume, "progress": progress, "plots": plots,
    }  # fmt: skip
    job = _job(with_config(ctx, config_file, KEYS, values))
    with stop_resumably(job.out / "bench.jsonl"):
        run_bench_command(job, typer.echo)
