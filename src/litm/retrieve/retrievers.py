"""Retrievers by name, for the command line and for code that takes a name from its user (``litm.rag``).

``auto`` picks ``hybrid`` on an index with dense vectors and ``bm25`` on one without. Why hybrid and not
dense, although dense alone ranks natural-language questions best (NQ recall@1 0.897 against hybrid's 0.845):
on exact identifiers it is the other way round (key look-ups: dense 0.925, hybrid 0.999, BM25 1.000), and of
the three, hybrid is never far from the best on either (``docs/results/bench-retrieve``).

Example:
    >>> from litm.retrieve.index import Index
    >>> import tempfile
    >>> index = Index.create(tempfile.mkdtemp() + "/i", dense=False)
    >>> _ = index.add_texts([{"id": "fr", "text": "Paris is the capital of France."}])
    >>> make_retriever(index).name
    'bm25'
    >>> [h.doc.id for h in search(index, "capital of France")]
    ['fr#0']
"""

from __future__ import annotations

from pathlib import Path

from litm.errors import RetrievalError
from litm.retrieve.bm25 import BM25
from litm.retrieve.dense import Dense
from litm.retrieve.hits import Hit, Reranker, Retriever
from litm.retrieve.hybrid import Hybrid
from litm.retrieve.index import Index
from litm.retrieve.rerank import DenseReranker, Reranked

__all__ = ["RERANKERS", "RETRIEVERS", "make_retriever", "search"]

RETRIEVERS = ("auto", "bm25", "dense", "hybrid")
RERANKERS = ("dense",)


def make_retriever(
    index: Index,
    kind: str = "auto",
    *,
    backend: str = "numpy",
    rerank: str | Reranker | None = None,
    candidates: int = 50,
) -> Retriever:
    """The retriever called ``kind`` over ``index``, optionally followed by a reranker.

    ``backend`` is the vector search of dense retrieval (``numpy`` or ``faiss``); ``rerank`` is a reranker
    or the name ``"dense"``; the reranker sees ``candidates`` hits.
    """
    if kind == "auto":
        kind = "hybrid" if index.has_vectors else "bm25"
    retriever: Retriever
    if kind == "bm25":
        retriever = BM25(index)
    elif kind == "dense":
        retriever = Dense(index, backend=backend)
    elif kind == "hybrid":
        retriever = Hybrid([BM25(index), Dense(index, backend=backend)])
    else:
        raise RetrievalError(f"unknown retriever {kind!r}; choose from {', '.join(RETRIEVERS)}")
    if rerank is None:
        return retriever
    if isinstance(rerank, str):
        if rerank != "dense":
            raise RetrievalError(f"unknown reranker {rerank!r}; choose from {', '.join(RERANKERS)}")
        rerank = DenseReranker(index)
    return Reranked(retriever, rerank, candidates=candidates)


def search(
    index: Index | str | Path,
    query: str,
    *,
    k: int = 10,
    retriever: str = "auto",
    backend: str = "numpy",
    rerank: str | None = None,
) -> list[Hit]:
    """Open ``index`` (a path or an :class:`Index`) and return the best ``k`` hits for ``query``."""
    opened = index if isinstance(index, Index) else Index.open(index)
    return make_retriever(opened, retriever, backend=backend, rerank=rerank).search(query, k)
