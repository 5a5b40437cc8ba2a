"""LlamaIndex components: litm's placement, token budget and anchored prompt in a LlamaIndex query engine.

Needs ``pip install 'litm[llamaindex]'`` (llama-index-core 0.14); importing this package without it raises
:class:`~litm.errors.MissingDependencyError` naming the extra.

======================== =======================================================================================
:class:`LitmReorder`      a node postprocessor: any litm strategy (``strategy="langchain"`` with distinct scores
                          is exactly LlamaIndex's ``LongContextReorder``)
:class:`LitmTrimmer`      a node postprocessor keeping the best-ranked nodes whose prompt fits a token budget
                          (exact tokenizer), placed
:class:`LitmSynthesizer`  a response synthesizer that asks the LLM with litm's anchored prompt (LlamaIndex
                          ``ChatMessage``\\ s); ``messages()`` gives the messages alone
:class:`LitmCompressor`   a node postprocessor keeping the sentences that answer the query within a token budget
                          (:mod:`litm.compress`), each node's kept spans in its metadata
======================== =======================================================================================

Scores are read in LlamaIndex's convention: ``NodeWithScore.score`` is a similarity, higher is better. Nodes
are ranked by score when every node has one and in the retriever's order otherwise (``rank_by="auto"``, the
components' default when no ``placement=`` :class:`~litm.placement.PlacementOptions` is given; ``strategy=`` is
its shorthand); a node without a score is never counted as 0 (``rank_by="score"`` refuses it instead).

Example:
    >>> from llama_index.core.schema import NodeWithScore, TextNode
    >>> nodes = [NodeWithScore(node=TextNode(text=t, id_=t), score=s) for t, s in [("a", 0.2), ("b", 0.9), ("c", 0.5)]]
    >>> [n.node.node_id for n in LitmReorder(strategy="langchain").postprocess_nodes(nodes)]
    ['b', 'a', 'c']
"""

from litm.retrieve._deps import require

require("llama_index.core", "litm.integrations.llamaindex", "pip install 'litm[llamaindex]'")

from litm.integrations.llamaindex._compressor import LitmCompressor  # noqa: E402
from litm.integrations.llamaindex._postprocessors import LitmReorder, LitmTrimmer  # noqa: E402
from litm.integrations.llamaindex._synthesizer import LitmSynthesizer  # noqa: E402

__all__ = ["LitmCompressor", "LitmReorder", "LitmSynthesizer", "LitmTrimmer"]
