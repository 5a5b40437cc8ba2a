"""What ``litm probe`` and ``litm probe report`` do, as library calls: the command line only parses and prints.

:func:`run_probe_command` loads the model, checks the output folder and the window, estimates (a dry run,
or a remote model before it spends), runs the grid resumably and writes the outputs. It reports through
``echo``, a line at a time, because a probe runs for minutes to hours: the estimate is shown before the
sweep starts, not after it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from litm.errors import ProbeError
from litm.eval._results import ResultsLog, read_rows, read_settings
from litm.models import load_model
from litm.models._local.kv_reuse import REUSE_BATCH
from litm.probe._corpus import load_corpus
from litm.probe._cost import Pricer, provider_of
from litm.probe._estimate import estimate
from litm.probe._export import accuracy_table, recommended_max_input_tokens
from litm.probe._grid import ProbeConfig
from litm.probe._outputs import ProbeOutputs, write_outputs
from litm.probe._rescore import rescore_rows, write_rows
from litm.probe._runner import run_probe

__all__ = ["ProbeCommand", "model_options", "rewrite_outputs", "run_probe_command", "summary_lines"]

Echo = Callable[[str], None]


def summary_lines(outputs: ProbeOutputs) -> list[str]:
    """Each task's accuracy table, findings and recommended ``max_input_tokens``, as printed after a run."""
    lines: list[str] = []
    for a in outputs.analyses.values():
        if not a.lengths:
            continue
        lines += [f"\n== {a.task}: accuracy [Wilson 95%] by length and depth ==", accuracy_table(a)]
        lines += [f"- {line}" for line in a.findings]
        rec, why = recommended_max_input_tokens(a)
        lines.append(f"- recommended max_input_tokens: {rec} ({why})")
    return lines


def model_options(
    spec: str,
    *,
    reuse_prefix: str | None = None,
    concurrency: int | None = None,
    n_threads: int | None = None,
    n_batch: int | None = None,
) -> dict[str, object]:
    """The :func:`~litm.models.load_model` options of a probe: those given, and for a local model the batch
    aligned KV reuse keeps (recorded with the run, so a resume reuses the same prompts' caches).

    >>> model_options("local", n_threads=2)
    {'n_threads': 2, 'n_batch': 64}
    """
    options: dict[str, object] = {}
    if reuse_prefix is not None:
        options["reuse_prefix"] = reuse_prefix
    if concurrency is not None:
        options["concurrency"] = concurrency
    if n_threads is not None:
        options["n_threads"] = n_threads
    if n_batch is not None or spec.strip().lower().startswith("local"):
        options["n_batch"] = n_batch or REUSE_BATCH
    return options


@dataclass(frozen=True)
class ProbeCommand:
    """One ``litm probe`` run: the model spec and its load options, the grid, and what to write.

    ``resume`` continues a run in ``out`` and ``fresh`` discards it; with neither, results already in ``out``
    are an error. ``command`` is recorded in ``run.json``.
    """

    model: str
    config: ProbeConfig
    out: Path
    corpus: Path | None = None
    resume: bool = False
    fresh: bool = False
    dry_run: bool = False
    options: Mapping[str, object] = field(default_factory=dict)
    price_in: float | None = None
    price_out: float | None = None
    ratio: float = 0.85
    plots: bool = True
    report: bool = True
    progress: bool = True
    command: str = ""

    def __post_init__(self) -> None:
        if self.resume and self.fresh:
            raise ProbeError("resume (--resume) and fresh (--fresh) contradict each other")


def run_probe_command(job: ProbeCommand, echo: Echo) -> ProbeOutputs | None:
    """Run ``job``; returns the outputs written (None for a dry run). Lines to show go to ``echo``."""
    out = job.out
    existing = ResultsLog(out / "results.jsonl").rows if (out / "results.jsonl").exists() else []
    if existing and not (job.resume or job.fresh or job.dry_run):
        raise ProbeError(f"{out} already holds {len(existing)} results: pass --resume to continue or --fresh to "
                         "start over")  # fmt: skip
    try:
        llm = load_model(job.model, **job.options)
    except TypeError as exc:  # e.g. --reuse or --threads for a remote model, --concurrency for a local one
        raise ProbeError(f"option not supported by {job.model}: {exc}") from None
    corpus = load_corpus(job.corpus) if job.corpus is not None else None
    window = llm.context_window
    longest = max(job.config.lengths)
    if longest + (job.config.max_tokens or 64) > window:
        raise ProbeError(f"length {longest} plus the answer does not fit the {window}-token window")
    if job.dry_run or llm.remote:
        est = estimate(llm, job.config, out, corpus, model_options=dict(job.options))
        echo(est.describe(job.price_in, job.price_out))
        if job.dry_run:
            return None
    pricer = Pricer(llm.name, provider_of(llm), price_in=job.price_in, price_out=job.price_out)
    run = run_probe(
        llm, job.config, out, corpus=corpus, progress=job.progress, fresh=job.fresh, command=job.command,
        model_options=job.options, prices=pricer,
    )  # fmt: skip
    echo(run.describe())
    outputs = write_outputs(
        out, run.rows, run.settings, plots=job.plots, report=job.report, context_window=window, ratio=job.ratio
    )
    for line in summary_lines(outputs):
        echo(line)
    echo(f"\nresults: {out / 'results.jsonl'}\nprofile: {outputs.profile_path}")
    if outputs.report is not None:
        echo(f"report:  {outputs.report}")
    return outputs


def rewrite_outputs(out: Path, echo: Echo, *, ratio: float = 0.85, rescore: bool = False,
                    corpus: Path | None = None) -> ProbeOutputs:  # fmt: skip
    """Re-analyse the run in ``out`` (finished or partial) and rewrite its profile, plots and report;
    ``rescore`` first scores the stored outputs again under the current rules."""
    rows: Sequence[Mapping[str, object]] = read_rows(out / "results.jsonl")
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
        echo(f"rescored {len(new)} rows; {changed} changed hit or miss class")
        rows = new
    outputs = write_outputs(out, rows, settings, ratio=ratio)
    for line in summary_lines(outputs):
        echo(line)
    echo(f"\nprofile: {outputs.profile_path}\nreport:  {outputs.report}")
    return outputs
