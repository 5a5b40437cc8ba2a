"""What ``litm bench`` does, as a library call: the command line only parses and prints.

:func:`run_bench_command` loads the model with the benchmark's options (a resume keeps the run's own llama.cpp
batch), runs the benchmark resumably and writes its summaries, reporting through ``echo`` a line at a time.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from litm.bench._config import BenchConfig
from litm.bench._design import NQ_ARMS, STRATEGIES
from litm.bench._goldsets import GOLDSET_STRATEGIES
from litm.bench._outputs import BenchOutputs, write_run_outputs
from litm.bench._runner import BenchRun, run_bench
from litm.bench._settings import recorded_batch
from litm.errors import BenchError
from litm.models import load_model
from litm.models._local.kv_reuse import REUSE_BATCH
from litm.models._spec import parse_spec
from litm.placement import PositionProfile

__all__ = ["BenchCommand", "run_bench_command", "summary_lines", "with_data_defaults"]

Echo = Callable[[str], None]


def with_data_defaults(config: BenchConfig) -> BenchConfig:
    """``config`` with the strategies and ablation arms of its data where it names none: multi-gold data
    (HotpotQA, 2Wiki, a file) runs the strategies that place gold sets and the ``default`` / ``bracket`` arms.

    >>> with_data_defaults(BenchConfig(data="hotpotqa", strategies=(), ablation_arms=())).ablation_arms
    ('default', 'bracket')
    """
    multi = config.data != "nq"
    strategies = config.strategies or (tuple(s for s in STRATEGIES if s in GOLDSET_STRATEGIES) if multi else STRATEGIES)
    arms = config.ablation_arms or (("default", "bracket") if multi else NQ_ARMS)
    return dataclasses.replace(config, strategies=strategies, ablation_arms=arms)


@dataclass(frozen=True)
class BenchCommand:
    """One ``litm bench`` run: the model spec and its load options, the benchmark, and what to write.

    ``reuse_prefix``, ``n_threads`` and ``n_batch`` apply to a local model, ``concurrency`` to a remote one;
    ``profile`` drives the multi-gold questions' ``profile`` strategy; ``command`` is recorded with the run.
    """

    model: str
    config: BenchConfig
    out: Path
    profile: Path | None = None
    resume: bool = False
    progress: bool = True
    plots: bool = True
    reuse_prefix: str = "aligned"
    n_threads: int | None = None
    n_batch: int | None = None
    concurrency: int | None = None
    command: str = ""

    def model_options(self) -> dict[str, object]:
        """The :func:`~litm.models.load_model` options (a resume loads the batch the run recorded)."""
        options: dict[str, object] = {}
        if parse_spec(self.model).scheme == "local":
            options["reuse_prefix"] = self.reuse_prefix
            if self.n_threads is not None:
                options["n_threads"] = self.n_threads
            options["n_batch"] = self.n_batch or (self.resume and recorded_batch(self.out)) or REUSE_BATCH
        elif self.concurrency is not None:
            options["concurrency"] = self.concurrency
        return options


def summary_lines(result: BenchOutputs) -> list[str]:
    """Slot accuracy, likelihood and gap recovered per k, and the multi-gold designs, as printed after a run."""
    lines: list[str] = []
    for kk, s in result.summary["by_k"].items():
        lines.append(f"\n== k={kk}: {s['questions']} questions ==")
        lines.append("slot accuracy: " + " ".join(f"{c['acc']:.2f}" for c in s["slot_accuracy"]))
        if s.get("likelihood"):
            lines.append("slot likelihood: " + " ".join(f"{c['mean']:.2f}" for c in s["likelihood"]["slots"]))
        for dist, table in s["headline"].items():
            gaps = json.dumps({n: v["gap_recovered"] for n, v in table.items()})
            lines.append(f"gap recovered ({dist} gold rank): {gaps}")
    for kk, s in (result.summary.get("gold_sets") or {}).get("by_k", {}).items():
        lines.append(f"\n== multi-gold, k={kk}: {s['questions']} questions ==")
        for design, cells in s["designs"].items():
            scores = " ".join(f"{m} {c.get('acc', c.get('mean', 0)):.3f}" for m, c in cells.items())
            lines.append(f"{design}: {scores}")
    return lines


def run_bench_command(job: BenchCommand, echo: Echo) -> BenchRun:
    """Run ``job`` and write its outputs; lines to show go to ``echo``. Returns the run."""
    config, out = job.config, job.out
    if config.baseline is not None and not (Path(config.baseline) / "bench.jsonl").is_file():
        raise BenchError(f"--baseline {config.baseline} holds no bench.jsonl")
    profile = PositionProfile.load(job.profile) if job.profile is not None else None
    model = load_model(job.model, **job.model_options())
    run = run_bench(model, config, out, resume=job.resume, progress=job.progress, command=job.command,
                    profile=profile)  # fmt: skip
    echo(f"{run.answered} prompts answered, {run.reused} reused identical prompts; {len(run.rows)} rows in {out}")
    for note in run.notes:
        echo(f"warning: {note}")
    result = write_run_outputs(out, run.rows, run.settings, plots=job.plots)
    for kind, path in result.arm_summaries.items():
        echo(f"{kind} summary: {path}")
    if config.compress_only or config.psc_only or config.ablation_only:
        return run
    for line in summary_lines(result):
        echo(line)
    if result.report is not None:
        echo(f"\nreport: {result.report}")
    return run
