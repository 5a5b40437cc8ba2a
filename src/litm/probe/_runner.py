"""Run a probe: build each prompt, run prompts that share a prefix back to back, score, append.

Prompts of one trial share their filler up to their needles, so each trial's prompts run as a walk of
their prefix tree (:mod:`litm.probe._schedule`): a local model's KV cache evaluates every shared prefix
once, and a provider's prompt cache bills it at the cached rate (:mod:`litm.probe._caching`: Anthropic
gets ``cache_control`` breakpoints at the shared prefixes). ``order="grid"`` runs cell by cell instead
(the naive order, kept for the benchmark). With ``adaptive`` on, the grid runs trial by trial and cells
stop by the rule of :mod:`litm.probe._sequential`.

Remote models run several trials at once (``model.concurrency``), each trial's prompts one after another
so a prefix is cached before the next prompt reads it; each finished row is written at once, so a killed
run restarted with ``--resume`` skips what is done. A run reports what it evaluated (naive, floor, exact
minimum, scheduled, measured) and, for a priced model, what it billed, cached and uncached tokens apart.

Example:
    >>> from litm.models import load_model
    >>> run = run_probe(load_model("local"), ProbeConfig(lengths=(512,), trials=2), "out/")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypedDict

from litm._version import __version__
from litm.errors import ProbeError
from litm.eval._results import ResultsLog, check_run_settings, read_settings
from litm.eval._runs import model_mode
from litm.models._base import Completion, Model
from litm.probe._caching import cache_policy, plan_cache, planning_count
from litm.probe._corpus import Corpus
from litm.probe._cost import Bill, Pricer, provider_of, row_usage
from litm.probe._grid import ProbeConfig, TrialSpec, plan
from litm.probe._prepare import Prepared, ProbeContext, prepare
from litm.probe._rows import PROBE_VERSION, ProbeRow, make_row, rows_of
from litm.probe._schedule import PrefillCost, PrefillMeter, batches, run_order, token_encoder
from litm.probe._sequential import Sequential
from litm.util._files import atomic_write
from litm.util._progress import progress as make_progress

__all__ = ["PROBE_VERSION", "ProbeRun", "reuse_rule", "run_probe", "run_settings"]


@dataclass
class ProbeRun:
    """What a run did: every row in the results file (earlier ones included) and what this call cost.

    ``prefill`` is the prompt-token account of this call's prompts (local models), ``bill`` what its calls
    billed (dollars when the model is priced), ``stopping`` the sequential rule's decisions (adaptive runs).
    """

    out_dir: Path
    rows: list[ProbeRow]
    new_rows: int
    skipped: int
    wall_s: float
    input_tokens: int = 0
    prefill_tokens: int = 0
    settings: ProbeSettings = field(default_factory=lambda: ProbeSettings())
    model_s: float = 0.0
    prefill: PrefillCost | None = None
    bill: Bill | None = None
    stopping: dict[str, object] | None = None

    def describe(self) -> str:
        """The run's cost in a few lines (what the CLI prints)."""
        lines = [
            f"{self.new_rows} new rows ({self.skipped} already done) in {self.wall_s:.1f} s; "
            f"{self.prefill_tokens} of {self.input_tokens} prompt tokens evaluated (the rest reused)"
        ]
        if self.prefill is not None:
            lines.append(self.prefill.describe(self.prefill_tokens))
        if self.bill is not None and self.bill.calls and (self.bill.micros is not None or self.prefill is None):
            lines.append("billed: " + self.bill.describe())
        return "\n".join(lines)


def reuse_rule(model: Model, options: Mapping[str, object] | None = None) -> str | None:
    """The KV-reuse rule of a local model for :class:`~litm.probe._schedule.PrefillMeter` (None if remote).

    ``options`` are those it was loaded with (``n_batch``: the chunk aligned reuse keeps; 512 by default).
    """
    mode = model_mode(model)
    if mode in ("full", "cold"):
        return mode
    if mode == "aligned":
        batch = (options or {}).get("n_batch", 512)
        if not isinstance(batch, int) or isinstance(batch, bool):
            raise ProbeError(f"n_batch must be an integer, got {batch!r}")
        return f"aligned:{batch}"
    return None


class ProbeSettings(TypedDict, total=False):
    """``run.json`` of a probe run (``identity`` is what a resume must match; ``cost`` the last call's)."""

    probe_version: int
    litm_version: str
    model: dict[str, object]
    tokenizer: dict[str, object]
    config: dict[str, object]
    corpus: dict[str, object] | None
    identity: dict[str, object]
    command: str | None
    cost: dict[str, object]


def run_settings(
    model: Model,
    config: ProbeConfig,
    ctx: ProbeContext,
    command: str | None = None,
    model_options: Mapping[str, object] | None = None,
) -> ProbeSettings:
    """``run.json``: model, mode, grid, corpus and versions; ``identity`` is what a resume must match."""
    corpus = ctx.corpus
    identity: dict[str, object] = {
        **config.identity(),
        "model": getattr(model, "spec", "") or model.name,
        "mode": model_mode(model),
        "corpus": corpus.fingerprint if corpus else None,
    }
    return {
        "probe_version": PROBE_VERSION,
        "litm_version": __version__,
        "model": {
            "name": model.name,
            "spec": getattr(model, "spec", ""),
            "mode": model_mode(model),
            "options": dict(model_options or {}),
        },
        "tokenizer": {"name": str(model.tokenizer.name), "exact": bool(model.tokenizer.exact)},
        "config": config.to_dict(),
        "corpus": {"name": corpus.name, "fingerprint": corpus.fingerprint, "sentences": len(corpus)}
        if corpus
        else None,
        "identity": identity,
        "command": command,
    }


def _rounds(specs: Sequence[TrialSpec], config: ProbeConfig) -> list[list[list[TrialSpec]]]:
    """Batches grouped into the rounds the run waits between: one round, or one per trial (adaptive)."""
    groups = list(batches(specs, config.order))
    if not config.adaptive:
        return [groups]
    rounds: dict[int, list[list[TrialSpec]]] = {}
    for group in groups:
        key = -1 if group[0].kind == "closed_book" else group[0].trial
        rounds.setdefault(key, []).append(group)
    return [rounds[k] for k in sorted(rounds)]


Chain = list[tuple[Prepared, tuple[int, ...]]]


def _execute(model: Model, chains: Sequence[Chain], on_done: Callable[[Prepared, Completion], None]) -> None:
    """Run each chain's calls in order; a remote model runs up to ``model.concurrency`` chains at once.

    ``on_done`` is always called in this thread (it writes the results file), in completion order.
    """

    def call(p: Prepared, cache_at: tuple[int, ...]) -> Completion:
        if cache_at:
            return model.complete(
                p.built.prompt, max_tokens=p.max_tokens, temperature=0.0, seed=p.spec.seed, cache_at=cache_at
            )
        return model.complete(p.built.prompt, max_tokens=p.max_tokens, temperature=0.0, seed=p.spec.seed)

    limit = int(getattr(model, "concurrency", 1))
    if not getattr(model, "remote", False) or limit <= 1 or len(chains) <= 1:
        for chain in chains:
            for p, cache_at in chain:
                on_done(p, call(p, cache_at))
        return
    done: queue.Queue[tuple[Prepared, Completion] | BaseException | None] = queue.Queue()
    stop = threading.Event()

    def worker(chain: Chain) -> None:
        try:
            for p, cache_at in chain:
                if stop.is_set():
                    return
                done.put((p, call(p, cache_at)))
        except BaseException as exc:  # handed to the calling thread, which raises it
            done.put(exc)
        finally:
            done.put(None)

    with ThreadPoolExecutor(max_workers=min(limit, len(chains)), thread_name_prefix="litm-probe") as pool:
        for chain in chains:
            pool.submit(worker, chain)
        finished = 0
        try:
            while finished < len(chains):
                item = done.get()
                if item is None:
                    finished += 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    on_done(*item)
        finally:
            stop.set()


def run_probe(
    model: Model,
    config: ProbeConfig,
    out_dir: str | Path,
    *,
    corpus: Corpus | None = None,
    progress: bool = True,
    fresh: bool = False,
    on_row: Callable[[ProbeRow], None] | None = None,
    command: str | None = None,
    model_options: Mapping[str, object] | None = None,
    prices: Pricer | None = None,
) -> ProbeRun:
    """Run (or resume) the grid of ``config`` on ``model``; rows go to ``out_dir/results.jsonl`` as they finish.

    A run directory that holds results is resumed: finished row keys are skipped. Settings that would
    change existing prompts (model, seed, layouts, corpus, ...) raise :class:`ProbeError` unless ``fresh``
    (which starts over). ``on_row`` sees each new row; ``command`` is recorded in ``run.json`` and the report,
    and ``model_options`` (what the model was loaded with; ``n_batch`` sets the aligned-reuse chunk the
    prefill account uses). ``prices`` prices the calls (default: the spend price table, for a known model).
    """
    if config.adaptive and config.order != "prefix":
        raise ProbeError("adaptive sampling runs trial by trial: use order='prefix'")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ctx = ProbeContext(model, config, corpus)
    settings = run_settings(model, config, ctx, command, model_options)
    check_run_settings(out / "run.json", settings["identity"], fresh=fresh, error=ProbeError)
    if fresh:
        (out / "results.jsonl").unlink(missing_ok=True)
    elif (out / "run.json").exists():
        old = read_settings(out / "run.json").get("config") or {}
        config.check_growth((old.get("lengths") if isinstance(old, dict) else None) or [])
    atomic_write(out / "run.json", json.dumps(settings, indent=2) + "\n")
    log = ResultsLog(out / "results.jsonl")
    specs = plan(config)
    pending = [s for s in specs if s.key not in log]
    stopping = Sequential(config, rows_of(log.rows)) if config.adaptive else None
    mode = model_mode(model)
    remote = bool(getattr(model, "remote", False))
    rule = reuse_rule(model, model_options)
    meter = PrefillMeter(rule) if rule is not None else None
    encode = token_encoder(model) if meter is not None else None
    policy = cache_policy(model)
    pricer = prices or Pricer(model.name, provider_of(model))
    start = time.perf_counter()
    new: list[ProbeRow] = []

    def done(p: Prepared, completion: Completion) -> None:
        row = make_row(p, completion, model, mode)
        log.append(row)
        new.append(row)
        if stopping is not None:
            stopping.observe(row)
        if on_row is not None:
            on_row(row)
        bar.advance(task_id)

    with make_progress("probe", enabled=progress) as bar:
        task_id = bar.add_task("trials", total=len(pending))
        for groups in _rounds(pending, config):
            chains: list[Chain] = []
            for group in groups:
                kept = [s for s in group if stopping is None or stopping.active(s)]
                bar.set_total(task_id, bar.total(task_id) - (len(group) - len(kept)))
                items = run_order([prepare(s, ctx) for s in kept], config.order, remote)
                marks: list[tuple[int, ...]] = [() for _ in items]
                if policy is not None and policy.explicit and config.order == "prefix":
                    planned = plan_cache([p.built.prompt for p in items], planning_count(model), policy)
                    marks = [c.breakpoints for c in planned]
                if meter is not None and encode is not None:
                    meter.add_batch([(encode(p.built.prompt), p.needle_depth) for p in items])
                chains.append(list(zip(items, marks, strict=True)))
            _execute(model, [c for c in chains if c], done)
            if stopping is not None:
                for group in groups:
                    if group and group[0].kind == "trial":
                        stopping.close_round(group[0].task, group[0].trial)
    run = ProbeRun(
        out_dir=out,
        rows=list(rows_of(log.rows)),
        new_rows=len(new),
        skipped=len(specs) - len(pending),
        wall_s=time.perf_counter() - start,
        input_tokens=sum(int(r["input_tokens"]) for r in new),
        prefill_tokens=sum(int(r["input_tokens"]) - int(r["cached_tokens"]) for r in new),
        settings=settings,
        model_s=sum(float(r.get("latency_s") or 0) for r in new),
        prefill=meter.cost() if meter is not None else None,
        bill=pricer.bill(row_usage(r) for r in new),
        stopping=stopping.summary() if stopping is not None else None,
    )
    settings["cost"] = _cost_record(run)
    atomic_write(out / "run.json", json.dumps(settings, indent=2) + "\n")
    return run


def _cost_record(run: ProbeRun) -> dict[str, object]:
    """The ``cost`` section of ``run.json``: what the last invocation evaluated and billed."""
    return {
        "new_rows": run.new_rows,
        "wall_s": round(run.wall_s, 2),
        "model_s": round(run.model_s, 2),
        "input_tokens": run.input_tokens,
        "prefill_tokens": run.prefill_tokens,
        "prefill": run.prefill.to_dict() if run.prefill is not None else None,
        "bill": run.bill.to_dict() if run.bill is not None else None,
        "stopping": run.stopping,
    }
