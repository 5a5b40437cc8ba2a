"""LangChain document steps: :class:`LitmReorder` (placement) and :class:`LitmTrimmer` (token budget).

Both hand back the ``Document`` objects they were given, reordered or cut, never copies.

Example:
    >>> from langchain_core.documents import Document
    >>> docs = [Document(page_content=f"passage {i}: " + "lorem ipsum " * 20) for i in range(1, 6)]
    >>> trimmer = LitmTrimmer(tokenizer="openai:gpt-4o", max_input_tokens=300, strategy="edges")
    >>> [d.page_content[:9] for d in trimmer.compress_documents(docs, "Which passage?")]
    ['passage 1', 'passage 3', 'passage 5', 'passage 4', 'passage 2']
    >>> LitmReorder().invoke([(docs[0], 0.2), (docs[1], 0.7)])
    Traceback (most recent call last):
    ...
    litm.errors.InvalidOptionError: LitmReorder: (document, score) pairs need higher_is_better stated: ...
    >>> from litm.placement import PlacementOptions
    >>> distances = PlacementOptions(rank_by="score", higher_is_better=False)
    >>> pairs = [(docs[0], 0.7), (docs[1], 0.2)]
    >>> [d.page_content[:9] for d, _ in LitmReorder(strategy="none", placement=distances).invoke(pairs)]
    ['passage 2', 'passage 1']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, BaseDocumentTransformer, Document
from langchain_core.runnables import RunnableConfig, RunnableSerializable

from litm.errors import InvalidOptionError
from litm.integrations._fields import PlacingFields, PromptFields
from litm.integrations._steps import reorder, trim
from litm.placement import PlacementOptions

__all__ = ["LangChainPlacing", "LitmReorder", "LitmTrimmer"]


class LangChainPlacing(PlacingFields):
    """Placement read in LangChain's conventions: the given order is the ranking (``PlacementOptions()``).

    A ``(document, score)`` pair's score is whatever the vector store returns, a distance or a similarity;
    litm will not guess which, so pairs with scores need ``higher_is_better`` stated: a ``placement`` must be
    given, and its ``higher_is_better`` is then taken as stated (a ``placement`` is the one place the
    direction is set; the default's is not read as a choice).
    """

    default_placement: ClassVar[PlacementOptions] = PlacementOptions()

    def placing_for(self, items: Sequence[object]) -> PlacementOptions:
        """The :class:`~litm.placement.PlacementOptions` for ``items``, refusing pairs of unknown direction."""
        if "placement" not in self.model_fields_set and any(_is_scored_pair(x) for x in items):
            raise InvalidOptionError(
                f"{type(self).__name__}: (document, score) pairs need higher_is_better stated: "
                "placement=PlacementOptions(higher_is_better=False) for a distance, as FAISS and Chroma return; "
                "True for a similarity, as InMemoryVectorStore returns"
            )
        return self.placing


def _is_scored_pair(item: object) -> bool:
    return isinstance(item, (tuple, list)) and len(item) == 2 and item[1] is not None


class LitmReorder(
    LangChainPlacing,
    BaseDocumentTransformer,
    BaseDocumentCompressor,
    RunnableSerializable[Sequence[object], list[object]],
):
    """Place retrieved documents where the model looks: a drop-in for ``LongContextReorder``.

    ``strategy`` is any litm strategy (default ``auto``: a measured ``profile=`` when given, else ``edges``,
    best first and second best last;
    ``"langchain"`` is exactly ``LongContextReorder``; ``"profile"`` with ``profile=`` a measured profile).
    Usable as a document transformer (``transform_documents``), as the compressor of a
    ``ContextualCompressionRetriever`` or a stage of a ``DocumentCompressorPipeline``
    (``compress_documents``, the query unused), and as an LCEL step (``retriever | LitmReorder()``), which
    also takes ``(document, score)`` pairs.

    Example:
        >>> from langchain_core.documents import Document
        >>> docs = [Document(page_content=t) for t in ("a", "b", "c")]
        >>> [d.page_content for d in LitmReorder(strategy="langchain").transform_documents(docs)]
        ['a', 'c', 'b']
    """

    def transform_documents(self, documents: Sequence[Document], **kwargs: object) -> Sequence[Document]:
        """The documents placed by the strategy (``kwargs`` are accepted for the interface and unused)."""
        return list(reorder(documents, self.placing_for(documents)).items)

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The documents placed by the strategy; placement does not depend on the query."""
        return self.transform_documents(documents)

    def invoke(
        self, input: Sequence[object], config: RunnableConfig | None = None, **kwargs: object
    ) -> list[object]:
        """Place documents (or ``(document, score)`` pairs) as a step of an LCEL chain."""
        return self._call_with_config(self._place, input, config, run_type="parser")

    def _place(self, items: Sequence[object]) -> list[object]:
        return list(reorder(items, self.placing_for(items)).items)


class LitmTrimmer(LangChainPlacing, PromptFields, BaseDocumentCompressor):
    """Keep the best-ranked documents whose prompt fits a token budget, placed: a ``BaseDocumentCompressor``.

    ``tokenizer`` is a model spec (``"openai:gpt-4o"`` counts exactly and offline) and ``max_input_tokens``
    the model's input limit (less ``reserve_output_tokens``). The whole prompt litm would build from the
    survivors (``builder``, default :class:`~litm.prompt.PromptBuilder`) for the query is counted, as the
    OpenAI chat request by default (``count_as``), and the lowest-ranked documents go first; the survivors
    come back placed by ``strategy``. Use it as the compressor of a ``ContextualCompressionRetriever``;
    :class:`~litm.integrations.langchain.LitmPrompt` with the same settings builds the prompt that fits.

    Example:
        >>> LitmTrimmer(strategy="edges")
        Traceback (most recent call last):
        ...
        litm.errors.InvalidOptionError: LitmTrimmer needs a token budget: tokenizer= ... and max_input_tokens=
    """

    budget_required: ClassVar[bool] = True

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The documents that fit the budget for ``query``, placed; the lowest-ranked were cut."""
        placing, budget = self.placing_for(documents), self.required_budget
        return list(trim(documents, query, placing, budget, self.prompt_builder).items)
