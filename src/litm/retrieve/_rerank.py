"""Second-stage reranking, off by default: re-score a retriever's candidates with a stronger or other model.

* :class:`DenseReranker` re-scores hits by cosine similarity to the query with the dense model. It reuses the
  index's stored vectors where it has them and embeds only the others, so ``BM25 -> DenseReranker`` costs one
  query embedding.
* :class:`CrossEncoderReranker` adapts your own local cross-encoder: any callable ``(query, texts) -> scores``
  (it is given each chunk's indexed text: title, blank line, text)
  such as ``sentence_transformers.CrossEncoder(...).predict`` over pairs or a llama.cpp scorer. Say which way
  its scores point with ``higher_is_better``. No package on the registry bundles a cross-encoder offline,
  so litm ships none.
* :class:`Reranked` is a retriever: it asks its inner retriever for ``candidates`` hits and reranks them.

Example:
    >>> from litm.retrieve._index import Index
    >>> from litm.retrieve._bm25 import BM25
    >>> import tempfile
    >>> index = Index.create(tempfile.mkdtemp() + "/i", dense=False)
    >>> _ = index.add_texts(["apple", "apple pie", "apple pie recipe"])
    >>> [h.doc.text for h in BM25(index).search("apple", k=3)]      # BM25 favours the short text
    ['apple', 'apple pie', 'apple pie recipe']
    >>> longest = CrossEncoderReranker(lambda query, texts: [len(t) for t in texts])
    >>> [h.doc.text for h in Reranked(BM25(index), longest).search("apple", k=2)]
    ['apple pie recipe', 'apple pie']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from litm.errors import RetrievalError
from litm.placement._documents import check_score
from litm.retrieve._deps import LazyModule
from litm.retrieve._embedder import Embedder, MiniLM
from litm.retrieve._hits import Hit, Reranker, Retriever, check_k, check_query
from litm.retrieve._index import Index

if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy", "the dense reranker")

__all__ = ["CrossEncoderReranker", "DenseReranker", "Reranked", "rescored"]


def rescored(hits: Sequence[Hit], scores: Sequence[float], *, higher_is_better: bool, name: str) -> list[Hit]:
    """``hits`` with new ``scores``, sorted best first by their direction (ties keep the old order)."""
    if len(scores) != len(hits):
        raise RetrievalError(f"{name} returned {len(scores)} scores for {len(hits)} hits")
    checked = [check_score(s, label=f"{name} score {i}") for i, s in enumerate(scores)]
    order = sorted(range(len(hits)), key=lambda i: -checked[i] if higher_is_better else checked[i])
    return [
        Hit(hits[i].chunk, checked[i], higher_is_better, rank, f"{hits[i].retriever}+{name}")
        for rank, i in enumerate(order, start=1)
    ]


class DenseReranker:
    """Cosine similarity to the query by the dense model (higher is better).

    With ``index`` given, a hit whose chunk is in that index (and the index has vectors) uses the stored
    vector; otherwise its text is embedded. ``embedder`` defaults to the index's model, or MiniLM.
    """

    name = "dense-rerank"

    def __init__(self, index: Index | None = None, *, embedder: Embedder | None = None) -> None:
        self.index = index
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        """The model that embeds the query and any hit without a stored vector."""
        if self._embedder is None:
            self._embedder = self.index.embedder if self.index is not None else MiniLM()
        return self._embedder

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """``hits`` re-scored by cosine similarity to ``query``, best first."""
        if not hits:
            return []
        q = self.embedder.embed([query])[0]
        vectors = np.zeros((len(hits), q.shape[0]), np.float32)
        missing: list[int] = []
        stored = self.index is not None and self.index.has_vectors
        for i, hit in enumerate(hits):
            row = self._row(hit) if stored else None
            if row is None:
                missing.append(i)
            else:
                assert self.index is not None
                vectors[i] = self.index.vectors[row]
        if missing:
            vectors[missing] = self.embedder.embed([hits[i].chunk.indexed_text for i in missing])
        return rescored(hits, [float(s) for s in vectors @ q], higher_is_better=True, name=self.name)

    def _row(self, hit: Hit) -> int | None:
        assert self.index is not None
        try:
            row = self.index.row(hit.chunk.id)
        except KeyError:
            return None
        # Same id but other text (a hit from another index): embed it rather than trust the stored vector.
        return row if self.index.chunks[row].indexed_text == hit.chunk.indexed_text else None


class CrossEncoderReranker:
    """Adapter for a local cross-encoder: ``score(query, texts)`` returns one number per text.

    ``higher_is_better=False`` for scorers that return distances or losses; the hits keep the scores as
    returned and say their direction.
    """

    def __init__(
        self,
        score: Callable[[str, Sequence[str]], Sequence[float]],
        *,
        higher_is_better: bool = True,
        name: str = "cross-encoder",
        batch_size: int = 32,
    ) -> None:
        self._score = score
        self.higher_is_better = higher_is_better
        self.name = name
        self.batch_size = check_k(batch_size)

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """``hits`` re-scored by the cross-encoder, best first."""
        scores: list[float] = []
        for lo in range(0, len(hits), self.batch_size):
            texts = [h.chunk.indexed_text for h in hits[lo : lo + self.batch_size]]
            batch = list(self._score(query, texts))
            if len(batch) != len(texts):
                raise RetrievalError(f"{self.name} returned {len(batch)} scores for {len(texts)} texts")
            scores.extend(batch)
        return rescored(hits, scores, higher_is_better=self.higher_is_better, name=self.name)


class Reranked:
    """A retriever that reranks ``candidates`` hits of ``retriever`` with ``reranker`` and keeps the best ``k``."""

    def __init__(self, retriever: Retriever, reranker: Reranker, *, candidates: int = 50) -> None:
        self.retriever = retriever
        self.reranker = reranker
        self.candidates = check_k(candidates)
        self.name = f"{retriever.name}+{reranker.name}"

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The reranked best ``k`` of the inner retriever's ``max(candidates, k)`` hits."""
        check_k(k)
        check_query(query)
        return self.reranker.rerank(query, self.retriever.search(query, max(self.candidates, k)))[:k]
