"""LlamaIndex node postprocessors: :class:`LitmReorder` (placement) and :class:`LitmTrimmer` (token budget).

Both return the ``NodeWithScore`` objects they were given, reordered or cut, and round-trip through
``to_dict`` / ``from_dict`` (every setting is saved as a JSON value: the placement, its profile and a prompt
builder in their JSON forms).

Example:
    >>> from llama_index.core.schema import NodeWithScore, TextNode
    >>> nodes = [NodeWithScore(node=TextNode(text="lorem ipsum " * 20, id_=f"n{i}"), score=i / 10) for i in range(6)]
    >>> trimmer = LitmTrimmer(tokenizer="openai:gpt-4o", max_input_tokens=300, strategy="edges")
    >>> [n.node.node_id for n in trimmer.postprocess_nodes(nodes, query_str="Which node?")]
    ['n5', 'n3', 'n1', 'n2', 'n4']
    >>> LitmTrimmer.from_dict(trimmer.to_dict()).to_dict() == trimmer.to_dict()
    True
"""

from __future__ import annotations

from typing import ClassVar

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from litm.errors import PromptError
from litm.integrations._fields import PlacingFields, PromptFields
from litm.integrations._steps import reorder, trim

__all__ = ["LitmReorder", "LitmTrimmer"]


class LitmReorder(PlacingFields, BaseNodePostprocessor):
    """Place retrieved nodes where the model looks: a drop-in for LlamaIndex's ``LongContextReorder``.

    ``placement`` is a :class:`~litm.placement.PlacementOptions` (strategy, ranking, ``top_k``, a measured
    ``profile``, ...) and ``strategy`` its shorthand: any litm strategy (default ``auto``: the placement's
    measured profile when it has one, else ``edges``; ``"langchain"`` gives ``LongContextReorder``'s order).
    Without a ``placement`` nodes are ranked by score when every node has one (``rank_by="auto"``), by the
    given order otherwise; ``rank_by="score"`` refuses a node without one.

    Example:
        >>> from llama_index.core.schema import NodeWithScore, TextNode
        >>> from litm.placement import PlacementOptions
        >>> nodes = [NodeWithScore(node=TextNode(text=t, id_=t), score=None) for t in "abcd"]
        >>> [n.node.node_id for n in LitmReorder(strategy="edges").postprocess_nodes(nodes)]
        ['a', 'c', 'd', 'b']
        >>> best3 = LitmReorder(placement=PlacementOptions("edges", rank_by="auto", top_k=3))
        >>> [n.node.node_id for n in best3.postprocess_nodes(nodes)]  # under min_docs (4): kept in rank order
        ['a', 'b', 'c']
    """

    @classmethod
    def class_name(cls) -> str:
        return "LitmReorder"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return list(reorder(nodes, self.placing).items)


class LitmTrimmer(PlacingFields, PromptFields, BaseNodePostprocessor):
    """Keep the best-ranked nodes whose prompt fits a token budget, placed: a node postprocessor.

    ``tokenizer`` is a model spec (``"openai:gpt-4o"`` counts exactly and offline; ``"local"`` with the
    embedded model's tokenizer) and ``max_input_tokens`` the model's input limit (less
    ``reserve_output_tokens``). The whole prompt litm builds from the survivors (``builder``) for the query is
    counted, as the OpenAI chat request by default (``count_as``); the lowest-ranked nodes go first, and the
    survivors are placed as ``placement`` (and ``strategy``) say, as :class:`LitmReorder` does. Pair it
    with :class:`~litm.integrations.llamaindex.LitmSynthesizer` given the same builder and budget, or use the
    synthesizer's own budget alone.
    """

    budget_required: ClassVar[bool] = True

    @classmethod
    def class_name(cls) -> str:
        return "LitmTrimmer"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise PromptError(
                "LitmTrimmer counts the whole prompt, question included: call postprocess_nodes(nodes, "
                "query_str=...) or use it in a query engine"
            )
        return list(trim(nodes, query_bundle.query_str, self.placing, self.required_budget, self.prompt_builder).items)
