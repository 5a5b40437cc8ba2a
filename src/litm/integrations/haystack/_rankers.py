"""Haystack rankers: :class:`LitmRanker` (placement) and :class:`LitmTrimmer` (token budget).

Haystack finds a saved component by its class path, and ``Pipeline.load`` imports only from ``haystack``,
``haystack_integrations`` and ``haystack_experimental``: both classes therefore declare
``haystack_integrations.components.rankers.litm`` as their module, which re-exports them.

Example:
    >>> from haystack import Document
    >>> docs = [Document(content="lorem ipsum " * 20, id=f"d{i}", score=1 - i / 10) for i in range(6)]
    >>> trimmer = LitmTrimmer(tokenizer="openai:gpt-4o", max_input_tokens=300, strategy="edges")
    >>> out = trimmer.run(documents=docs, query="Which one?")
    >>> [d.id for d in out["documents"]], [d.id for d in out["dropped"]]
    (['d0', 'd2', 'd4', 'd3', 'd1'], ['d5'])
    >>> LitmTrimmer.from_dict(trimmer.to_dict()).to_dict() == trimmer.to_dict()
    True
"""

import dataclasses
from collections.abc import Mapping
from typing import Any, TypedDict

from haystack import Document, component

from litm.integrations._options import Budget, component_placement
from litm.integrations._steps import reorder, trim
from litm.integrations.haystack._serde import dump, load
from litm.placement import PlacementOptions
from litm.prompt import PromptBuilder

__all__ = ["MODULE", "LitmRanker", "LitmTrimmer"]

#: Where Haystack saves, and loads, these components from.
MODULE = "haystack_integrations.components.rankers.litm"

#: The placement of a component given none: by score when every document has one, a repeated id keeps its
#: best-ranked copy (Haystack's document stores hand back duplicates across retrievers).
DEFAULT_PLACEMENT = PlacementOptions(rank_by="auto", dedup="id")

#: What ``builder=`` takes: a :class:`~litm.prompt.PromptBuilder` or its ``to_dict()`` form (None: litm's default).
BuilderLike = PromptBuilder | Mapping[str, object]


class RankerOutput(TypedDict):
    """:meth:`LitmRanker.run`'s output."""

    documents: list[Document]


class TrimmerOutput(TypedDict):
    """:meth:`LitmTrimmer.run`'s outputs: the documents kept, placed, and those the budget cut."""

    documents: list[Document]
    dropped: list[Document]


@component
class LitmRanker:
    """Place documents where the model looks: a drop-in for ``LostInTheMiddleRanker``, any litm strategy.

    ``placement`` is a :class:`~litm.placement.PlacementOptions` (strategy, ranking, ``top_k``, ``min_docs``,
    a measured ``profile``, ...; saved inline) and ``strategy`` its shorthand: any litm strategy (default
    ``auto``: the placement's measured profile when it has one, else ``edges``; ``"edges"`` with
    ``min_docs=0`` is exactly ``LostInTheMiddleRanker``'s order). Without a ``placement``, documents are
    ranked by score when every one has a score, else in the given order (``rank_by="auto"``), and a repeated
    id keeps its best-ranked copy (``dedup="id"``); a ``placement`` given is used as it is. ``top_k`` may
    also be given per run.

    Example:
        >>> from haystack import Document
        >>> from litm.placement import PlacementOptions
        >>> docs = [Document(content=t) for t in ("a", "b", "c")]
        >>> exact = PlacementOptions("edges", rank_by="auto", dedup="id", min_docs=0)
        >>> [d.content for d in LitmRanker(placement=exact).run(documents=docs)["documents"]]
        ['a', 'c', 'b']
    """

    __module__ = MODULE

    def __init__(self, strategy: str | None = None, placement: PlacementOptions | None = None) -> None:
        self.placing = component_placement("LitmRanker", placement, strategy, DEFAULT_PLACEMENT)

    def to_dict(self) -> dict[str, Any]:
        """The saved form: the placement in force as its ``to_dict()`` (a profile inline)."""
        return dump(self, placement=self.placing.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LitmRanker":
        """The ranker :meth:`to_dict` saved."""
        return load(cls, data, placement=PlacementOptions.from_dict)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], top_k: int | None = None) -> RankerOutput:
        """``documents`` placed (the best ``top_k`` of them when given, here or at construction)."""
        return {"documents": list(reorder(documents, _with_top_k(self.placing, top_k)).items)}

    @component.output_types(documents=list[Document])
    async def run_async(self, documents: list[Document], top_k: int | None = None) -> RankerOutput:
        """:meth:`run` (placement is quick and does no I/O)."""
        return self.run(documents, top_k)


@component
class LitmTrimmer:
    """Keep the best-ranked documents whose prompt fits a token budget, placed; what was cut comes out too.

    ``tokenizer`` is a model spec (``"openai:gpt-4o"`` counts exactly and offline; ``"local"`` with the
    embedded model's tokenizer) and ``max_input_tokens`` the model's input limit, less
    ``reserve_output_tokens``. The whole prompt :class:`LitmPromptBuilder` would build from the survivors
    (``builder``, a :class:`~litm.prompt.PromptBuilder` or its dict) for the query is counted, as the OpenAI
    chat request by default (``count_as``), and the lowest-ranked documents go first; ``placement`` and
    ``strategy`` are :class:`LitmRanker`'s. ``max_input_tokens`` may also be given per run.

    Example:
        >>> from haystack import Document
        >>> docs = [Document(content="lorem ipsum " * 40, id=f"d{i}", score=1 - i / 10) for i in range(4)]
        >>> out = LitmTrimmer(tokenizer="openai:gpt-4o", max_input_tokens=320).run(documents=docs, query="Which?")
        >>> [d.id for d in out["documents"]], [d.id for d in out["dropped"]]
        (['d0', 'd1', 'd2'], ['d3'])
    """

    __module__ = MODULE

    def __init__(
        self,
        tokenizer: str,
        max_input_tokens: int,
        reserve_output_tokens: int = 0,
        count_as: str = "openai",
        builder: BuilderLike | None = None,
        strategy: str | None = None,
        placement: PlacementOptions | None = None,
    ) -> None:
        self.budget = Budget(tokenizer, max_input_tokens, reserve_output_tokens, count_as)  # type: ignore[arg-type]
        self.builder = as_builder(builder)
        self.placing = component_placement("LitmTrimmer", placement, strategy, DEFAULT_PLACEMENT)

    def warm_up(self) -> None:
        """Load the tokenizer now (a local GGUF takes a moment) rather than at the first run."""
        self.budget.load_tokenizer()

    def to_dict(self) -> dict[str, Any]:
        """The saved form (the builder and a profile inline)."""
        return dump(self, **self.budget.to_dict(), builder=self.builder.to_dict(), placement=self.placing.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LitmTrimmer":
        """The trimmer :meth:`to_dict` saved."""
        return load(cls, data, placement=PlacementOptions.from_dict)

    @component.output_types(documents=list[Document], dropped=list[Document])
    def run(self, documents: list[Document], query: str, max_input_tokens: int | None = None) -> TrimmerOutput:
        """The documents that fit the budget for ``query``, placed, and those the budget cut (best-ranked first).

        Duplicates and documents beyond ``top_k`` are removed before the budget, as asked, and are in neither.
        """
        budget = self.budget
        if max_input_tokens is not None:
            budget = dataclasses.replace(budget, max_input_tokens=max_input_tokens)
        cut = trim(documents, query, self.placing, budget, self.builder)
        return {"documents": list(cut.items), "dropped": list(cut.dropped)}

    @component.output_types(documents=list[Document], dropped=list[Document])
    async def run_async(
        self, documents: list[Document], query: str, max_input_tokens: int | None = None
    ) -> TrimmerOutput:
        """:meth:`run` (the count is local and offline)."""
        return self.run(documents, query, max_input_tokens)


def as_builder(value: object) -> PromptBuilder:
    """A :class:`~litm.prompt.PromptBuilder` from itself, its ``to_dict()`` form, or None (litm's default)."""
    if value is None:
        return PromptBuilder()
    if isinstance(value, PromptBuilder):
        return value
    return PromptBuilder.from_dict(value)  # from_dict refuses anything else, typed


def _with_top_k(options: PlacementOptions, top_k: int | None) -> PlacementOptions:
    return options if top_k is None else options.replace(top_k=top_k)
