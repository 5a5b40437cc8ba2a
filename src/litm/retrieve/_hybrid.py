"""Hybrid retrieval: reciprocal rank fusion (RRF) of several retrievers' rankings, BM25 and dense by default.

RRF (Cormack, Clarke and Büttcher, SIGIR 2009) scores a chunk by ``sum(1 / (k + rank))`` over the rankings it
appears in. It reads ranks only, never scores, so BM25's unbounded scores and cosine similarities need no
calibration against each other; ``k = 60`` is the constant of the paper, which damps the weight of the very
first ranks so that agreement between retrievers counts more than one retriever's top pick.

Example:
    >>> from litm.retrieve._index import Index
    >>> from litm.retrieve._bm25 import BM25
    >>> import tempfile
    >>> index = Index.create(tempfile.mkdtemp() + "/i", dense=False)
    >>> _ = index.add_texts(["Paris is in France.", "Paris Hilton is a celebrity.", "Lyon is in France."])
    >>> hits = Hybrid([BM25(index), BM25(index, stemmer=None)]).search("cities in France", k=2)
    >>> [h.doc.text for h in hits], round(hits[0].score, 4)
    (['Paris is in France.', 'Lyon is in France.'], 0.0328)
"""

from __future__ import annotations

from collections.abc import Sequence

from litm.errors import RetrievalError
from litm.retrieve._hits import Chunk, Hit, Retriever, check_k, check_query

__all__ = ["RRF_K", "Hybrid"]

#: The RRF constant of Cormack et al. (2009).
RRF_K = 60


class Hybrid:
    """Fuse ``retrievers`` by RRF; each is asked for ``depth`` candidates (at least ``k``). Higher is better.

    ``weights`` scale each retriever's contribution (default: equal). Ties in fused score go to the chunk
    with the better best rank, then to the earlier retriever's order.
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        *,
        rrf_k: int = RRF_K,
        depth: int = 100,
        weights: Sequence[float] | None = None,
        name: str = "hybrid",
    ) -> None:
        if not retrievers:
            raise RetrievalError("a hybrid retriever needs at least one retriever")
        if weights is not None and len(weights) != len(retrievers):
            raise RetrievalError(f"{len(weights)} weights for {len(retrievers)} retrievers")
        if rrf_k < 0:
            raise RetrievalError(f"rrf_k must be >= 0, got {rrf_k}")
        self.retrievers = tuple(retrievers)
        self.rrf_k = rrf_k
        self.depth = check_k(depth)
        self.weights = tuple(weights) if weights is not None else (1.0,) * len(retrievers)
        self.name = name

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` chunks with the highest fused score."""
        check_k(k)
        check_query(query)
        fused: dict[str, float] = {}
        best: dict[str, tuple[int, int]] = {}  # chunk id -> (best rank, first-seen order)
        chunks: dict[str, Chunk] = {}
        for weight, retriever in zip(self.weights, self.retrievers, strict=True):
            for hit in retriever.search(query, max(self.depth, k)):
                cid = hit.chunk.id
                fused[cid] = fused.get(cid, 0.0) + weight / (self.rrf_k + hit.rank)
                chunks.setdefault(cid, hit.chunk)
                prev = best.get(cid)
                best[cid] = (min(prev[0], hit.rank), prev[1]) if prev else (hit.rank, len(best))
        order = sorted(fused, key=lambda c: (-fused[c], best[c]))[:k]
        return [Hit(chunks[c], fused[c], True, rank, self.name) for rank, c in enumerate(order, start=1)]
