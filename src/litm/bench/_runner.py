"""Run the strategy benchmark: answer each prompt of :mod:`litm.bench._jobs` once, and log its row.

Rows go to ``bench.jsonl`` one at a time (flushed and synced) under stable keys; ``resume`` skips finished
keys (after :mod:`litm.bench._settings` checked the run is the same experiment), and a prompt identical to
one already answered reuses that answer (greedy decoding, and the local ``aligned`` mode gives exactly a
cold run's answer). With the likelihood metric on, each prompt is also scored by the log-probability of
every accepted answer right after it is answered.

Example:
    >>> from litm.models import load_model                                        # doctest: +SKIP
    >>> run = run_bench(load_model("local"), BenchConfig(questions=2, ks=(4,)), "out/")  # doctest: +SKIP
    >>> len(run.rows)                                                             # doctest: +SKIP
    16
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from litm.bench._compression import Compressors, compress_jobs, compress_keys
from litm.bench._config import BENCH_VERSION, BenchConfig, BenchError
from litm.bench._consistency import psc_stage
from litm.bench._cutoff import cutoff_note
from litm.bench._data import QAItem
from litm.bench._design import complete_arm, fold_of, quote_prefilled, read_arm_reply
from litm.bench._jobs import Job, ablation_jobs, original_jobs, stage1_jobs, stage2_jobs
from litm.bench._outputs import BenchOutputs, write_run_outputs
from litm.bench._rows import BenchRow, rows_of
from litm.bench._settings import COMPRESS_SCORES, RESULTS, SETTINGS, RunSettings, check_resume, run_settings
from litm.bench._sources import load_bench_items
from litm.compress import ScoreCache
from litm.compress._compress import TargetCounter
from litm.eval._results import ResultsLog
from litm.eval._runs import completion_fields, model_mode
from litm.eval._scoring import exact_match, score_output, token_f1
from litm.models._base import Completion, Model, run_each
from litm.models._logprobs import Logprobs, ScoresContinuations
from litm.placement import PositionProfile
from litm.util._progress import Progress
from litm.util._progress import progress as make_progress

# BenchConfig, BenchError and Job live in their own modules; the names stay importable from here.
__all__ = ["BENCH_VERSION", "BenchConfig", "BenchError", "BenchRun", "Job", "continuations", "run_bench"]


@dataclass
class BenchRun:
    """A finished (or stopped) run: its rows, settings and output directory, and ``notes``: warnings about what
    the rows can show (replies cut off by the answer cap, :func:`~litm.bench._cutoff.cutoff_note`), which
    ``litm bench`` prints."""

    out: Path
    rows: list[BenchRow]
    settings: RunSettings
    answered: int = 0
    reused: int = 0
    stopped_early: bool = False
    notes: list[str] = field(default_factory=list)

    def write_outputs(self, *, plots: bool = True) -> BenchOutputs:
        """Analyse the rows into ``out``: the summary (JSON and Markdown), each fold's profile, plots and report;
        for a run of compression, psc or ablation arms only, that run's own summary (``compress-summary``, ...).

        >>> run = run_bench(load_model("local"), BenchConfig(questions=20), "out/")  # doctest: +SKIP
        >>> run.write_outputs().summary_path  # doctest: +SKIP
        PosixPath('out/bench-summary.json')
        """
        return write_run_outputs(self.out, self.rows, self.settings, plots=plots)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def continuations(answers: Sequence[str], *, chat: bool) -> list[str]:
    """The text scored after the prompt for each accepted answer: a completion prompt ends in "Answer:", so
    the answer follows a space; a chat reply starts with the answer itself.

    >>> continuations(["Paris"], chat=False), continuations(["Paris"], chat=True)
    ([' Paris'], ['Paris'])
    """
    return [a if chat else f" {a}" for a in answers]


def likelihood_fields(scores: Sequence[Logprobs] | None) -> dict[str, object]:
    """Row fields of the likelihood metric: every accepted answer's log-probability, and the headline value.

    ``likelihood`` is the mean per-token log-probability of the likeliest accepted answer (the continuous
    counterpart of "some accepted answer is in the first line").
    """
    if scores is None:
        return {}
    best = max(scores, key=lambda s: s.mean)
    per = [
        {"answer": s.continuation, "tokens": s.n, "total": round(s.total, 5), "mean": round(s.mean, 5)} for s in scores
    ]
    return {"likelihood": round(best.mean, 5), "likelihood_total": round(best.total, 5), "answer_logprobs": per}


def _row(
    job: Job,
    fold: int,
    done: Completion,
    model: Model,
    mode: str,
    chat: bool,
    prompt_sha: str,
    scores: Sequence[Logprobs] | None = None,
) -> dict[str, object]:
    # A quote-first reply is scored by its answer after the quote, never by the quote.
    prefilled = quote_prefilled(model, chat=chat)
    text, arm_fields = read_arm_reply(str(job.meta.get("arm", "")), done.text, job.item, prefilled=prefilled)
    score = score_output(text, answers=job.item.answers, question=job.item.question)
    return {
        "key": job.key,
        **job.meta,
        "qid": job.item.qid,
        "fold": fold,
        "question": job.item.question,
        "answers": list(job.item.answers),
        "output": done.text,
        "first_line": score.first_line,
        "hit": score.hit,
        "miss": score.miss,
        "em": exact_match(score.first_line, job.item.answers),
        "f1": round(token_f1(score.first_line, job.item.answers), 4),
        **arm_fields,
        **likelihood_fields(scores),
        **completion_fields(done),
        "prompt_sha": prompt_sha,
        "model": getattr(model, "spec", "") or model.name,
        "mode": mode,
        "format": "chat" if chat else "completion",
        "threads": getattr(model, "n_threads", None),
    }


def _execute(
    model: Model,
    jobs: Sequence[Job],
    max_tokens: int,
    chat: bool,
    likelihood: bool,
    on_done: Callable[[Job, Completion, Sequence[Logprobs] | None], None],
) -> None:
    """In order for an in-process model; ``model.concurrency`` requests at a time for a remote one."""
    scored: dict[str, list[Logprobs]] = {}

    def call(job: Job) -> Completion:
        # An instruct model answers its own chat turn; a base model continues the text after "Answer:" (a
        # quote-first prompt: the quote, then the answer, see complete_arm).
        arm = str(job.meta.get("arm", ""))
        done, before = complete_arm(model, arm, job.prompt, chat=chat, max_tokens=max_tokens)
        if likelihood and before is not None:
            # Right after the answer: a local model reuses the prompt's KV cache, so this costs the answer tokens.
            scorer = cast(ScoresContinuations, model)
            after = continuations(job.item.answers, chat=not isinstance(before, str))
            scored[job.key] = scorer.continuation_logprobs(before, after)
        return done

    run_each(model, jobs, call, lambda job, done: on_done(job, done, scored.pop(job.key, None)))


def _compress_stage(
    model: Model,
    config: BenchConfig,
    items: Sequence[QAItem],
    out: Path,
    log: ResultsLog,
    go: Callable[[str, list[Job], int | None], None],
    bar: Progress,
) -> None:
    """Compress and answer question by question, so a stopped run keeps whole questions and a resume scores
    only what is missing (scores persist in ``compress-scores.jsonl``)."""
    compressors = Compressors(
        TargetCounter.of(model), lm_model=config.compress_model, cache=ScoreCache(out / COMPRESS_SCORES)
    )
    for k in config.ks:
        slots = config.checkpoints(k, config.compress_slots)
        args = (config.compress_arms, config.compress_ratios, slots, config.compress_designs)
        missing = {it.qid: sum(key not in log for key in compress_keys(it, k, *args)) for it in items}
        todo = [it for it in items if missing[it.qid]]
        # Only the rows still to make: a resumed run that adds arms to a finished one counts (and times) what is
        # left, not the rows it already has.
        task = bar.add_task(f"compress k={k}", total=sum(missing[it.qid] for it in todo))
        for item in todo:
            made = compress_jobs(
                item, k, compressors, arms=config.compress_arms, ratios=config.compress_ratios, slots=slots,
                designs=config.compress_designs, skip=log,
            )  # fmt: skip
            go("compress", [Job(j.key, j.prompt, item, j.meta) for j in made], task)


def run_bench(
    model: Model,
    config: BenchConfig,
    out_dir: str | Path,
    *,
    resume: bool = False,
    progress: bool = True,
    command: str | None = None,
    items: Sequence[QAItem] | None = None,
    profile: PositionProfile | None = None,
) -> BenchRun:
    """Run (or resume) the benchmark into ``out_dir`` and return every row; see the module docstring.

    ``items`` default to the first ``config.questions`` of ``config.data``; ``profile`` is the measured profile
    the multi-gold questions' ``profile`` strategy uses (single-gold runs measure their own, per fold).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings = run_settings(model, config, command)
    check_resume(out / SETTINGS, settings, resume=resume)
    if resume and (out / SETTINGS).exists():
        old = json.loads((out / SETTINGS).read_text(encoding="utf-8"))
        # A long run is resumed across sessions and hosts: keep where it started and every stretch since, since
        # the rows' latencies can only be read against the machine that produced them.
        this_stretch: dict[str, object] = {"at": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": settings["machine"]}
        settings["started"] = old.get("started", settings["started"])
        settings["machine"] = old.get("machine", settings["machine"])
        settings["resumes"] = [*old.get("resumes", []), this_stretch]
    (out / SETTINGS).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    if items is None:
        items, found = load_bench_items(
            config.data, questions=config.questions, k=max(config.ks), retriever=config.retriever, seed=config.seed
        )
        if found["left_out"]:
            settings["left_out"] = found["left_out"]
            (out / SETTINGS).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    log = ResultsLog(out / RESULTS)
    if log.rows and not resume:
        raise BenchError(f"{out / RESULTS} already has rows; pass --resume")
    by_sha = {str(r["prompt_sha"]): r for r in log.rows if r.get("prompt_sha")}
    mode = model_mode(model)
    chat = config.resolved_format(model) == "chat"
    likelihood = config.resolved_likelihood(model)
    folds = {it.qid: fold_of(i) for i, it in enumerate(items)}
    run = BenchRun(out, rows_of(log.rows), settings)

    with make_progress("bench", enabled=progress) as bar:

        def go(name: str, jobs: list[Job], task: int | None = None) -> None:
            todo: list[tuple[Job, str]] = []
            copies: list[tuple[Job, str]] = []
            pending: set[str] = set()
            for job in jobs:
                if job.key in log:
                    continue
                sha = _sha(job.prompt)
                # Same prompt as one answered or queued (e.g. langchain == pyramid for even k): answer once.
                (copies if sha in by_sha or sha in pending else todo).append((job, sha))
                pending.add(sha)
            if task is None:
                task = bar.add_task(name, total=len(todo) + len(copies))
            shas = {j.key: s for j, s in todo}

            def done(job: Job, c: Completion, scores: Sequence[Logprobs] | None) -> None:
                row = _row(job, folds[job.item.qid], c, model, mode, chat, shas[job.key], scores)
                log.append(row)
                by_sha[shas[job.key]] = row
                run.answered += 1
                bar.advance(task)

            _execute(model, [j for j, _ in todo], config.max_tokens, chat, likelihood, done)
            for job, sha in copies:
                first = by_sha[sha]
                log.append(
                    {**first, **job.meta, "key": job.key, "fold": folds[job.item.qid], "same_prompt_as": first["key"]}
                )
                run.reused += 1
                bar.advance(task)

        if config.ablation_only:
            go("ablation", list(ablation_jobs(items, config)))
        elif not (config.compress_only or config.psc_only):
            go("slots+controls", list(stage1_jobs(items, config, profile)))
            go("direct", list(stage2_jobs(items, config, run.rows)))
        if config.compress_only and config.baseline is None:
            go("originals", list(original_jobs(items, config)))
        if config.compress_arms:
            _compress_stage(model, config, items, out, log, go, bar)
        if config.psc_calls:

            def psc_row(job: Job, done: Completion) -> dict[str, object]:
                return _row(job, folds[job.item.qid], done, model, mode, chat, _sha(job.prompt))

            run.answered += psc_stage(model, config, items, log, chat=chat, row=psc_row, bar=bar)
    run.rows = rows_of(log.rows)
    note = cutoff_note(run.rows, config.max_tokens)
    if note is not None:
        run.notes.append(note)
    return run
