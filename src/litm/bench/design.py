"""The benchmark design: question folds, where each strategy puts the gold passage, and the prompts.

Accuracy is measured once per *final slot* (gold passage in slot ``s``, the distractors in BM25 order
around it). A strategy's accuracy at gold rank ``r`` is then read off the slot it sends rank ``r`` to:
:func:`gold_slot` asks :func:`litm.placement.place` itself, so the derivation uses exactly the orders
users get. ``random`` is a seeded shuffle per question; ``profile`` is driven by a profile measured on
the *other* fold of questions (cross-fitting: no question's own answers shape its placement).

Example:
    >>> gold_slot("none", 10, 3), gold_slot("edges", 10, 2), gold_slot("pyramid", 10, 1)
    (3, 10, 10)
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from litm.bench.data import Passage
from litm.errors import InvalidOptionError
from litm.placement import RandomOrder, Strategy, get_strategy, place
from litm.placement._documents import Doc
from litm.placement._profile import PositionProfile
from litm.prompt import AnchorOptions, Layout, PromptBuilder, PromptTemplate, Wording

__all__ = [
    "ARMS",
    "FIXED_STRATEGIES",
    "GOLD_DESIGNS",
    "LIU_INSTRUCTION",
    "MULTIHOP_INSTRUCTION",
    "NQ_ARMS",
    "STRATEGIES",
    "arrangement",
    "build_prompt",
    "closed_book_prompt",
    "fold_of",
    "gold_slot",
    "gold_slots",
    "rank_score",
    "seed_of",
    "strategy_for",
]

#: Strategies benchmarked, in report order; ``profile`` needs a measured profile, ``random`` a seed.
STRATEGIES: tuple[str, ...] = ("none", "edges", "pyramid", "langchain", "profile", "random")
FIXED_STRATEGIES: tuple[str, ...] = ("edges", "pyramid", "langchain")
#: Prompt arms of the anchor ablation. ``plain``: Liu et al.'s format; ``anchored``: litm's anchors as the
#: committed runs tested them (middle marker on, recap off, raw scores); ``default``: litm's anchors exactly as
#: ``AnchorOptions()`` ships them (xml, recap line, relevance scores, no middle marker); ``bracket``: the field
#: report's style, ``[DOC_ID: x | REL_SCORE: s]`` ... ``[/DOC_ID: x]`` with the middle-zone marker;
#: ``-both``: the question before and after the documents. Every arm keeps the same instruction.
ARMS: tuple[str, ...] = ("plain", "plain-both", "anchored", "anchored-both", "default", "bracket")
#: The NQ ablation arms of the committed Gemma runs (the default of ``BenchConfig.ablation_arms``).
NQ_ARMS: tuple[str, ...] = ("plain-both", "anchored", "anchored-both")
#: Where the gold documents of a multi-gold question go (see :func:`gold_slots`).
GOLD_DESIGNS: tuple[str, ...] = ("early", "middle", "split", "late")
#: The multi-hop instruction: Liu's, plus a request for a short answer, so exact match and F1 can score it.
MULTIHOP_INSTRUCTION = (
    "Write a short answer for the given question using only the provided search results (some of which might "
    "be irrelevant; the answer may need more than one of them). Answer with a few words only, no explanation."
)

LIU_INSTRUCTION = PromptTemplate.for_lang("en").liu_instruction
_CLOSED_BOOK_INSTRUCTION = "Write a high-quality answer for the given question."


def seed_of(qid: object) -> int:
    """The seed of a question's ``random`` placement: its id when numeric (NQ row indices), else a stable CRC-32.

    >>> seed_of(17), seed_of("17"), seed_of("5a8b57f25542995d1e6f1371")
    (17, 17, 3974347783)
    """
    text = str(qid)
    return int(text) if text.isdigit() else zlib.crc32(text.encode("utf-8"))


def fold_of(index: int) -> int:
    """The cross-fitting fold (0 or 1) of the ``index``-th question: alternating, so any prefix is balanced."""
    return index % 2


def strategy_for(name: str, *, seed: int = 0, profile: PositionProfile | None = None) -> Strategy:
    """The :class:`~litm.placement.Strategy` for a benchmark strategy name (``random`` seeded per question)."""
    if name == "random":
        return RandomOrder(seed)
    if name == "profile" and profile is None:
        raise InvalidOptionError("the profile strategy needs a measured profile")
    return get_strategy(name, profile=profile)


def arrangement(name: str, k: int, *, seed: int = 0, profile: PositionProfile | None = None) -> list[int]:
    """Rank (1-based) in each final slot when ``name`` places ``k`` ranked documents, via :func:`place`.

    >>> arrangement("edges", 6)
    [1, 3, 5, 6, 4, 2]
    """
    # Distinct string stand-ins (place() reads strings as documents); min_docs=0 so tiny k is placed too.
    items = [f"rank-{r}" for r in range(1, k + 1)]
    plan = place(items, strategy_for(name, seed=seed, profile=profile), profile=profile, min_docs=0)
    return [int(str(x).removeprefix("rank-")) for x in plan.items]


def gold_slot(name: str, k: int, gold_rank: int, *, seed: int = 0, profile: PositionProfile | None = None) -> int:
    """The final slot (1-based) where strategy ``name`` puts the document of retrieval rank ``gold_rank``."""
    return arrangement(name, k, seed=seed, profile=profile).index(gold_rank) + 1


def rank_score(rank: int) -> float:
    """The retriever score the anchored arm shows for a rank: 1.0 for rank 1, 0.05 less per rank (synthetic)."""
    return round(max(1.0 - 0.05 * (rank - 1), 0.05), 2)


# Liu et al.'s format through litm's own renderer: "Document [i](Title: t) text" lines, their instruction,
# the question after (and, for "-both", before) the documents, no recap. The committed benchmark runs were
# made with exactly these bytes (tests/test_bench_design.py checks them against the recorded prompt hashes).
_PLAIN = AnchorOptions(style="liu", recap=False)
# litm's own anchors (ids, scores, position, closing tags, middle marker); Liu's instruction so that only
# the formatting differs from the plain arm. No recap line: it invites "[id]" answers. The synthetic rank
# scores are shown as given ("raw"), as in the committed runs.
_ANCHORED = AnchorOptions(middle_marker=True, recap=False, sources=True, score_as="raw")
_ANCHORS: dict[str, AnchorOptions] = {
    "plain": _PLAIN,
    "anchored": _ANCHORED,
    "default": AnchorOptions(),
    "bracket": AnchorOptions(style="bracket", middle_marker=True),
}


@lru_cache(maxsize=16)
def _builder(style: str, both: bool, instruction: str) -> PromptBuilder:
    return PromptBuilder(
        wording=Wording(instruction=instruction),
        anchors=_ANCHORS[style],
        layout=Layout(question_position="both" if both else "after"),
    )


def _liu(docs: Sequence[Passage], question: str, *, both: bool, instruction: str) -> str:
    payload = [Doc(text=d.text, id=f"doc-{i}", title=d.title) for i, d in enumerate(docs, start=1)]
    return _builder("plain", both, instruction).build(payload, question).text


def _anchored(docs: Sequence[Passage], ranks: Sequence[int], question: str, *, style: str, both: bool,
              instruction: str) -> str:  # fmt: skip
    payload: list[dict[str, Any]] = [
        {"id": f"doc-{r}", "title": d.title, "text": d.text, "score": rank_score(r)}
        for d, r in zip(docs, ranks, strict=True)
    ]
    return _builder(style, both, instruction).build(payload, question).text


def build_prompt(
    docs: Sequence[Passage],
    ranks: Sequence[int],
    question: str,
    arm: str = "plain",
    *,
    instruction: str = LIU_INSTRUCTION,
) -> str:
    """The completion prompt for documents in final order (``ranks``: each one's retrieval rank).

    ``plain`` is Liu et al.'s format ("Document [i](Title: ...) text", question after); the other arms use
    :class:`~litm.prompt.PromptBuilder`'s anchors (see :data:`ARMS`; their ids and scores come from the
    retrieval rank); ``-both`` also puts the question before the documents.

    >>> d = [Passage(0, "T", "Paris is in France.")]
    >>> build_prompt(d, [1], "Where is Paris?").splitlines()[2]
    'Document [1](Title: T) Paris is in France.'
    >>> build_prompt(d, [1], "Where is Paris?", "bracket").splitlines()[2]
    '[DOC_ID: doc-1 | REL_SCORE: 1 | POSITION: 1/1 | TITLE: T]'
    """
    if arm not in ARMS:
        raise InvalidOptionError(f"unknown prompt arm {arm!r}; choose from {', '.join(ARMS)}")
    both = arm.endswith("-both")
    style = arm.removesuffix("-both")
    if style == "plain":
        return _liu(docs, question, both=both, instruction=instruction)
    return _anchored(docs, ranks, question, style=style, both=both, instruction=instruction)


def gold_slots(design: str, k: int, golds: int) -> list[int]:
    """The final slots of ``golds`` gold documents among ``k`` under a design: ``early`` (the first slots),
    ``middle`` (the central ones), ``split`` (spread from the first slot to the last) or ``late`` (the last).

    >>> [gold_slots(d, 10, 2) for d in GOLD_DESIGNS]
    [[1, 2], [5, 6], [1, 10], [9, 10]]
    >>> gold_slots("split", 10, 4), gold_slots("middle", 10, 4)
    ([1, 4, 7, 10], [4, 5, 6, 7])
    """
    if not 1 <= golds < k:
        raise InvalidOptionError(f"a gold-set design needs 1 <= golds < k, got {golds} golds for k = {k}")
    if design == "early":
        return list(range(1, golds + 1))
    if design == "late":
        return list(range(k - golds + 1, k + 1))
    if design == "middle":
        start = (k - golds) // 2 + 1
        return list(range(start, start + golds))
    if design == "split":
        if golds == 1:
            return [1]
        return sorted({round(1 + i * (k - 1) / (golds - 1)) for i in range(golds)})
    raise InvalidOptionError(f"unknown gold-set design {design!r}; choose from {', '.join(GOLD_DESIGNS)}")


def closed_book_prompt(question: str) -> str:
    """Liu et al.'s closed-book prompt: the question and no documents."""
    return f"{_CLOSED_BOOK_INSTRUCTION}\n\nQuestion: {question}\nAnswer:"
