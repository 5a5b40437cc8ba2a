"""Retrieval: index a folder of documents, then find the chunks that answer a query, offline.

The first two steps of the RAG flow (index, retrieve), before litm places, assembles and gates the context.
Everything runs on bundled or pip-installed files; nothing is downloaded at run time.

* :class:`Index` / :func:`build_index`: load ``.txt``, ``.md``, ``.rst``, ``.html``, ``.jsonl`` (and, with
  ``litm[pdf]``, ``.pdf``) files, chunk them by tokens at sentence and paragraph boundaries, embed the chunks,
  and keep it all in a folder that later updates incrementally.
* Retrievers (:class:`Retriever` protocol, ``search(query, k) -> list[Hit]``): :class:`BM25` (lexical, bm25s +
  PyStemmer), :class:`Dense` (all-MiniLM-L6-v2 int8 ONNX), :class:`Hybrid` (reciprocal rank fusion).
* Rerankers (off by default): :class:`DenseReranker`, :class:`CrossEncoderReranker` for your own model,
  :class:`Reranked` to chain one after a retriever.
* A :class:`Hit` carries the chunk as a :class:`~litm.placement._documents.Doc` (``hit.doc``), its score, the
  score's direction, its rank and the retriever's name.

The optional dependencies come with ``pip install 'litm[rag]'``.

Example:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "france.md").write_text("# France\\n\\nParis is the capital of France.")
    >>> _ = (folder / "cats.txt").write_text("Cats sleep most of the day.")
    >>> index, report = build_index(folder, folder.parent / (folder.name + "-index"))
    >>> report.summary()
    '2 added, 0 updated, 0 removed, 0 unchanged; 2 chunks (2 embedded)'
    >>> [hit.doc.source for hit in search(index, "What is France's capital city?", k=1, retriever="hybrid")]
    ['france.md']
"""

from litm.errors import (
    CorruptIndexError,
    IndexMismatchError,
    IndexNotFoundError,
    IndexVersionError,
    RetrievalError,
    UnreadableFileError,
)
from litm.retrieve._bm25 import BM25
from litm.retrieve._chunking import DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP
from litm.retrieve._dense import Dense
from litm.retrieve._embedder import Embedder, MiniLM, MiniLMTokenizer
from litm.retrieve._hits import Chunk, Hit, Reranker, Retriever, docs
from litm.retrieve._hybrid import RRF_K, Hybrid
from litm.retrieve._index import Index, SyncReport, build_index
from litm.retrieve._rerank import CrossEncoderReranker, DenseReranker, Reranked
from litm.retrieve._retrievers import RETRIEVERS, index_of, make_retriever, search, shortfall

__all__ = [
    "BM25",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_OVERLAP",
    "RETRIEVERS",
    "RRF_K",
    "Chunk",
    "CorruptIndexError",
    "CrossEncoderReranker",
    "Dense",
    "DenseReranker",
    "Embedder",
    "Hit",
    "Hybrid",
    "Index",
    "IndexMismatchError",
    "IndexNotFoundError",
    "IndexVersionError",
    "MiniLM",
    "MiniLMTokenizer",
    "Reranked",
    "Reranker",
    "RetrievalError",
    "Retriever",
    "SyncReport",
    "UnreadableFileError",
    "build_index",
    "docs",
    "index_of",
    "make_retriever",
    "search",
    "shortfall",
]
