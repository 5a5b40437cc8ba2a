""":class:`LitmCompressor`: question-aware compression as a LangChain ``BaseDocumentCompressor``.

Its natural home is a ``ContextualCompressionRetriever`` (or a stage of a ``DocumentCompressorPipeline``):
the retriever's documents come back holding only the sentences that answer the query, within a token budget
of the target model's tokenizer.

Example:
    >>> from langchain_core.documents import Document
    >>> docs = [Document(page_content="The tower is in Paris. It opened in 1889. Tickets sell out.", id="a",
    ...                  metadata={"source": "towers.md"}),
    ...         Document(page_content="Berlin has many museums. The city is large.", id="b")]
    >>> compressor = LitmCompressor(tokenizer="openai:gpt-4o", target=14, scorer="retriever")
    >>> (out,) = compressor.compress_documents(docs, "When did the tower open?")
    >>> out.id, out.page_content, out.metadata["source"]
    ('a', 'The tower is in Paris. It opened in 1889.', 'towers.md')
    >>> out.metadata["compressed"]["spans"]
    [[0, 22], [23, 41]]
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document

from litm.compress import Compressed
from litm.compress._result import CompressedDoc
from litm.errors import InvalidDocumentError
from litm.integrations._compression import METADATA_KEY, provenance
from litm.integrations._fields import CompressionFields

__all__ = ["LitmCompressor"]


class LitmCompressor(CompressionFields, BaseDocumentCompressor):
    """Keep the sentences of the retrieved documents that answer the query, within a token budget.

    ``tokenizer`` is the target model's (a spec: ``"openai:gpt-4o"`` counts exactly and offline, ``"local"``
    with the embedded model's tokenizer); the documents' texts are held to ``target`` of its tokens, or to
    ``1/ratio`` of what they count. ``scorer="embed"`` (MiniLM, default), ``"lm"`` (a local model's
    question-conditioned log-probabilities, ``model`` default the embedded one) or ``"retriever"``
    (``metadata["relevance_score"]`` / ``["score"]``, else the given order); the other settings are
    :func:`litm.compress.compress`'s, with its defaults. Documents are read in the retriever's order.

    Each surviving document is a copy of the one given (its ``id``, its metadata and any other field) with
    the compressed ``page_content`` and ``metadata["compressed"]``: the kept ``spans`` as character
    offsets into the original ``page_content``, the token counts, the scorer's rank and why anything was
    cut. Documents of which nothing survived are left out, as LangChain's filters do. An empty list comes
    back empty; an empty document, a blank query or a budget below every sentence raises
    :class:`~litm.errors.CompressionError`.

    Example:
        >>> LitmCompressor(tokenizer="openai:gpt-4o", ratio=0.5)
        Traceback (most recent call last):
        ...
        litm.errors.InvalidOptionError: ratio must be a finite number >= 1 (4 keeps a quarter), got 0.5
    """

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The documents, compressed for ``query``, in the given order (or ``reorder``'s)."""
        for i, doc in enumerate(documents):
            if not isinstance(doc, Document):
                raise InvalidDocumentError(
                    f"item {i}: {type(self).__name__} takes LangChain Documents, got {type(doc).__name__}", index=i
                )
        out = self.compressing.run(documents, query)
        if out.result is None:
            return []
        return [_compressed(doc, kept, out.result) for doc, kept in zip(out.items, out.kept, strict=True)]


def _compressed(doc: Document, kept: CompressedDoc, result: Compressed) -> Document:
    """A copy of ``doc`` (every field kept) with the compressed text and its provenance in the metadata."""
    metadata = {**doc.metadata, METADATA_KEY: provenance(kept, result)}
    return doc.model_copy(update={"page_content": kept.doc.text, "metadata": metadata})
