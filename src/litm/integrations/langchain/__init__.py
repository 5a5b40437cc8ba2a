"""LangChain components: litm's placement, token budget and anchored prompt in a LangChain pipeline.

Needs ``pip install 'litm[langchain]'`` (langchain-core 1.x); importing this package without it raises
:class:`~litm.errors.MissingDependencyError` naming the extra.

=================== ============================================================================================
:class:`LitmReorder` a ``BaseDocumentTransformer``, a ``BaseDocumentCompressor`` and a ``Runnable``: any litm
                     strategy (``strategy="langchain"`` is exactly ``LongContextReorder``), one line in a
                     ``ContextualCompressionRetriever``, a ``DocumentCompressorPipeline`` or an LCEL pipe
:class:`LitmTrimmer` a ``BaseDocumentCompressor`` keeping the best-ranked documents whose prompt fits a token
                     budget (exact tokenizer), placed
:class:`LitmPrompt`  a ``Runnable`` from ``{"context": documents, "question": str}`` to a ``ChatPromptValue``
                     (or a ``StringPromptValue``) holding litm's anchored prompt, trimmed to a budget if given
:class:`LitmRetriever` a ``BaseRetriever`` wrapping any retriever: its documents placed (and trimmed)
:class:`LitmCompressor` a ``BaseDocumentCompressor`` keeping the sentences that answer the query within a token
                     budget (:mod:`litm.compress`), each document's kept spans in its metadata
=================== ============================================================================================

LangChain has no score convention: documents are ranked in the order the retriever returned them
(``PlacementOptions()``, ``rank_by="input"``). Every component takes its placement as one
``placement=`` :class:`~litm.placement.PlacementOptions`, with ``strategy=`` as a shorthand. A score in
``metadata["relevance_score"]`` or ``metadata["score"]`` (what LangChain's rerankers write) is read as
higher-is-better; ``(Document, score)`` pairs from ``similarity_search_with_score`` need ``higher_is_better``
stated in a ``placement=``, since stores differ (FAISS and Chroma return a distance, lower is closer).

Example:
    >>> from langchain_core.documents import Document
    >>> docs = [Document(page_content=f"d{i}") for i in range(1, 7)]
    >>> [d.page_content for d in LitmReorder().transform_documents(docs)]     # auto, no profile: edges
    ['d1', 'd3', 'd5', 'd6', 'd4', 'd2']
    >>> [d.page_content for d in LitmReorder(strategy="langchain").invoke(docs)]
    ['d2', 'd4', 'd6', 'd5', 'd3', 'd1']
"""

from litm.retrieve._deps import require

require("langchain_core", "litm.integrations.langchain", "pip install 'litm[langchain]'")

from litm.integrations.langchain._compressor import LitmCompressor  # noqa: E402
from litm.integrations.langchain._documents import LitmReorder, LitmTrimmer  # noqa: E402
from litm.integrations.langchain._prompt import LitmPrompt  # noqa: E402
from litm.integrations.langchain._retriever import LitmRetriever  # noqa: E402

__all__ = ["LitmCompressor", "LitmPrompt", "LitmReorder", "LitmRetriever", "LitmTrimmer"]
