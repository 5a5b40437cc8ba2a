"""Retrievers by name, for the command line and for code that takes a name from its user (``litm.rag``).

``auto`` picks ``hybrid`` on an index with dense vectors and ``bm25`` on one without. Why hybrid and not
dense, although dense alone ranks natural-language questions best (NQ recall@1 0.897 against hybrid's 0.845):
on exact identifiers it is the other way round (key look-ups: dense 0.925, hybrid 0.999, BM25 1.000), and of
the three, hybrid is never far from the best on either (``docs/results/bench-retrieve``).

Example:
    >>> from litm.retrieve._index import Index
    >>> import tempfile
    >>> index = Index.create(tempfile.mkdtemp() + "/i", dense=False)
    >>> _ = index.add_texts([{"id": "fr", "text": "Paris is the capital of France."}])
    >>> make_retriever(index).name
    'bm25'
    >>> [h.doc.id for h in search(index, "capital of France")]
    ['fr#0']
    >>> shortfall(make_retriever(index), 5, 1)
    'the index holds only 1 chunk'
"""

from __future__ import annotations

from pathlib import Path

from litm.errors import RetrievalError
from litm.retrieve._bm25 import BM25
from litm.retrieve._dense import Dense
from litm.retrieve._hits import Hit, Reranker, Retriever
from litm.retrieve._hybrid import Hybrid
from litm.retrieve._index import Index
from litm.retrieve._rerank import DenseReranker, Reranked

__all__ = ["RERANKERS", "RETRIEVERS", "index_of", "make_retriever", "search", "shortfall"]

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


def index_of(retriever: object) -> Index | None:
    """The index a litm retriever searches (looking inside a hybrid or a reranked one), or None."""
    own = getattr(retriever, "index", None)
    if isinstance(own, Index):
        return own
    inner = [*getattr(retriever, "retrievers", ()), getattr(retriever, "retriever", None)]
    return next((found for r in inner if r is not None and (found := index_of(r)) is not None), None)


def shortfall(retriever: Retriever, k: int, found: int) -> str | None:
    """Why a search for ``k`` hits returned only ``found``, or None when it returned them all.

    The usual reasons: the index is empty, it holds fewer than ``k`` chunks, or (BM25) fewer chunks than
    that share a word with the query, since a chunk that scores 0 is never returned.
    """
    if found >= k:
        return None
    index = index_of(retriever)
    if index is None:
        return f"the {retriever.name} retriever returned {found}"
    size = len(index)
    if size == 0:
        return f"the index {index.path} is empty"
    if size < k and found == size:
        return f"the index holds only {size} chunk{'s' if size != 1 else ''}"
    if "bm25" in retriever.name:
        share = f"only {found} of the index's {size} chunks share" if found else f"no chunk of the {size} shares"
        return f"{share} a word with the query (bm25 skips chunks that score 0)"
    return f"the {retriever.name} retriever found {found} of the index's {size} chunks"


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
