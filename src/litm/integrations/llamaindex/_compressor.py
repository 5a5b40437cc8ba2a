""":class:`LitmCompressor`: question-aware compression as a LlamaIndex node postprocessor.

Example:
    >>> from llama_index.core.schema import NodeWithScore, TextNode
    >>> nodes = [NodeWithScore(node=TextNode(text="The tower is in Paris. It opened in 1889. Tickets sell out.",
    ...                                      id_="a", metadata={"title": "Towers"}), score=0.9),
    ...          NodeWithScore(node=TextNode(text="Berlin has many museums. The city is large.", id_="b"), score=0.2)]
    >>> compressor = LitmCompressor(tokenizer="openai:gpt-4o", target=14, scorer="retriever")
    >>> (out,) = compressor.postprocess_nodes(nodes, query_str="When did the tower open?")
    >>> out.node.node_id, out.score, out.node.get_content(), out.node.metadata["title"]
    ('a', 0.9, 'The tower is in Paris. It opened in 1889.', 'Towers')
    >>> out.node.metadata["compressed"]["spans"]
    [[0, 22], [23, 41]]
"""

from __future__ import annotations

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle

from litm.compress import Compressed
from litm.compress._result import CompressedDoc
from litm.errors import CompressionError, InvalidDocumentError
from litm.integrations._compression import METADATA_KEY, provenance
from litm.integrations._fields import CompressionFields

__all__ = ["LitmCompressor"]


class LitmCompressor(CompressionFields, BaseNodePostprocessor):
    """Keep the sentences of the retrieved nodes that answer the query, within a token budget: a postprocessor.

    ``tokenizer`` is the target model's (a spec: ``"openai:gpt-4o"`` counts exactly and offline, ``"local"``
    with the embedded model's tokenizer); the nodes' texts are held to ``target`` of its tokens, or to
    ``1/ratio`` of what they count. ``scorer="embed"`` (MiniLM, default), ``"lm"`` (a local model's
    question-conditioned log-probabilities, ``model`` default the embedded one) or ``"retriever"``
    (``NodeWithScore.score``, else the given order); the other settings are :func:`litm.compress.compress`'s,
    with its defaults. Settings round-trip through ``to_dict`` / ``from_dict``.

    Each surviving node is a ``NodeWithScore`` with the retriever's score around a copy of the node (its id,
    relationships, metadata and every other field) holding the compressed text and
    ``metadata["compressed"]``: the kept ``spans`` as character offsets into the node's original text,
    the token counts, the scorer's rank and why anything was cut. That key is excluded from the text the LLM
    and the embedder see, so it costs no prompt tokens. Nodes of which nothing survived are left out.
    """

    @classmethod
    def class_name(cls) -> str:
        return "LitmCompressor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        if query_bundle is None:
            raise CompressionError(
                "LitmCompressor compresses for the question: call postprocess_nodes(nodes, query_str=...) or use "
                "it in a query engine"
            )
        for i, item in enumerate(nodes):
            if not isinstance(item, NodeWithScore):
                raise InvalidDocumentError(
                    f"item {i}: LitmCompressor takes NodeWithScore nodes, got {type(item).__name__}", index=i
                )
        out = self.compressing.run(nodes, query_bundle.query_str)
        if out.result is None:
            return []
        return [
            NodeWithScore(node=_compressed(item.node, kept, out.result), score=item.score)
            for item, kept in zip(out.items, out.kept, strict=True)
        ]


def _compressed(node: BaseNode, kept: CompressedDoc, result: Compressed) -> BaseNode:
    """A copy of ``node`` with the compressed text and its provenance in metadata hidden from the LLM."""
    copy = node.model_copy()
    copy.set_content(kept.doc.text)  # assigns a new value: the original node keeps its text
    copy.metadata = {**node.metadata, METADATA_KEY: provenance(kept, result)}
    copy.relationships = dict(node.relationships)
    for name in ("excluded_llm_metadata_keys", "excluded_embed_metadata_keys"):
        excluded = list(getattr(node, name))
        setattr(copy, name, excluded if METADATA_KEY in excluded else [*excluded, METADATA_KEY])
    return copy
