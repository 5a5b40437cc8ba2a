"""The three steps every framework component runs: reorder, trim to a token budget, assemble a prompt.

They take the caller's own objects (LangChain ``Document``\\ s, LlamaIndex ``NodeWithScore``\\ s, Haystack
``Document``\\ s, ``(document, score)`` pairs, anything :func:`litm.place` reads) and hand the same objects
back, so a component returns what its framework gave it, reordered or cut, never a copy.

- :func:`reorder` ranks and places (:func:`litm.place`).
- :func:`trim` keeps the largest best-ranked prefix whose whole prompt fits the budget, counted with the
  budget's tokenizer, and places the survivors (:func:`litm.budget.fit`): the lowest-ranked go first.
- :func:`assemble` builds litm's anchored prompt (:class:`litm.prompt.PromptBuilder`) from the placed
  documents, trimmed first when a budget is given; the framework shell converts it to its message type.

Example:
    >>> from litm.integrations._options import placing
    >>> docs = [("d1", 0.9), ("d2", 0.8), ("d3", 0.7), ("d4", 0.6), ("d5", 0.5)]
    >>> reorder(docs, placing({"strategy": "edges"})).items
    (('d1', 0.9), ('d3', 0.7), ('d5', 0.5), ('d4', 0.6), ('d2', 0.8))
    >>> cut = trim(docs, "Which?", placing({}), Budget("openai:gpt-4o", max_input_tokens=60))
    >>> [d for d, _ in cut.items], [d for d, _ in cut.dropped], cut.tokens <= 60
    (['d1', 'd2'], ['d3', 'd4', 'd5'], True)
    >>> made = assemble(docs[:2], "Which?", placing({}))
    >>> made.prompt.ids, made.items == tuple(docs[:2])
    (['doc-1', 'doc-2'], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from litm.budget import FitResult, fit
from litm.errors import PromptError
from litm.integrations._options import Budget
from litm.placement import PlacementOptions, PlacementPlan, place
from litm.placement._documents import to_docs
from litm.placement._ranking import Dropped
from litm.prompt import Prompt, PromptBuilder

__all__ = ["Assembled", "Trimmed", "assemble", "reorder", "trim"]

#: The caller's document type (a LangChain ``Document``, a LlamaIndex ``NodeWithScore``, ...), handed back as is.
T = TypeVar("T")


def reorder(items: Sequence[object], placing: PlacementOptions) -> PlacementPlan:
    """``items`` ranked and placed; ``plan.items`` are the caller's objects in the new order."""
    docs = to_docs(items)
    return _with_items(place(docs, placement=placing), items)


@dataclass(frozen=True)
class Trimmed(Generic[T]):
    """What a budget kept: the survivors placed (``items``), what it dropped and what ranking removed.

    ``dropped`` are the caller's objects the budget cut, best-ranked first; ``excluded`` those ranking
    removed before it (duplicates, beyond ``top_k``). ``tokens``, ``upper`` and ``budget`` are the count of
    the prompt with the survivors, its bound (``upper == tokens`` when the count is exact) and the budget;
    ``fit`` is the full :class:`~litm.budget.FitResult` (its ``prompt`` is the prompt that was counted).
    """

    items: tuple[T, ...]
    dropped: tuple[T, ...]
    excluded: tuple[T, ...]
    fit: FitResult

    @property
    def tokens(self) -> int:
        return self.fit.tokens

    @property
    def upper(self) -> int:
        return self.fit.upper

    @property
    def budget(self) -> int:
        return self.fit.budget

    @property
    def prompt(self) -> Prompt:
        """The prompt that was counted, with the survivors placed."""
        prompt: Prompt = self.fit.prompt
        return prompt


def trim(
    items: Sequence[T],
    question: str,
    placing: PlacementOptions,
    budget: Budget,
    builder: PromptBuilder | None = None,
) -> Trimmed[T]:
    """Keep the best-ranked ``items`` whose prompt (``builder``'s, for ``question``) fits ``budget``, placed.

    The whole rendered prompt is counted (anchors, instruction, question, chat overhead under
    ``count_as="openai"``), so the prompt :func:`assemble` builds from the survivors with the same builder
    fits. Raises :class:`~litm.errors.ContextBudgetExceeded` when even the prompt without documents does not.
    """
    _check_question(question)
    docs = to_docs(items)
    result = fit(
        docs, question, builder or PromptBuilder(), budget.load_tokenizer(), budget.max_input_tokens,
        budget.reserve_output_tokens, format=budget.format, placement=placing,
    )  # fmt: skip
    # fit hands back the Doc objects it was given: map them to the caller's by identity.
    index = {id(doc): i for i, doc in enumerate(docs)}
    prompt: Prompt = result.prompt
    return Trimmed(
        items=tuple(items[index[id(slot.doc)]] for slot in prompt.plan.slots),
        dropped=tuple(items[index[id(doc)]] for doc in result.dropped),
        excluded=tuple(items[d.input_index] for d in result.excluded),
        fit=result,
    )


@dataclass(frozen=True)
class Assembled(Generic[T]):
    """A built prompt and the caller's objects in the order the prompt shows them."""

    prompt: Prompt
    items: tuple[T, ...]
    trimmed: Trimmed[T] | None = None


def assemble(
    items: Sequence[T],
    question: str,
    placing: PlacementOptions,
    budget: Budget | None = None,
    builder: PromptBuilder | None = None,
) -> Assembled[T]:
    """litm's anchored prompt for ``question`` over ``items``, placed by ``placing`` (trimmed to ``budget``).

    Without a budget every document is placed and shown; with one, :func:`trim` decides which survive and
    the prompt is the one it counted.
    """
    if budget is not None:
        cut = trim(items, question, placing, budget, builder)
        return Assembled(cut.prompt, cut.items, cut)
    _check_question(question)
    plan = reorder(items, placing)
    return Assembled((builder or PromptBuilder()).build(plan, question), plan.items)


def _check_question(question: object) -> None:
    if not isinstance(question, str):
        raise PromptError(f"the question must be a string, got {type(question).__name__}")
    if not question.strip():
        raise PromptError("the question is empty: the prompt, and a token budget, need the query")


def _with_items(plan: PlacementPlan, items: Sequence[object]) -> PlacementPlan:
    """``plan`` (placed over ``docs``) with the caller's ``items`` in place of the ``Doc`` values."""
    dropped = tuple(Dropped(d.doc, d.input_index, d.reason, items[d.input_index]) for d in plan.dropped)
    return PlacementPlan(
        plan.strategy,
        plan.slots,
        items=tuple(items[s.input_index] for s in plan.slots),
        dropped=dropped,
        note=plan.note,
        profile_name=plan.profile_name,
        model=plan.model,
    )
