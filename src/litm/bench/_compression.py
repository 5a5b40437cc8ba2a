"""Compression arms of the benchmark: the same documents as a slot (or gold-set design) prompt, compressed.

Each arm compresses a question's ``k`` documents to ``1/ratio`` of their tokens in the *benchmarked* model's
tokenizer with :func:`litm.compress.compress`, then builds the plain prompt of the kept documents (Liu et
al.'s format, documents renumbered 1..m in the order the arm gives them):

* ``drop``: whole documents dropped by retriever rank (what :func:`litm.fit` does on a tight budget);
* ``lead``: every document shortened to its first sentences, budget shares by retriever rank;
* ``embed``: MiniLM sentence selection, input order kept; ``embed-edges``: the same, placed by ``edges``;
* ``static``, ``static-edges``: the same with the static MiniLM table (no transformer pass);
* ``embed-link``, ``static-link``: with ``link="titles"`` (a document the question or the best document names
  by its title ranks right after the best one: the second hop of a multi-hop question);
* ``lm``: selection by a small local LM's question-conditioned log-probabilities; ``lm-edges``: placed.

A single-gold question is compressed with its gold passage at each of ``compress_slots`` (the distractors
in retriever order around it), a multi-gold one under each of ``compress_designs``; rows record what
survived (``answer_kept``: an accepted answer is still in the text; ``gold_kept``; the gold's position among
the kept documents) next to the answer, so a loss can be told apart from a cut.

Example:
    >>> from litm.bench._data import Passage, QAItem
    >>> item = QAItem("q1", "Who?", ("Ada",), Passage("g", "Gold", "Ada did it."),
    ...               tuple(Passage(f"d{i}", f"D{i}", "Not this.") for i in range(3)))
    >>> compress_keys(item, 4, ("drop",), (2.0,), (1, 4), ())
    ['compress|k=4|q=q1|s=4|arm=drop|x=2', 'compress|k=4|q=q1|s=1|arm=drop|x=2']
"""

from __future__ import annotations

import time
from collections.abc import Container, Sequence
from dataclasses import dataclass

from litm.bench._data import Passage, QAItem, contains_answer
from litm.bench._design import GOLD_DESIGNS, LIU_INSTRUCTION, MULTIHOP_INSTRUCTION, build_prompt, gold_slots
from litm.compress import CompressOptions, ScoreCache, Scorer, compress
from litm.compress._compress import TargetCounter
from litm.compress._scorers import get_scorer
from litm.errors import InvalidOptionError
from litm.models import Model
from litm.placement import Doc

__all__ = ["ARM_OPTIONS", "COMPRESS_ARMS", "CompressionJob", "Compressors", "compress_jobs", "compress_keys"]

#: Arm name -> its scorer (by name) and :func:`~litm.compress.compress` options.
ARM_OPTIONS: dict[str, tuple[str, CompressOptions]] = {
    "drop": ("retriever", CompressOptions(unit="document")),
    "lead": ("retriever", CompressOptions()),
    "embed": ("embed", CompressOptions()),
    "embed-edges": ("embed", CompressOptions(reorder="edges")),
    "static": ("static", CompressOptions()),
    "static-edges": ("static", CompressOptions(reorder="edges")),
    "embed-link": ("embed", CompressOptions(link="titles")),
    "static-link": ("static", CompressOptions(link="titles")),
    "lm": ("lm", CompressOptions()),
    "lm-edges": ("lm", CompressOptions(reorder="edges")),
}
COMPRESS_ARMS: tuple[str, ...] = tuple(ARM_OPTIONS)


@dataclass(frozen=True)
class CompressionJob:
    """One compressed prompt to answer: its key, prompt and row fields (see :class:`litm.bench._jobs.Job`)."""

    key: str
    prompt: str
    meta: dict[str, object]


class Compressors:
    """The scorers of a run, built once and sharing one persistent score cache (``compress-scores.jsonl``)."""

    def __init__(
        self, counter: TargetCounter, *, lm_model: str | Model = "local", cache: ScoreCache | None = None
    ) -> None:
        self.counter = counter
        self.cache = cache if cache is not None else ScoreCache()
        self._lm_model = lm_model
        self._scorers: dict[str, Scorer] = {}

    def scorer(self, name: str) -> Scorer:
        """The scorer called ``name``, loaded on first use (the lm scorer loads its model then)."""
        if name not in self._scorers:
            self._scorers[name] = get_scorer(name, model=self._lm_model, cache=self.cache)
        return self._scorers[name]


def compress_keys(
    item: QAItem,
    k: int,
    arms: Sequence[str],
    ratios: Sequence[float],
    slots: Sequence[int],
    designs: Sequence[str],
) -> list[str]:
    """The row keys of a question's compression prompts, in the order they are answered."""
    where = [f"d={d}" for d in designs] if item.more_golds else [f"s={s}" for s in sorted(slots, reverse=True)]
    return [f"compress|k={k}|q={item.qid}|{w}|arm={a}|x={x:g}" for w in where for a in arms for x in ratios]


def compress_jobs(
    item: QAItem,
    k: int,
    compressors: Compressors,
    *,
    arms: Sequence[str],
    ratios: Sequence[float],
    slots: Sequence[int],
    designs: Sequence[str] = ("middle", "early"),
    skip: Container[str] = (),
) -> list[CompressionJob]:
    """Compress one question's documents for every arm, ratio and slot (or design) not in ``skip``."""
    bad = [a for a in arms if a not in ARM_OPTIONS]
    if bad:
        raise InvalidOptionError(f"unknown compression arms {bad}; choose from {', '.join(COMPRESS_ARMS)}")
    bad_designs = [d for d in designs if d not in GOLD_DESIGNS]
    if bad_designs:
        raise InvalidOptionError(f"unknown gold-set designs {bad_designs}; choose from {', '.join(GOLD_DESIGNS)}")
    jobs: list[CompressionJob] = []
    multi = bool(item.more_golds)
    places = (
        [(f"d={d}", gold_slots(d, k, len(item.golds)), {"design": d}) for d in designs]
        if multi
        else [(f"s={s}", [s], {"slot": s, "gold_rank": s}) for s in sorted(slots, reverse=True)]
    )
    instruction = MULTIHOP_INSTRUCTION if multi else LIU_INSTRUCTION
    for label, gold_at, where in places:
        passages = item.golds_at(gold_at, k)
        docs = [Doc(text=p.text, id=str(r), title=p.title or None) for r, p in enumerate(passages, start=1)]
        golds = {str(s) for s in gold_at}
        for arm in arms:
            for ratio in ratios:
                key = f"compress|k={k}|q={item.qid}|{label}|arm={arm}|x={ratio:g}"
                if key in skip:
                    continue
                scorer_name, options = ARM_OPTIONS[arm]
                scorer = compressors.scorer(scorer_name)
                began = time.perf_counter()
                out = compress(
                    docs, item.question, tokenizer=compressors.counter, ratio=ratio, scorer=scorer, options=options
                )
                seconds = time.perf_counter() - began
                kept = out.kept
                ranks = [int(c.original.id) for c in kept]
                shown = [
                    Passage(passages[r - 1].pid, passages[r - 1].title, c.doc.text)
                    for r, c in zip(ranks, kept, strict=True)
                ]
                prompt = build_prompt(shown, ranks, item.question, "plain", instruction=instruction)
                text = " ".join(c.doc.text for c in kept)
                meta: dict[str, object] = {
                    "phase": "compress", "k": k, **where, "arm": arm, "ratio": ratio, "strategy": "none",
                    **({"gold_set": True, "golds": len(item.golds), "gold_slots": gold_at, "kind": item.kind}
                       if multi else {}),
                    "budget": out.budget, "doc_tokens": out.tokens, "original_doc_tokens": out.original_tokens,
                    "docs_kept": len(kept), "gold_kept": sum(c.original.id in golds for c in kept),
                    "gold_positions": [i for i, c in enumerate(kept, start=1) if c.original.id in golds],
                    "answer_kept": contains_answer(text, item.answers), "compress_s": round(seconds, 4),
                    "scorer": out.scorer,
                }  # fmt: skip
                jobs.append(CompressionJob(key, prompt, meta))
    return jobs
