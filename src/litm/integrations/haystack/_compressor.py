"""Haystack compression: :class:`LitmCompressor` keeps the sentences that answer the query, within a token budget.

Saved and loaded under ``haystack_integrations.components.compressors.litm`` (see
:mod:`litm.integrations.haystack._rankers` for why).

Example:
    >>> from haystack import Document
    >>> docs = [Document(content="The tower is in Paris. It opened in 1889. Tickets sell out.", id="a",
    ...                  meta={"title": "Towers"}, score=0.9),
    ...         Document(content="Berlin has many museums. The city is large.", id="b", score=0.2)]
    >>> compressor = LitmCompressor(tokenizer="openai:gpt-4o", target=14, scorer="retriever")
    >>> out = compressor.run(documents=docs, query="When did the tower open?")
    >>> [(d.id, d.content, d.score, d.meta["title"]) for d in out["documents"]]
    [('a', 'The tower is in Paris. It opened in 1889.', 0.9, 'Towers')]
    >>> out["documents"][0].meta["compressed"]["spans"], [d.id for d in out["dropped"]]
    ([[0, 22], [23, 41]], ['b'])
    >>> LitmCompressor.from_dict(compressor.to_dict()).to_dict() == compressor.to_dict()
    True
"""

import asyncio
import dataclasses
from typing import Any, TypedDict

from haystack import Document, component

from litm.compress import Compressed
from litm.compress._result import CompressedDoc
from litm.errors import InvalidDocumentError
from litm.integrations._compression import COMPRESSION_DEFAULTS, METADATA_KEY, Compressing, provenance
from litm.integrations.haystack._serde import dump, load

__all__ = ["MODULE", "LitmCompressor"]

#: Where Haystack saves, and loads, this component from.
MODULE = "haystack_integrations.components.compressors.litm"

_D = COMPRESSION_DEFAULTS


class CompressorOutput(TypedDict):
    """:meth:`LitmCompressor.run`'s outputs (see the class)."""

    documents: list[Document]
    dropped: list[Document]
    compression: dict[str, Any] | None


@component
class LitmCompressor:
    """Keep the sentences of the documents that answer the query, within a token budget of the target model.

    ``tokenizer`` is the target model's (a spec: ``"openai:gpt-4o"`` counts exactly and offline, ``"local"``
    with the embedded model's tokenizer); the documents' texts are held to ``target`` of its tokens, or to
    ``1/ratio`` of what they count (either may also be given per run, replacing the budget for that run).
    ``scorer="embed"`` (MiniLM, default), ``"lm"`` (a local model's question-conditioned log-probabilities,
    ``model`` default the embedded one) or ``"retriever"`` (``Document.score``, else the given order); the
    other settings are :func:`litm.compress.compress`'s, with its defaults. Documents are read in the
    retriever's order.

    Outputs: ``documents``, the survivors in output order, each a copy of the document given (its ``id``,
    ``score``, ``meta``, ``embedding`` and every other field) with the compressed ``content`` and
    ``meta["compressed"]`` (the kept ``spans`` as character offsets into the original ``content``, the
    token counts, the scorer's rank, why anything was cut); ``dropped``, the documents given of which
    nothing survived, in input order; ``compression``, the whole record
    (:meth:`litm.compress.Compressed.to_dict`: budget, tokens before and after, every decision), None when
    there were no documents. No documents in is no documents out; an empty document, a blank query or a
    budget below every sentence raises :class:`~litm.errors.CompressionError`.

    Example:
        >>> LitmCompressor(tokenizer="openai:gpt-4o", ratio=4, scorer="bm25")
        Traceback (most recent call last):
        ...
        litm.errors.InvalidOptionError: unknown scorer 'bm25'; choose from retriever, static, embed, lm
    """

    __module__ = MODULE

    def __init__(
        self,
        tokenizer: str | None = None,
        target: int | None = _D["target"],
        ratio: float | None = _D["ratio"],
        scorer: str = _D["scorer"],
        model: str | None = _D["model"],
        unit: str = _D["unit"],
        coarse: bool = _D["coarse"],
        coarse_factor: float = _D["coarse_factor"],
        rank_weight: float = _D["rank_weight"],
        protect: str | None = _D["protect"],
        reorder: str | None = _D["reorder"],
        link: str | None = _D["link"],
    ) -> None:
        # tokenizer is required: None gets Compressing's typed error naming it, not Python's missing-argument one.
        self.compressing = Compressing(
            tokenizer=tokenizer,  # type: ignore[arg-type]
            target=target, ratio=ratio, scorer=scorer, model=model, unit=unit, coarse=coarse,
            coarse_factor=coarse_factor, rank_weight=rank_weight, protect=protect, reorder=reorder, link=link,
        )  # fmt: skip

    def warm_up(self) -> None:
        """Load the scorer's model (MiniLM, or the ``lm`` scorer's) now rather than at the first run."""
        self.compressing.warm_up()

    def to_dict(self) -> dict[str, Any]:
        """The saved form (every parameter a JSON value)."""
        return dump(self, **self.compressing.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LitmCompressor":
        """The compressor :meth:`to_dict` saved."""
        return load(cls, data)

    @component.output_types(documents=list[Document], dropped=list[Document], compression=dict[str, Any] | None)
    def run(
        self, documents: list[Document], query: str, target: int | None = None, ratio: float | None = None
    ) -> CompressorOutput:
        """``documents`` compressed for ``query`` (to ``target`` tokens or ``1/ratio`` for this run when given)."""
        for i, doc in enumerate(documents):
            if not isinstance(doc, Document):
                raise InvalidDocumentError(
                    f"item {i}: LitmCompressor takes Haystack Documents, got {type(doc).__name__}", index=i
                )
        out = self.compressing.run(documents, query, target=target, ratio=ratio)
        if out.result is None:
            return {"documents": [], "dropped": [], "compression": None}
        kept = [_compressed(doc, c, out.result) for doc, c in zip(out.items, out.kept, strict=True)]
        return {"documents": kept, "dropped": list(out.dropped), "compression": out.result.to_dict()}

    @component.output_types(documents=list[Document], dropped=list[Document], compression=dict[str, Any] | None)
    async def run_async(
        self, documents: list[Document], query: str, target: int | None = None, ratio: float | None = None
    ) -> CompressorOutput:
        """:meth:`run` in a worker thread: scoring is CPU work, and the event loop stays free meanwhile."""
        return await asyncio.to_thread(self.run, documents, query, target, ratio)


def _compressed(doc: Document, kept: CompressedDoc, result: Compressed) -> Document:
    """A copy of ``doc`` (its id and every other field) with the compressed content and its provenance."""
    return dataclasses.replace(doc, content=kept.doc.text, meta={**doc.meta, METADATA_KEY: provenance(kept, result)})
