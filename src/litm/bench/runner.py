"""Run the strategy benchmark: slot accuracy, controls, anchor ablation, then direct placement checks.

Stage 1 goes question by question (so a run stopped early still covers every phase for the questions
it finished): the ``k`` final-slot prompts (gold passage in slot ``s``, run from ``s = k`` down to 1 so
consecutive prompts share the longest document prefix for the local KV cache), the anchor-ablation arms
on the first ``ablation_questions``, and the closed-book and oracle controls. Stage 2 places the first
``direct_questions`` end to end with every strategy, ``profile`` driven by the other fold's measured
profile. Rows go to ``bench.jsonl`` one at a time (flushed and synced) under stable keys; ``resume``
skips finished keys, and a prompt identical to one already answered reuses that answer (greedy
decoding, and the local ``aligned`` mode gives exactly a cold run's answer).

Example:
    >>> from litm.models import load_model                                        # doctest: +SKIP
    >>> run = run_bench(load_model("local"), BenchConfig(questions=2, ks=(4,)), "out/")  # doctest: +SKIP
    >>> len(run.rows)                                                             # doctest: +SKIP
    16
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from litm._version import __version__
from litm.bench.analysis import fold_profiles
from litm.bench.data import QAItem
from litm.bench.design import (
    ARMS,
    GOLD_DESIGNS,
    NQ_ARMS,
    STRATEGIES,
    arrangement,
    build_prompt,
    closed_book_prompt,
    fold_of,
    seed_of,
)
from litm.bench.goldsets import goldset_jobs
from litm.bench.sources import describe, load_bench_items
from litm.errors import EvalError
from litm.eval.results import ResultsLog, changed_settings
from litm.eval.runs import completion_fields, model_mode
from litm.eval.scoring import exact_match, score_output, token_f1
from litm.models.base import Completion, Model, PromptInput, run_each
from litm.models.logprobs import Logprobs, ScoresContinuations, supports_logprobs
from litm.placement.profile import PositionProfile
from litm.util.progress import progress as make_progress

__all__ = ["BENCH_VERSION", "BenchConfig", "BenchError", "BenchRun", "Job", "recorded_batch", "run_bench"]

BENCH_VERSION = 1
#: The llama.cpp batch of local-model runs recorded before the batch was part of a run's identity.
BATCH_BEFORE_SETTING = 512
RESULTS = "bench.jsonl"
_IDENTITY_DEFAULTS: dict[str, Any] = {
    "prompt_format": "completion",
    "likelihood": False,
    "data": "nq",
    "retriever": "auto",
}
SETTINGS = "run.json"


class BenchError(EvalError):
    """A benchmark that cannot run as asked (bad settings, a resume that would mix settings)."""


@dataclass(frozen=True)
class BenchConfig:
    """What to run. ``questions`` evaluation questions per ``k``; subsets take the first questions."""

    questions: int = 100
    ks: tuple[int, ...] = (10,)
    strategies: tuple[str, ...] = STRATEGIES
    direct_questions: int = 20
    direct_ranks: tuple[int, ...] = ()  # empty: 1, the middle and k
    ablation_questions: int = 30
    ablation_slots: tuple[int, ...] = ()  # empty: 1, the middle and k
    #: Prompt arms of the ablation, each beside the slot run's ``plain`` prompt (see :data:`~litm.bench.design.ARMS`).
    ablation_arms: tuple[str, ...] = NQ_ARMS
    #: Gold-set designs of a multi-gold question that get the ablation arms (see :mod:`litm.bench.goldsets`).
    ablation_designs: tuple[str, ...] = ("middle",)
    #: ``nq``, ``hotpotqa``, ``2wiki`` or a data file, and where the retriever order comes from
    #: (:mod:`litm.bench.sources`).
    data: str = "nq"
    retriever: str = "auto"
    controls: bool = True
    max_tokens: int = 16
    seed: int = 0
    #: ``completion`` (plain prompt string), ``chat`` (the same text as one user message, through the
    #: model's chat template) or ``auto``: chat when the model has a chat template (instruct models).
    prompt_format: str = "auto"
    #: Score every prompt also by the teacher-forced log-probability of each accepted answer: ``auto`` (when
    #: the model can, see :func:`litm.models.logprobs.supports_logprobs`), ``on`` or ``off``.
    likelihood: str = "auto"

    def __post_init__(self) -> None:
        if self.questions < 1:
            raise BenchError(f"questions must be >= 1, got {self.questions}")
        if not self.ks or any(k < 2 for k in self.ks):
            raise BenchError(f"k must be >= 2, got {self.ks}")
        bad = [s for s in self.strategies if s not in STRATEGIES]
        if bad:
            raise BenchError(f"unknown strategies {bad}; choose from {', '.join(STRATEGIES)}")
        bad = [a for a in self.ablation_arms if a not in ARMS or a == "plain"]
        if bad:
            raise BenchError(f"unknown ablation arms {bad}; choose from {', '.join(a for a in ARMS if a != 'plain')}")
        bad = [d for d in self.ablation_designs if d not in GOLD_DESIGNS]
        if bad:
            raise BenchError(f"unknown gold-set designs {bad}; choose from {', '.join(GOLD_DESIGNS)}")
        if self.max_tokens < 1:
            raise BenchError("max_tokens must be >= 1")
        if self.prompt_format not in ("auto", "completion", "chat"):
            raise BenchError(f"prompt_format must be auto, completion or chat, got {self.prompt_format!r}")
        if self.likelihood not in ("auto", "on", "off"):
            raise BenchError(f"likelihood must be auto, on or off, got {self.likelihood!r}")

    def resolved_likelihood(self, model: Model) -> bool:
        """Whether this run scores answer log-probabilities (``on`` with a model that cannot is an error)."""
        if self.likelihood == "on" and not supports_logprobs(model):
            raise BenchError(f"{model.spec or model.name} cannot score answer log-probabilities; use --likelihood off")
        return self.likelihood == "on" or (self.likelihood == "auto" and supports_logprobs(model))

    def resolved_format(self, model: Model) -> str:
        """``completion`` or ``chat`` for this model (``auto``: chat exactly when the model supports it)."""
        if self.prompt_format != "auto":
            return self.prompt_format
        return "chat" if model.supports_chat else "completion"

    def checkpoints(self, k: int, given: tuple[int, ...]) -> list[int]:
        """The gold ranks or slots a subset uses for ``k``: ``given`` (those within 1..k), else 1, middle, k."""
        picks = [x for x in given if 1 <= x <= k] if given else [1, (k + 1) // 2, k]
        return sorted(set(picks))

    def identity(self) -> dict[str, Any]:
        """The settings that define the prompts and the scoring: a resume must match them."""
        return {
            "bench_version": BENCH_VERSION,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "data": self.data,
            "retriever": self.retriever,
        }


@dataclass(frozen=True)
class Job:
    """One prompt to answer, with the row fields that describe it."""

    key: str
    prompt: str
    item: QAItem
    meta: dict[str, Any]


@dataclass
class BenchRun:
    """A finished (or stopped) run: its rows, settings and output directory."""

    out: Path
    rows: list[dict[str, Any]]
    settings: dict[str, Any]
    answered: int = 0
    reused: int = 0
    stopped_early: bool = False
    notes: list[str] = field(default_factory=list)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _docs_for(item: QAItem, k: int, gold_rank: int, order: Sequence[int]) -> list[Any]:
    ranked = item.ranked(gold_rank, k)
    return [ranked[r - 1] for r in order]


def stage1_jobs(items: Sequence[QAItem], config: BenchConfig, profile: PositionProfile | None = None) -> Iterator[Job]:
    """Slot prompts, ablation arms and controls, question by question (a multi-gold question: its gold-set
    designs, arms, strategies and controls, see :mod:`litm.bench.goldsets`; ``profile`` drives its
    ``profile`` strategy)."""
    for i, item in enumerate(items):
        if item.more_golds:
            for j, k in enumerate(config.ks):
                prompts = goldset_jobs(
                    item,
                    k,
                    strategies=config.strategies,
                    arms=config.ablation_arms if i < config.ablation_questions else (),
                    ablation_designs=config.ablation_designs,
                    direct=i < config.direct_questions,
                    controls=config.controls and j == 0,
                    profile=profile,
                )
                yield from (Job(key, prompt, item, meta) for key, prompt, meta in prompts)
            continue
        for k in config.ks:
            none_order = list(range(1, k + 1))
            for s in range(k, 0, -1):
                # Gold rank s in rank order = gold passage in final slot s, distractors in BM25 order.
                docs = _docs_for(item, k, s, none_order)
                meta = {"phase": "slot", "k": k, "slot": s, "gold_rank": s, "strategy": "none", "arm": "plain"}
                yield Job(f"slot|k={k}|q={item.qid}|s={s}", build_prompt(docs, none_order, item.question), item, meta)
            if i < config.ablation_questions:
                for s in config.checkpoints(k, config.ablation_slots):
                    docs = _docs_for(item, k, s, none_order)
                    for arm in config.ablation_arms:
                        meta = {"phase": "ablation", "k": k, "slot": s, "gold_rank": s, "strategy": "none", "arm": arm}
                        key = f"ablation|k={k}|q={item.qid}|s={s}|arm={arm}"
                        yield Job(key, build_prompt(docs, none_order, item.question, arm), item, meta)
        if config.controls:
            yield Job(f"closed|q={item.qid}", closed_book_prompt(item.question), item, {"phase": "closed"})
            oracle = build_prompt([item.gold], [1], item.question)
            yield Job(f"oracle|q={item.qid}", oracle, item, {"phase": "oracle"})


def stage2_jobs(items: Sequence[QAItem], config: BenchConfig, rows: Sequence[dict[str, Any]]) -> Iterator[Job]:
    """Direct end-to-end runs: each strategy places the ranked documents, for a few gold ranks."""
    for k in config.ks:
        profiles = fold_profiles(rows, k)
        for i, item in enumerate(items[: config.direct_questions]):
            if item.more_golds:
                continue  # placed in stage 1, from the retriever's own gold ranks
            fold = fold_of(i)
            for name in config.strategies:
                profile = profiles.get(1 - fold)
                if name == "profile" and profile is None:
                    continue  # the other fold has no finished question yet
                for r in config.checkpoints(k, config.direct_ranks):
                    order = arrangement(name, k, seed=seed_of(item.qid), profile=profile if name == "profile" else None)
                    docs = _docs_for(item, k, r, order)
                    slot = order.index(r) + 1
                    meta = {"phase": "direct", "k": k, "slot": slot, "gold_rank": r, "strategy": name, "arm": "plain"}
                    meta["order"] = order
                    key = f"direct|k={k}|q={item.qid}|strategy={name}|r={r}|order={','.join(map(str, order))}"
                    yield Job(key, build_prompt(docs, order, item.question), item, meta)


def continuations(answers: Sequence[str], *, chat: bool) -> list[str]:
    """The text scored after the prompt for each accepted answer: a completion prompt ends in "Answer:", so
    the answer follows a space; a chat reply starts with the answer itself.

    >>> continuations(["Paris"], chat=False), continuations(["Paris"], chat=True)
    ([' Paris'], ['Paris'])
    """
    return [a if chat else f" {a}" for a in answers]


def likelihood_fields(scores: Sequence[Logprobs] | None) -> dict[str, Any]:
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
) -> dict[str, Any]:
    score = score_output(done.text, answers=job.item.answers, question=job.item.question)
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
        # An instruct model answers its own chat turn; a base model continues the text after "Answer:".
        prompt: PromptInput = [{"role": "user", "content": job.prompt}] if chat else job.prompt
        done = model.complete(prompt, max_tokens=max_tokens, stop=["\n"], temperature=0.0, seed=0)
        if likelihood:
            # Right after the answer: a local model reuses the prompt's KV cache, so this costs the answer tokens.
            scorer = cast(ScoresContinuations, model)
            scored[job.key] = scorer.continuation_logprobs(prompt, continuations(job.item.answers, chat=chat))
        return done

    run_each(model, jobs, call, lambda job, done: on_done(job, done, scored.pop(job.key, None)))


def _settings(model: Model, config: BenchConfig, command: str | None) -> dict[str, Any]:
    return {
        "identity": {
            **config.identity(),
            "model": getattr(model, "spec", "") or model.name,
            "mode": model_mode(model),
            "prompt_format": config.resolved_format(model),
            "likelihood": config.resolved_likelihood(model),
            # A local model's batch is part of what it computes (and of what aligned reuse keeps).
            **({"n_batch": batch} if isinstance(batch := getattr(model, "n_batch", None), int) else {}),
        },
        "config": {
            **asdict(config),
            "ks": list(config.ks),
            "strategies": list(config.strategies),
            "ablation_arms": list(config.ablation_arms),
        },
        "model": {
            "name": model.name,
            "spec": getattr(model, "spec", ""),
            "mode": model_mode(model),
            "threads": getattr(model, "n_threads", None),
            "n_batch": getattr(model, "n_batch", None),
            "prompt_format": config.resolved_format(model),
        },
        "command": command,
        "litm_version": __version__,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "data": describe(config.data, config.retriever),
    }


def _check_resume(path: Path, settings: dict[str, Any], *, resume: bool) -> None:
    if not path.exists():
        return
    if not resume:
        raise BenchError(
            f"{path.parent} already holds a benchmark run; pass --resume to continue it or use another --out"
        )
    # Runs recorded before a setting existed used its then-only value (a local model's batch included).
    batch = {"n_batch": BATCH_BEFORE_SETTING} if "n_batch" in settings["identity"] else {}
    defaults = {**_IDENTITY_DEFAULTS, **batch}
    diffs = changed_settings(path, settings["identity"], defaults=defaults)
    if diffs:
        raise BenchError(f"{path.parent} holds a run with different settings ({', '.join(diffs)}); use another --out")


def recorded_batch(out_dir: str | Path) -> int | None:
    """The llama.cpp batch of the local-model run in ``out_dir`` (512 for runs recorded before the
    setting), or None when there is no run there or its model is not local: what a resume must load."""
    try:
        identity = json.loads((Path(out_dir) / SETTINGS).read_text(encoding="utf-8")).get("identity", {})
    except (OSError, json.JSONDecodeError):
        return None
    if not str(identity.get("model", "")).startswith("local"):
        return None
    return int(identity.get("n_batch", BATCH_BEFORE_SETTING))


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
    settings = _settings(model, config, command)
    _check_resume(out / SETTINGS, settings, resume=resume)
    if resume and (out / SETTINGS).exists():
        old = json.loads((out / SETTINGS).read_text(encoding="utf-8"))
        settings["started"] = old.get("started", settings["started"])
        settings["resumed"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
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
    run = BenchRun(out, log.rows, settings)

    with make_progress("bench", enabled=progress) as bar:

        def go(name: str, jobs: list[Job]) -> None:
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
            task = bar.add_task(name, total=len(todo))
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

        go("slots+controls", list(stage1_jobs(items, config, profile)))
        go("direct", list(stage2_jobs(items, config, log.rows)))
    run.rows = log.rows
    return run
