"""Run a probe: build each prompt, schedule prompts that share a prefix back to back, score, append.

The local backend keeps the KV cache of the previous prompt, so the order of calls is a cost. Within a
trial every prompt shares its filler: prompts that differ only in where the needle sits are identical up
to the needle, and a shorter length's filler is a prefix of a longer one's. Sorting a trial's prompts
as strings visits them as a depth-first walk of their prefix tree, so every shared prefix is evaluated
once: each prompt reuses the longest prefix that any earlier prompt offered. ``order="grid"`` runs cell by
cell instead (the naive order, kept for the benchmark). With ``adaptive`` on, a cell stops once its
interval is narrow enough or clearly separated from the better edge.

Remote models run several calls at once (``model.concurrency``); each finished row is written at once,
so a killed run restarted with ``--resume`` skips what is done.

Example:
    >>> from litm.models import load_model
    >>> run = run_probe(load_model("local"), ProbeConfig(lengths=(512,), trials=2), "out/")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from litm._version import __version__
from litm.eval.results import ResultsLog, check_run_settings
from litm.eval.runs import completion_fields, model_mode
from litm.eval.scoring import score_output
from litm.eval.stats import wilson, wilson_half_width
from litm.models.base import Completion, Model, run_each
from litm.probe.corpus import Corpus, default_corpus
from litm.probe.errors import ProbeError
from litm.probe.grid import ProbeConfig, TrialSpec, plan
from litm.probe.layouts import CLOSED_BOOK, Layout, get_layout
from litm.probe.registry import get_task
from litm.probe.tasks import BuiltPrompt, Task, TaskInstance, layout_recipe
from litm.util.progress import progress as make_progress

__all__ = [
    "PROBE_VERSION",
    "Prepared",
    "ProbeContext",
    "ProbeRun",
    "batches",
    "make_row",
    "model_mode",
    "prepare",
    "run_probe",
    "run_settings",
    "schedule",
    "score_fields",
]

PROBE_VERSION = 1
# Bumped when the scoring rules change; ``litm probe report --rescore`` rescores older rows.
SCORING_VERSION = 2


@dataclass
class Prepared:
    """A spec with its task instance, layout and built prompt, ready to run."""

    spec: TrialSpec
    instance: TaskInstance
    layout: Layout
    built: BuiltPrompt
    max_tokens: int


class ProbeContext:
    """Tasks, layouts, corpus and token counter of one run (built once, shared by every prompt)."""

    def __init__(self, model: Model, config: ProbeConfig, corpus: Corpus | None = None) -> None:
        self.config = config
        self.count: Callable[[str], int] = model.count_tokens
        self.tasks: dict[str, Task] = {
            t: get_task(t, k=config.k, second_depth=config.chain_depth) for t in config.tasks
        }
        needs_corpus = any(t.uses_corpus for t in self.tasks.values())
        self.corpus = corpus if corpus is not None else (default_corpus() if needs_corpus else None)
        self.layouts: dict[str, Layout] = (
            {"custom": Layout("custom", config.template)}
            if config.template
            else {name: get_layout(name) for name in config.layouts}
        )
        self.layouts["closed-book"] = CLOSED_BOOK


def prepare(spec: TrialSpec, ctx: ProbeContext) -> Prepared:
    """Build the exact prompt of one spec (closed-book controls get the question alone)."""
    task = ctx.tasks[spec.task]
    depth = 0.5 if spec.depth is None else spec.depth
    inst = task.instance(spec.seed, depth, ctx.config.depths)
    max_tokens = ctx.config.max_tokens or inst.max_tokens
    layout = ctx.layouts[spec.layout]
    if spec.kind == "closed_book":
        prompt = task.closed_book(inst)
        built = BuiltPrompt(prompt, ctx.count(prompt), False, (), "", {"document": {"kind": "none"}})
    else:
        built = task.build(inst, layout, spec.length, ctx.count, ctx.corpus)
    return Prepared(spec, inst, layout, built, max_tokens)


def schedule(prepared: Sequence[Prepared], order: str) -> list[Prepared]:
    """``prefix``: sorted by prompt text, a depth-first walk of the shared-prefix tree; ``grid``: as given."""
    if order == "prefix":
        return sorted(prepared, key=lambda p: p.built.prompt)
    return list(prepared)


def batches(specs: Sequence[TrialSpec], order: str) -> Iterator[list[TrialSpec]]:
    """Groups that share filler (closed-book controls; then per trial and task), or one cell-major batch."""
    if order == "grid":
        yield sorted(specs, key=lambda s: (s.kind != "closed_book", s.task, s.length, s.depth or 0.0, s.trial))
        return
    groups: dict[tuple[int, int, str], list[TrialSpec]] = {}
    for s in specs:
        key = (0, 0, s.task) if s.kind == "closed_book" else (1, s.trial, s.task)
        groups.setdefault(key, []).append(s)
    for key in sorted(groups):
        yield groups[key]


def score_fields(
    inst: TaskInstance,
    output: str,
    finish_reason: str,
    *,
    kind: str,
    depth: float | None,
    document: str,
    distractor_positions: Mapping[str, float],
) -> dict[str, Any]:
    """The scored fields of a row (also used to rescore stored outputs after the rules change)."""
    s = score_output(
        output,
        answers=inst.answers,
        question=inst.question,
        targets=[v for _, v in inst.targets],
        distractors=(*inst.distractors, *distractor_positions),
        distractor_positions=distractor_positions,
        document=document,
        truncated=finish_reason == "length",
    )
    observations: list[list[Any]] = []
    if kind == "trial":
        if inst.targets:
            observations = [[d, bool(f)] for (d, _), f in zip(inst.targets, s.found, strict=True)]
        else:
            observations = [[depth, s.hit]]
    return {
        "first_line": s.first_line,
        "hit": s.hit,
        "score": round(s.score, 4),
        "miss": s.miss,
        "copied_position": None if s.copied_position is None else round(s.copied_position, 4),
        "observations": observations,
        "scoring_version": SCORING_VERSION,
    }


def make_row(p: Prepared, done: Completion, model: Model, mode: str) -> dict[str, Any]:
    """The results row of one call: cell, output, score, miss class, cost, and the recipe of its prompt."""
    spec, inst, built = p.spec, p.instance, p.built
    scored = score_fields(
        inst,
        done.text,
        done.finish_reason,
        kind=spec.kind,
        depth=spec.depth,
        document=built.document,
        distractor_positions=built.distractor_positions,
    )
    recipe = {
        "version": PROBE_VERSION,
        "task": spec.task,
        "seed": spec.seed,
        "layout": layout_recipe(p.layout),
        "instruction": inst.instruction,
        "doc_label": inst.doc_label,
        "question": inst.question,
        "answer_prefix": inst.answer_prefix,
        **built.recipe,
    }
    return {
        "key": spec.key,
        "kind": spec.kind,
        "task": spec.task,
        "length": spec.length,
        "depth": spec.depth,
        "trial": spec.trial,
        "layout": spec.layout,
        "seed": spec.seed,
        "prompt_tokens": built.prompt_tokens,
        "exact_length": built.exact,
        "actual_depths": [round(d, 4) for d in built.actual_depths],
        "question": inst.question,
        "answers": list(inst.answers),
        "output": done.text,
        **scored,
        **completion_fields(done),
        "max_tokens": p.max_tokens,
        "mode": mode,
        "model": model.name,
        "prompt_sha256": hashlib.sha256(built.prompt.encode("utf-8")).hexdigest(),
        "recipe": recipe,
        "time": datetime.now(UTC).isoformat(timespec="seconds"),
    }


@dataclass
class ProbeRun:
    """What a run did: every row in the results file (earlier ones included) and what this call cost."""

    out_dir: Path
    rows: list[dict[str, Any]]
    new_rows: int
    skipped: int
    wall_s: float
    input_tokens: int = 0
    prefill_tokens: int = 0
    settings: dict[str, Any] = field(default_factory=dict)


class _Adaptive:
    """Stops a cell once its Wilson half-width is small, or (inner depths) it is clearly off the better edge."""

    def __init__(self, config: ProbeConfig, rows: Sequence[dict[str, Any]]) -> None:
        self.config = config
        self.edges = (min(config.depths), max(config.depths))
        self.counts: dict[tuple[str, int, float], list[int]] = {}
        for r in rows:
            self.add(r)

    def add(self, row: dict[str, Any]) -> None:
        if row.get("kind") != "trial":
            return
        c = self.counts.setdefault((row["task"], row["length"], row["depth"]), [0, 0])
        c[0] += bool(row["observations"][0][1]) if row.get("observations") else bool(row["hit"])
        c[1] += 1

    def active(self, spec: TrialSpec) -> bool:
        if spec.kind != "trial" or spec.depth is None:
            return True
        hits, n = self.counts.get((spec.task, spec.length, spec.depth), [0, 0])
        if n < self.config.min_trials:
            return True
        if wilson_half_width(hits, n) <= self.config.target_half_width:
            return False
        if spec.depth in self.edges:
            return True
        edge_ci = [wilson(*self.counts.get((spec.task, spec.length, e), [0, 0])) for e in self.edges]
        best = max(edge_ci, key=lambda ci: ci[0] + ci[1])
        lo, hi = wilson(hits, n)
        return not (hi < best[0] or lo > best[1])


def _execute(model: Model, items: Sequence[Prepared], on_done: Callable[[Prepared, Completion], None]) -> None:
    """Run the calls: in order for an in-process model, ``model.concurrency`` at a time for a remote one."""

    def call(p: Prepared) -> Completion:
        return model.complete(p.built.prompt, max_tokens=p.max_tokens, temperature=0.0, seed=p.spec.seed)

    run_each(model, items, call, on_done)


def run_settings(model: Model, config: ProbeConfig, ctx: ProbeContext, command: str | None = None) -> dict[str, Any]:
    """``run.json``: model, mode, grid, corpus and versions; ``identity`` is what a resume must match."""
    corpus = ctx.corpus
    identity = {
        **config.identity(),
        "model": getattr(model, "spec", "") or model.name,
        "mode": model_mode(model),
        "corpus": corpus.fingerprint if corpus else None,
    }
    return {
        "probe_version": PROBE_VERSION,
        "litm_version": __version__,
        "model": {"name": model.name, "spec": getattr(model, "spec", ""), "mode": model_mode(model)},
        "tokenizer": {"name": str(model.tokenizer.name), "exact": bool(model.tokenizer.exact)},
        "config": config.to_dict(),
        "corpus": {"name": corpus.name, "fingerprint": corpus.fingerprint, "sentences": len(corpus)}
        if corpus
        else None,
        "identity": identity,
        "command": command,
    }


def run_probe(
    model: Model,
    config: ProbeConfig,
    out_dir: str | Path,
    *,
    corpus: Corpus | None = None,
    progress: bool = True,
    fresh: bool = False,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    command: str | None = None,
) -> ProbeRun:
    """Run (or resume) the grid of ``config`` on ``model``; rows go to ``out_dir/results.jsonl`` as they finish.

    A run directory that holds results is resumed: finished row keys are skipped. Settings that would
    change existing prompts (model, seed, layouts, corpus, ...) raise :class:`ProbeError` unless ``fresh``
    (which starts over). ``on_row`` sees each new row; ``command`` is recorded in ``run.json`` and the report.
    """
    if config.adaptive and config.order != "prefix":
        raise ProbeError("adaptive sampling runs trial by trial: use order='prefix'")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = ProbeContext(model, config, corpus)
    settings = run_settings(model, config, ctx, command)
    check_run_settings(out / "run.json", settings["identity"], fresh=fresh, error=ProbeError)
    if fresh:
        (out / "results.jsonl").unlink(missing_ok=True)
    (out / "run.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    log = ResultsLog(out / "results.jsonl")
    specs = plan(config)
    pending = [s for s in specs if s.key not in log]
    adaptive = _Adaptive(config, log.rows) if config.adaptive else None
    mode = model_mode(model)
    start = time.perf_counter()
    stats = {"new": 0, "input": 0, "prefill": 0}

    def done(p: Prepared, completion: Completion) -> None:
        row = make_row(p, completion, model, mode)
        log.append(row)
        stats["new"] += 1
        stats["input"] += completion.input_tokens
        stats["prefill"] += completion.input_tokens - completion.cached_tokens
        if adaptive is not None:
            adaptive.add(row)
        if on_row is not None:
            on_row(row)
        bar.advance(task_id)

    with make_progress("probe", enabled=progress) as bar:
        task_id = bar.add_task("trials", total=len(pending))
        for batch in batches(pending, config.order):
            if adaptive is not None:
                kept = [s for s in batch if adaptive.active(s)]
                bar.set_total(task_id, bar.total(task_id) - (len(batch) - len(kept)))
                batch = kept
            ordered = schedule([prepare(s, ctx) for s in batch], config.order)
            _execute(model, ordered, done)
    return ProbeRun(
        out_dir=out,
        rows=list(log.rows),
        new_rows=stats["new"],
        skipped=len(specs) - len(pending),
        wall_s=time.perf_counter() - start,
        input_tokens=stats["input"],
        prefill_tokens=stats["prefill"],
        settings=settings,
    )
