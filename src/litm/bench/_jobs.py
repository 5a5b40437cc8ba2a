"""The prompts of a benchmark run, as :class:`Job` s in the order they are answered.

Stage 1 goes question by question (so a run stopped early still covers every phase for the questions it
finished): the ``k`` final-slot prompts (gold passage in slot ``s``, run from ``s = k`` down to 1 so
consecutive prompts share the longest document prefix for the local KV cache), the anchor-ablation arms on
the first ``ablation_questions``, and the closed-book and oracle controls. Stage 2 places the first
``direct_questions`` end to end with every strategy, ``profile`` driven by the other fold's measured profile.
A compression-only run without a baseline answers only :func:`original_jobs`: the uncompressed prompts its
compressed ones are paired with. An ablation-only run answers :func:`ablation_jobs`: the arms and the plain
prompts they pair with, nothing else.

Example:
    >>> from litm.bench._data import Passage, QAItem
    >>> item = QAItem("q1", "Who?", ("Ada",), Passage("g", "Gold", "Ada did it."),
    ...               tuple(Passage(f"d{i}", f"D{i}", "Not this.") for i in range(3)))
    >>> [job.key for job in stage1_jobs([item], BenchConfig(ks=(3,), ablation_questions=0))]
    ['slot|k=3|q=q1|s=3', 'slot|k=3|q=q1|s=2', 'slot|k=3|q=q1|s=1', 'closed|q=q1', 'oracle|q=q1']
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from litm.bench._analysis import fold_profiles
from litm.bench._config import BenchConfig
from litm.bench._data import Passage, QAItem
from litm.bench._design import arrangement, build_prompt, closed_book_prompt, fold_of, seed_of
from litm.bench._goldsets import goldset_jobs
from litm.bench._rows import BenchRow
from litm.placement import PositionProfile

__all__ = ["Job", "ablation_jobs", "original_jobs", "stage1_jobs", "stage2_jobs"]


@dataclass(frozen=True)
class Job:
    """One prompt to answer, with the row fields that describe it."""

    key: str
    prompt: str
    item: QAItem
    meta: dict[str, object]


def _docs_for(item: QAItem, k: int, gold_rank: int, order: Sequence[int]) -> list[Passage]:
    ranked = item.ranked(gold_rank, k)
    return [ranked[r - 1] for r in order]


def _slot_job(item: QAItem, k: int, s: int) -> Job:
    """The slot prompt: gold rank s in rank order = gold passage in final slot s, distractors in BM25 order."""
    order = list(range(1, k + 1))
    meta = {"phase": "slot", "k": k, "slot": s, "gold_rank": s, "strategy": "none", "arm": "plain"}
    prompt = build_prompt(_docs_for(item, k, s, order), order, item.question)
    return Job(f"slot|k={k}|q={item.qid}|s={s}", prompt, item, meta)


def _controls(item: QAItem) -> Iterator[Job]:
    """The closed-book prompt (no documents) and the oracle (the gold passage alone)."""
    yield Job(f"closed|q={item.qid}", closed_book_prompt(item.question), item, {"phase": "closed"})
    yield Job(f"oracle|q={item.qid}", build_prompt([item.gold], [1], item.question), item, {"phase": "oracle"})


def stage1_jobs(items: Sequence[QAItem], config: BenchConfig, profile: PositionProfile | None = None) -> Iterator[Job]:
    """Slot prompts, ablation arms and controls, question by question (a multi-gold question: its gold-set
    designs, arms, strategies and controls, see :mod:`litm.bench._goldsets`; ``profile`` drives its
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
            yield from (_slot_job(item, k, s) for s in range(k, 0, -1))
            if i < config.ablation_questions:
                for s in config.checkpoints(k, config.ablation_slots):
                    docs = _docs_for(item, k, s, none_order)
                    for arm in config.ablation_arms:
                        meta = {"phase": "ablation", "k": k, "slot": s, "gold_rank": s, "strategy": "none", "arm": arm}
                        key = f"ablation|k={k}|q={item.qid}|s={s}|arm={arm}"
                        yield Job(key, build_prompt(docs, none_order, item.question, arm), item, meta)
        if config.controls:
            yield from _controls(item)


def original_jobs(items: Sequence[QAItem], config: BenchConfig) -> Iterator[Job]:
    """The uncompressed prompts a compression-only run pairs with when it has no baseline: the slot prompt at
    each compressed slot (a multi-gold question: the design prompt of each compressed design), and the
    controls (closed book, gold alone) unless they are off. The keys and prompts are stage 1's own, so a full
    run resumed in the same folder reuses these rows.

    >>> from litm.bench._data import Passage, QAItem
    >>> item = QAItem("q1", "Who?", ("Ada",), Passage("g", "Gold", "Ada did it."),
    ...               tuple(Passage(f"d{i}", f"D{i}", "Not this.") for i in range(4)))
    >>> config = BenchConfig(ks=(5,), compress_arms=("embed",), compress_only=True, compress_slots=(1, 5))
    >>> [job.key for job in original_jobs([item], config)]
    ['slot|k=5|q=q1|s=5', 'slot|k=5|q=q1|s=1', 'closed|q=q1', 'oracle|q=q1']
    """
    for item in items:
        for j, k in enumerate(config.ks):
            if item.more_golds:
                made = goldset_jobs(item, k, strategies=(), direct=False, controls=config.controls and j == 0)
                for key, prompt, meta in made:
                    if meta["phase"] != "design" or meta["design"] in config.compress_designs:
                        yield Job(key, prompt, item, meta)
                continue
            yield from (_slot_job(item, k, s) for s in reversed(config.checkpoints(k, config.compress_slots)))
        if config.controls and not item.more_golds:
            yield from _controls(item)


def ablation_jobs(items: Sequence[QAItem], config: BenchConfig) -> Iterator[Job]:
    """The prompts of an ablation-only run: on the first ``ablation_questions``, the plain prompt at each
    ablation slot (a multi-gold question: at each ablation design) and every arm's prompt there, then the
    controls unless they are off. The keys and prompts are stage 1's own, so the rows pair and resume exactly
    as a full run's, and a full run's rows copied into the folder are not asked again.

    >>> from litm.bench._data import Passage, QAItem
    >>> item = QAItem("q1", "Who?", ("Ada",), Passage("g", "Gold", "Ada did it."),
    ...               tuple(Passage(f"d{i}", f"D{i}", "Not this.") for i in range(4)))
    >>> config = BenchConfig(ks=(5,), ablation_only=True, ablation_slots=(3,), ablation_arms=("minimal",),
    ...                      controls=False)
    >>> [job.key for job in ablation_jobs([item], config)]
    ['slot|k=5|q=q1|s=3', 'ablation|k=5|q=q1|s=3|arm=minimal']
    """
    for item in items[: config.ablation_questions]:
        for j, k in enumerate(config.ks):
            if item.more_golds:
                made = goldset_jobs(item, k, strategies=(), arms=config.ablation_arms,
                                    ablation_designs=config.ablation_designs, direct=False,
                                    controls=config.controls and j == 0)  # fmt: skip
                for key, prompt, meta in made:
                    if meta.get("design", "") in ("", *config.ablation_designs):
                        yield Job(key, prompt, item, meta)
                continue
            order = list(range(1, k + 1))
            for s in config.checkpoints(k, config.ablation_slots):
                yield _slot_job(item, k, s)
                docs = _docs_for(item, k, s, order)
                for arm in config.ablation_arms:
                    meta = {"phase": "ablation", "k": k, "slot": s, "gold_rank": s, "strategy": "none", "arm": arm}
                    key = f"ablation|k={k}|q={item.qid}|s={s}|arm={arm}"
                    yield Job(key, build_prompt(docs, order, item.question, arm), item, meta)
        if config.controls and not item.more_golds:
            yield from _controls(item)


def stage2_jobs(items: Sequence[QAItem], config: BenchConfig, rows: Sequence[BenchRow]) -> Iterator[Job]:
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
