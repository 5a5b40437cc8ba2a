"""BM25, the lexical retriever and the default: bm25s's sparse scoring over PyStemmer-stemmed terms.

Measured on the bundled NQ passages, stemming lifts recall@1 from 0.752 (stopwords only, as ``litm.bench``
used) to 0.782 (see ``docs/results/bench-retrieve``). The scorer is built from the index's chunks on first
search and rebuilt after the index changes; building it takes well under a second for thousands of chunks,
so it is not stored on disk. Chunks that share no term with the query score 0 and are never returned.

Example:
    >>> from litm.retrieve._index import Index
    >>> import tempfile
    >>> index = Index.create(tempfile.mkdtemp() + "/i", dense=False)
    >>> _ = index.add_texts(["Paris is the capital of France.", "Berlin is in Germany.", "Cats purr."])
    >>> [(h.rank, h.doc.text) for h in BM25(index).search("capital of France", k=5)]
    [(1, 'Paris is the capital of France.')]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from litm.retrieve._deps import LazyModule, require
from litm.retrieve._hits import Hit, check_k, check_query
from litm.retrieve._index import Index
from litm.retrieve._lexical import Analyzer
from litm.retrieve._vectors import top_k

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray
else:
    np = LazyModule("numpy", "BM25")

__all__ = ["BM25"]


class _Scorer(Protocol):
    """The part of ``bm25s.BM25`` litm uses."""

    def index(self, corpus: list[list[str]], show_progress: bool = ...) -> object: ...

    def get_scores(self, query_tokens_single: list[str]) -> ArrayLike: ...


class BM25:
    """Okapi BM25 (bm25s, Lucene variant) over an :class:`~litm.retrieve._index.Index`; higher scores are better.

    ``k1`` and ``b`` are the usual BM25 parameters (Lucene's defaults); ``stemmer`` and ``stopwords`` configure
    the :class:`~litm.retrieve._lexical.Analyzer`.
    """

    name = "bm25"

    def __init__(
        self,
        index: Index,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        stemmer: str | None = "english",
        stopwords: str | None = "en",
    ) -> None:
        self.index = index
        self.k1 = k1
        self.b = b
        self.analyze = Analyzer(stemmer, stopwords)
        self._scorer: _Scorer | None = None
        self._generation = -1

    def prepare(self) -> _Scorer:
        """Build the scorer now (it is otherwise built on the first search, and again after the index changes)."""
        if self._scorer is None or self._generation != self.index.generation:
            bm25s = require("bm25s", "the BM25 retriever")
            scorer: _Scorer = bm25s.BM25(k1=self.k1, b=self.b)
            corpus = [self.analyze(chunk.indexed_text) for chunk in self.index.chunks]
            if corpus:
                scorer.index(corpus, show_progress=False)
            self._scorer, self._generation = scorer, self.index.generation
        return self._scorer

    def scores(self, query: str) -> NDArray[np.float32]:
        """The BM25 score of every chunk for ``query``, in index order."""
        terms = self.analyze(query)
        if not terms or not len(self.index):
            return np.zeros(len(self.index), np.float32)
        result: NDArray[np.float32] = np.asarray(self.prepare().get_scores(terms), np.float32)
        return result

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` best-scoring chunks for ``query`` that share at least one term with it."""
        check_k(k)
        check_query(query)
        values, rows = top_k(self.scores(query), k)
        chunks = self.index.chunks
        return [
            Hit(chunks[int(r)], float(s), True, rank, self.name)
            for rank, (s, r) in enumerate(((s, r) for s, r in zip(values, rows, strict=True) if s > 0), start=1)
        ]
