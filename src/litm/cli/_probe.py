"""``litm probe``: measure a model's dead zone; ``litm probe diff A B`` compares two profiles.

litm probe --model local --lengths 512,1k,2k --trials 10 --out litm-out/probe
litm probe --model openai:gpt-4o-mini --task needle,kv --lengths 4k,16k --dry-run --price-in 0.15
litm probe diff litm-out/a/profile.json litm-out/b/profile.json
litm probe report litm-out/probe      # rewrite profile, plots and report from results.jsonl
"""

from __future__ import annotations

import json
import shlex
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from litm.cli import app
from litm.cli._interrupt import stop_resumably
from litm.errors import ProbeError
from litm.models._local.kv_reuse import REUSE_BATCH
from litm.util._records import decode_text

probe_app = typer.Typer(
    name="probe",
    help="Measure where a model loses facts (dead zone, effective length) and write a position profile.",
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(probe_app, name="probe")


class ReuseOpt(StrEnum):
    aligned = "aligned"
    full = "full"
    cold = "cold"


class OrderOpt(StrEnum):
    prefix = "prefix"
    grid = "grid"


class FillerOpt(StrEnum):
    nested = "nested"
    independent = "independent"


def _split(values: list[str]) -> tuple[str, ...]:
    return tuple(v.strip() for item in values for v in item.split(",") if v.strip())


def _read_template(path: Path) -> str:
    """The ``--template`` file's text; a file that cannot be read or is not UTF-8 is a typed error."""
    try:
        return decode_text(path.read_bytes(), source=f"--template {path}")
    except OSError as exc:
        raise ProbeError(f"cannot read --template {path}: {exc.strerror or exc}") from None


def _echo_summary(outputs: Any) -> None:
    from litm.probe._export import accuracy_table, recommended_max_input_tokens

    for a in outputs.analyses.values():
        if not a.lengths:
            continue
        typer.echo(f"\n== {a.task}: accuracy [Wilson 95%] by length and depth ==")
        typer.echo(accuracy_table(a))
        for line in a.findings:
            typer.echo(f"- {line}")
        rec, why = recommended_max_input_tokens(a)
        typer.echo(f"- recommended max_input_tokens: {rec} ({why})")


@probe_app.callback()
def probe_cmd(
    ctx: typer.Context,
    model: str | None = typer.Option(None, "--model", "-m", help="Model spec (local, local:smollm2, openai:..., ...)."),
    task: list[str] = typer.Option(
        ["needle"],
        "--task",
        "-t",
        help="needle, paraphrase, chain, multi, nolima-literal, nolima, nolima-multi, kv, docqa "
        "(repeat or comma-separate).",
    ),
    lengths: str = typer.Option("1k,2k,4k", "--lengths", "-l", help="Prompt lengths in tokens, e.g. 512,1k,4k."),
    depths: str = typer.Option("linear:5", "--depths", "-d", help="0,0.25,0.5,0.75,1 or linear:N or edge:N."),
    trials: int = typer.Option(10, "--trials", "-n", min=1, help="Trials per (length, depth) cell."),
    corpus: Path | None = typer.Option(None, "--corpus", help="Filler: a dir of .txt/.md/.rst, or a JSONL file."),
    out: Path = typer.Option(Path("litm-out/probe"), "--out", "-o", help="Output directory."),
    resume: bool = typer.Option(False, "--resume", help="Continue a run in --out, skipping finished rows."),
    fresh: bool = typer.Option(False, "--fresh", help="Discard results already in --out and start over."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print calls, tokens and cost; run nothing."),
    layouts: str = typer.Option("plain,buffered", "--layouts", help="Prompt layouts, alternated by trial."),
    template: Path | None = typer.Option(None, "--template", help="Your own layout: {document} and {question}."),
    seed: int = typer.Option(0, "--seed", help="Base seed (trial t uses seed + t)."),
    closed_book: bool = typer.Option(True, "--closed-book/--no-closed-book", help="Run the closed-book control."),
    k: int = typer.Option(3, "--k", min=2, help="Facts per prompt for the multi task."),
    chain_depth: float = typer.Option(0.9, "--chain-depth", min=0.0, max=1.0, help="Depth of the chain's 2nd fact."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Answer length (default per task)."),
    order: OrderOpt = typer.Option(OrderOpt.prefix, "--order", help="prefix: share KV prefixes; grid: cell by cell."),
    adaptive: bool = typer.Option(
        False, "--adaptive", help="Stop a cell once more trials would not change the verdicts (docs/probe.md)."
    ),
    ci_width: float = typer.Option(0.15, "--ci-half-width", help="Adaptive: stop at this Wilson half-width."),
    min_trials: int = typer.Option(4, "--min-trials", min=1, help="Adaptive: trials a cell runs at least."),
    flip_risk: float = typer.Option(
        0.05, "--flip-risk", min=0.0, max=0.99, help="Adaptive: accepted chance that stopping changes a verdict."
    ),
    filler: FillerOpt = typer.Option(
        FillerOpt.nested, "--filler", help="nested: a length's filler extends the shorter ones' (default)."
    ),
    batch: int | None = typer.Option(
        None, "--batch", min=1, help=f"Local models: llama.cpp batch, the unit aligned reuse keeps ({REUSE_BATCH})."
    ),
    reuse: ReuseOpt | None = typer.Option(
        None, "--reuse", help="Local KV reuse: aligned (default; answers = cold), full (fastest), cold."
    ),
    concurrency: int | None = typer.Option(None, "--concurrency", min=1, help="Remote models: parallel calls."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="Local models: llama.cpp threads."),
    price_in: float | None = typer.Option(None, "--price-in", help="USD per million input tokens (estimate)."),
    price_out: float | None = typer.Option(None, "--price-out", help="USD per million output tokens (estimate)."),
    ratio: float = typer.Option(0.85, "--ratio", min=0.0, max=1.0, help="Effective length: share of short accuracy."),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write PNG plots."),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar with ETA."),
) -> None:
    """Probe a model: accuracy by context length and needle depth; writes results, profile, plots, report.

    Example: litm probe --model local --lengths 512,1k,2k --trials 10 --out litm-out/probe
    """
    if ctx.invoked_subcommand is not None:
        return
    from litm.cli import fail

    if model is None:
        raise fail("--model is required (for example --model local); see litm probe --help")
    if resume and fresh:
        raise fail("--resume and --fresh contradict each other")
    from litm.eval._results import ResultsLog
    from litm.models import load_model
    from litm.probe._corpus import load_corpus
    from litm.probe._cost import Pricer, provider_of
    from litm.probe._estimate import estimate
    from litm.probe._grid import ProbeConfig, parse_depths, parse_lengths
    from litm.probe._outputs import write_outputs
    from litm.probe._runner import run_probe

    config = ProbeConfig(
        tasks=_split(task),
        lengths=parse_lengths(lengths),
        depths=parse_depths(depths),
        trials=trials,
        layouts=_split([layouts]),
        seed=seed,
        closed_book=closed_book,
        k=k,
        chain_depth=chain_depth,
        max_tokens=max_tokens,
        order="grid" if order is OrderOpt.grid else "prefix",
        adaptive=adaptive,
        min_trials=min_trials,
        target_half_width=ci_width,
        flip_risk=flip_risk,
        template=_read_template(template) if template is not None else None,
        filler="nested" if filler is FillerOpt.nested else "independent",
    )
    existing = ResultsLog(out / "results.jsonl").rows if (out / "results.jsonl").exists() else []
    if existing and not (resume or fresh or dry_run):
        raise fail(f"{out} already holds {len(existing)} results: pass --resume to continue or --fresh to start over")
    options: dict[str, Any] = {}
    if reuse is not None:
        options["reuse_prefix"] = reuse.value
    if concurrency is not None:
        options["concurrency"] = concurrency
    if threads is not None:
        options["n_threads"] = threads
    if batch is not None or model.strip().lower().startswith("local"):
        options["n_batch"] = batch or REUSE_BATCH
    try:
        llm = load_model(model, **options)
    except TypeError as exc:  # e.g. --reuse or --threads for a remote model, --concurrency for a local one
        raise fail(f"option not supported by {model}: {exc}") from None
    corpus_obj = load_corpus(corpus) if corpus is not None else None
    window = llm.context_window
    budget = max(config.lengths) + (max_tokens or 64)
    if budget > window:
        raise ProbeError(f"length {max(config.lengths)} plus the answer does not fit the {window}-token window")
    if dry_run or llm.remote:
        est = estimate(llm, config, out, corpus_obj, model_options=options)
        typer.echo(est.describe(price_in, price_out))
        if dry_run:
            return
    command = shlex.join(["litm", *sys.argv[1:]])
    pricer = Pricer(llm.name, provider_of(llm), price_in=price_in, price_out=price_out)
    with stop_resumably(out / "results.jsonl"):
        run = run_probe(
            llm, config, out, corpus=corpus_obj, progress=progress, fresh=fresh, command=command,
            model_options=options, prices=pricer,
        )  # fmt: skip
    typer.echo(run.describe())
    outputs = write_outputs(out, run.rows, run.settings, plots=plots, report=report, context_window=window, ratio=ratio)
    _echo_summary(outputs)
    typer.echo(f"\nresults: {out / 'results.jsonl'}\nprofile: {outputs.profile_path}")
    if outputs.report is not None:
        typer.echo(f"report:  {outputs.report}")


@probe_app.command("diff")
def diff_cmd(
    a: Path = typer.Argument(..., help="First profile JSON (for example model A)."),
    b: Path = typer.Argument(..., help="Second profile JSON (model B, or a later version of A)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Compare two position profiles depth by depth (Fisher exact test when both are probe results)."""
    from litm.placement._profile import PositionProfile
    from litm.probe._export import diff_profiles

    d = diff_profiles(PositionProfile.load(a), PositionProfile.load(b))
    if as_json:
        rows = [{"depth": x, "a": wa, "b": wb, "p": p} for x, wa, wb, p in d.rows]
        typer.echo(json.dumps({"a": str(a), "b": str(b), "depths": rows}, indent=2))
    else:
        typer.echo(d.to_text())


@probe_app.command("report")
def report_cmd(
    out: Path = typer.Argument(..., help="A probe output directory (with results.jsonl and run.json)."),
    ratio: float = typer.Option(0.85, "--ratio", min=0.0, max=1.0, help="Effective length: share of short accuracy."),
    rescore: bool = typer.Option(False, "--rescore", help="Score the stored outputs again under the current rules."),
    corpus: Path | None = typer.Option(None, "--corpus", help="The run's own corpus, if it was not the default."),
) -> None:
    """Re-analyse a finished (or partial) run and rewrite its profile, plots and report."""
    from litm.eval._results import read_rows, read_settings
    from litm.probe._corpus import load_corpus
    from litm.probe._outputs import write_outputs
    from litm.probe._rescore import rescore_rows, write_rows

    rows = read_rows(out / "results.jsonl")
    settings = read_settings(out / "run.json")
    for section in ("model", "config", "corpus"):
        if not isinstance(settings.get(section) or {}, dict):
            raise ProbeError(f"{out / 'run.json'}: {section!r} is not an object: the file is damaged")
    for key in ("tasks", "lengths", "depths"):
        if not isinstance((settings.get("config") or {}).get(key, []), list):
            raise ProbeError(f"{out / 'run.json'}: config {key!r} is not a list: the file is damaged")
    if rescore:
        new = rescore_rows(rows, settings.get("config") or {}, load_corpus(corpus) if corpus else None)
        changed = sum(
            a.get("miss") != b.get("miss") or a.get("hit") != b.get("hit") for a, b in zip(rows, new, strict=True)
        )
        write_rows(out / "results.jsonl", new)
        typer.echo(f"rescored {len(new)} rows; {changed} changed hit or miss class")
        rows = new
    outputs = write_outputs(out, rows, settings, ratio=ratio)
    _echo_summary(outputs)
    typer.echo(f"\nprofile: {outputs.profile_path}\nreport:  {outputs.report}")
