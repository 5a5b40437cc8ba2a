"""``litm probe``: measure a model's dead zone; ``litm probe diff A B`` compares two profiles.

litm probe --model local --lengths 512,1k,2k --trials 10 --out litm-out/probe
litm probe --model openai:gpt-4o-mini --task needle,kv --lengths 4k,16k --dry-run --price-in 0.15
litm probe diff litm-out/a/profile.json litm-out/b/profile.json
litm probe report litm-out/probe      # rewrite profile, plots and report from results.jsonl
litm probe --config probe.toml --trials 4   # options from a file (Python API names), flags override it
"""

from __future__ import annotations

import json
import shlex
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from litm.cli import app
from litm.cli._config import Key, config_option, with_config
from litm.cli._help import PanelGroup
from litm.cli._interrupt import stop_resumably
from litm.errors import ProbeError
from litm.models._local.kv_reuse import REUSE_BATCH
from litm.util._records import decode_text

if TYPE_CHECKING:
    from litm.probe._command import ProbeCommand

probe_app = typer.Typer(
    name="probe",
    cls=PanelGroup,
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


_MODEL, _GRID, _TASKS, _ADAPTIVE = "Model", "Grid", "Tasks and prompts", "Adaptive stopping"
_RUN, _OUTPUT = "Run", "Output"

#: ``--config`` keys: the Python API's names (ProbeConfig's fields, load_model's options, the run's), each with
#: the option it stands for.
KEYS = {
    "model": Key("model", ("str",)),
    "reuse_prefix": Key("reuse", ("str",), choices=tuple(ReuseOpt)),
    "n_batch": Key("batch", ("int",), low=1),
    "n_threads": Key("threads", ("int",), low=1),
    "concurrency": Key("concurrency", ("int",), low=1),
    "tasks": Key("task", ("list[str]", "str")),
    "lengths": Key("lengths", ("list[int]", "str")),
    "depths": Key("depths", ("list[float]", "str")),
    "trials": Key("trials", ("int",), low=1),
    "layouts": Key("layouts", ("list[str]", "str")),
    "template": Key("template", ("str",)),
    "seed": Key("seed", ("int",)),
    "closed_book": Key("closed_book", ("bool",)),
    "k": Key("k", ("int",), low=2),
    "chain_depth": Key("chain_depth", ("float",), low=0, high=1),
    "max_tokens": Key("max_tokens", ("int",), low=1),
    "order": Key("order", ("str",), choices=tuple(OrderOpt)),
    "filler": Key("filler", ("str",), choices=tuple(FillerOpt)),
    "adaptive": Key("adaptive", ("bool",)),
    "target_half_width": Key("ci_width", ("float",)),
    "min_trials": Key("min_trials", ("int",), low=1),
    "flip_risk": Key("flip_risk", ("float",), low=0, high=0.99),
    "corpus": Key("corpus", ("str",)),
    "out": Key("out", ("str",)),
    "resume": Key("resume", ("bool",)),
    "fresh": Key("fresh", ("bool",)),
    "dry_run": Key("dry_run", ("bool",)),
    "price_in": Key("price_in", ("float",)),
    "price_out": Key("price_out", ("float",)),
    "ratio": Key("ratio", ("float",), low=0, high=1),
    "plots": Key("plots", ("bool",)),
    "report": Key("report", ("bool",)),
    "progress": Key("progress", ("bool",)),
}
_CONFIG_FIELDS = ("tasks", "lengths", "depths", "trials", "layouts", "template", "seed", "closed_book", "k",
                  "chain_depth", "max_tokens", "order", "filler", "adaptive", "target_half_width", "min_trials",
                  "flip_risk")  # fmt: skip


def _names(value: object) -> tuple[str, ...]:
    """A list of names from the command line (repeated, comma-separated) or the file (a list or one string)."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    return _split([str(v) for v in items])


def _job(values: dict[str, object]) -> ProbeCommand:
    """The probe the merged options describe (ProbeConfig checks the grid; the types were checked before)."""
    from litm.probe._command import ProbeCommand, model_options
    from litm.probe._grid import ProbeConfig

    v = values
    config = ProbeConfig(
        **{name: v[name] for name in _CONFIG_FIELDS if name not in ("tasks", "layouts")},  # type: ignore[arg-type]
        tasks=_names(v["tasks"]),
        layouts=_names(v["layouts"]),
    )
    model = str(v["model"])
    options = model_options(
        model, reuse_prefix=v["reuse_prefix"], concurrency=v["concurrency"], n_threads=v["n_threads"],  # type: ignore[arg-type]
        n_batch=v["n_batch"],  # type: ignore[arg-type]
    )  # fmt: skip
    corpus = v["corpus"]
    return ProbeCommand(
        model, config, Path(str(v["out"])), corpus=Path(str(corpus)) if corpus is not None else None,
        resume=v["resume"] is True, fresh=v["fresh"] is True, dry_run=v["dry_run"] is True, options=options,
        price_in=v["price_in"], price_out=v["price_out"], ratio=v["ratio"],  # type: ignore[arg-type]
        plots=v["plots"] is True, report=v["report"] is True, progress=v["progress"] is True,
        command=shlex.join(["litm", *sys.argv[1:]]),
    )  # fmt: skip


@probe_app.callback()
def probe_cmd(
    ctx: typer.Context,
    config_file: Path | None = config_option("docs/probe.md"),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Model spec (local, local:smollm2, openai:..., ...).", rich_help_panel=_MODEL
    ),
    reuse: ReuseOpt | None = typer.Option(
        None, "--reuse", help="Local KV reuse: aligned (default; answers = cold), full (fastest), cold.",
        rich_help_panel=_MODEL,
    ),
    batch: int | None = typer.Option(
        None, "--batch", min=1, help=f"Local models: llama.cpp batch, the unit aligned reuse keeps ({REUSE_BATCH}).",
        rich_help_panel=_MODEL,
    ),
    threads: int | None = typer.Option(
        None, "--threads", min=1, help="Local models: llama.cpp threads.", rich_help_panel=_MODEL
    ),
    concurrency: int | None = typer.Option(
        None, "--concurrency", min=1, help="Remote models: parallel calls.", rich_help_panel=_MODEL
    ),
    task: list[str] = typer.Option(
        ["needle"], "--task", "-t",
        help="needle, paraphrase, chain, multi, nolima-literal, nolima, nolima-multi, kv, docqa "
        "(repeat or comma-separate).",
        rich_help_panel=_TASKS,
    ),
    lengths: str = typer.Option(
        "1k,2k,4k", "--lengths", "-l", help="Prompt lengths in tokens, e.g. 512,1k,4k.", rich_help_panel=_GRID
    ),
    depths: str = typer.Option(
        "linear:5", "--depths", "-d", help="0,0.25,0.5,0.75,1 or linear:N or edge:N.", rich_help_panel=_GRID
    ),
    trials: int = typer.Option(
        10, "--trials", "-n", min=1, help="Trials per (length, depth) cell.", rich_help_panel=_GRID
    ),
    seed: int = typer.Option(0, "--seed", help="Base seed (trial t uses seed + t).", rich_help_panel=_GRID),
    order: OrderOpt = typer.Option(
        OrderOpt.prefix, "--order", help="prefix: share KV prefixes; grid: cell by cell.", rich_help_panel=_GRID
    ),
    filler: FillerOpt = typer.Option(
        FillerOpt.nested, "--filler", help="nested: a length's filler extends the shorter ones' (default).",
        rich_help_panel=_GRID,
    ),
    corpus: Path | None = typer.Option(
        None, "--corpus", help="Filler: a dir of .txt/.md/.rst, or a JSONL file.", rich_help_panel=_GRID
    ),
    layouts: str = typer.Option(
        "plain,buffered", "--layouts", help="Prompt layouts, alternated by trial.", rich_help_panel=_TASKS
    ),
    template: Path | None = typer.Option(
        None, "--template", help="Your own layout: {document} and {question}.", rich_help_panel=_TASKS
    ),
    closed_book: bool = typer.Option(
        True, "--closed-book/--no-closed-book", help="Run the closed-book control.", rich_help_panel=_TASKS
    ),
    k: int = typer.Option(3, "--k", min=2, help="Facts per prompt for the multi task.", rich_help_panel=_TASKS),
    chain_depth: float = typer.Option(
        0.9, "--chain-depth", min=0.0, max=1.0, help="Depth of the chain's 2nd fact.", rich_help_panel=_TASKS
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", min=1, help="Answer length (default per task).", rich_help_panel=_TASKS
    ),
    adaptive: bool = typer.Option(
        False, "--adaptive", help="Stop a cell once more trials would not change the verdicts (docs/probe.md).",
        rich_help_panel=_ADAPTIVE,
    ),
    ci_width: float = typer.Option(
        0.15, "--ci-half-width", help="Adaptive: stop at this Wilson half-width.", rich_help_panel=_ADAPTIVE
    ),
    min_trials: int = typer.Option(
        4, "--min-trials", min=1, help="Adaptive: trials a cell runs at least.", rich_help_panel=_ADAPTIVE
    ),
    flip_risk: float = typer.Option(
        0.05, "--flip-risk", min=0.0, max=0.99, help="Adaptive: accepted chance that stopping changes a verdict.",
        rich_help_panel=_ADAPTIVE,
    ),
    out: Path = typer.Option(Path("litm-out/probe"), "--out", "-o", help="Output directory.", rich_help_panel=_RUN),
    resume: bool = typer.Option(
        False, "--resume", help="Continue a run in --out, skipping finished rows.", rich_help_panel=_RUN
    ),
    fresh: bool = typer.Option(
        False, "--fresh", help="Discard results already in --out and start over.", rich_help_panel=_RUN
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print calls, tokens and cost; run nothing.", rich_help_panel=_RUN
    ),
    price_in: float | None = typer.Option(
        None, "--price-in", help="USD per million input tokens (estimate).", rich_help_panel=_RUN
    ),
    price_out: float | None = typer.Option(
        None, "--price-out", help="USD per million output tokens (estimate).", rich_help_panel=_RUN
    ),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a progress bar with ETA.", rich_help_panel=_RUN
    ),
    ratio: float = typer.Option(
        0.85, "--ratio", min=0.0, max=1.0, help="Effective length: share of short accuracy.", rich_help_panel=_OUTPUT
    ),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Write PNG plots.", rich_help_panel=_OUTPUT),
    report: bool = typer.Option(True, "--report/--no-report", help="Write report.html.", rich_help_panel=_OUTPUT),
) -> None:
    """Probe a model: accuracy by context length and needle depth; writes results, profile, plots, report.

    Example: litm probe --model local --lengths 512,1k,2k --trials 10 --out litm-out/probe
    """
    if ctx.invoked_subcommand is not None:
        return
    from litm.cli import fail
    from litm.probe._command import run_probe_command

    values: dict[str, object] = {
        "model": model, "reuse_prefix": reuse.value if reuse is not None else None, "n_batch": batch,
        "n_threads": threads, "concurrency": concurrency, "tasks": task, "lengths": lengths, "depths": depths,
        "trials": trials, "layouts": layouts, "template": _read_template(template) if template is not None else None,
        "seed": seed, "closed_book": closed_book, "k": k, "chain_depth": chain_depth, "max_tokens": max_tokens,
        "order": order.value, "filler": filler.value, "adaptive": adaptive, "target_half_width": ci_width,
        "min_trials": min_trials, "flip_risk": flip_risk, "corpus": str(corpus) if corpus is not None else None,
        "out": str(out), "resume": resume, "fresh": fresh, "dry_run": dry_run, "price_in": price_in,
        "price_out": price_out, "ratio": ratio, "plots": plots, "report": report, "progress": progress,
    }  # fmt: skip
    values = with_config(ctx, config_file, KEYS, values)
    if values["model"] is None:
        raise fail("--model is required (for example --model local); see litm probe --help")
    if values["resume"] and values["fresh"]:
        raise fail("--resume and --fresh contradict each other")
    job = _job(values)
    with stop_resumably(job.out / "results.jsonl"):
        run_probe_command(job, typer.echo)


@probe_app.command("diff")
def diff_cmd(
    a: Path = typer.Argument(..., help="First profile JSON (for example model A)."),
    b: Path = typer.Argument(..., help="Second profile JSON (model B, or a later version of A)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Compare two position profiles depth by depth (Fisher exact test when both are probe results)."""
    from litm.placement import PositionProfile
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
    from litm.probe._command import rewrite_outputs

    rewrite_outputs(out, typer.echo, ratio=ratio, rescore=rescore, corpus=corpus)
