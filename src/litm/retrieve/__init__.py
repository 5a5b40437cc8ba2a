"""Retrieval: index a folder of documents, then find the chunks that answer a query, offline.

The first two steps of the RAG flow (index, retrieve), before litm places, assembles and gates the context.
Everything runs on bundled or pip-installed files; nothing is downloaded at run time.

* :class:`Index` / :func:`build_index`: load ``.txt``, ``.md``, ``.rst``, ``.html``, ``.jsonl`` (and, with
  ``litm[pdf]``, ``.pdf``) files, chunk them by tokens at sentence and paragraph boundaries, embed the chunks,
  and keep it all in a folder that later updates incrementally (``build_index`` also returns what changed:
  ``report.summary()``, ``report.unreadable``, ``report.repairs``).
* :func:`search`: open an index and return the best ``k`` hits for a query with a retriever named ``auto``,
  ``bm25``, ``dense`` or ``hybrid`` (optionally reranked: ``rerank="dense"``).
* Retrievers (:class:`Retriever` protocol, ``search(query, k) -> list[Hit]``): :class:`BM25` (lexical, bm25s +
  PyStemmer), :class:`Dense` (all-MiniLM-L6-v2 int8 ONNX), :class:`Hybrid` (reciprocal rank fusion).
* Reranking (off by default): :class:`Reranked` chains a reranker after a retriever;
  :class:`CrossEncoderReranker` adapts your own cross-encoder (any ``(query, texts) -> scores``).
* A :class:`Hit` carries the chunk as a :class:`~litm.placement.Doc` (``hit.doc``; the indexed chunk itself,
  with its source offsets, is ``hit.chunk``), its score, the score's direction, its rank and the retriever's
  name.

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
from litm.retrieve._dense import Dense
from litm.retrieve._hits import Hit, Retriever
from litm.retrieve._hybrid import Hybrid
from litm.retrieve._index import Index, build_index
from litm.retrieve._rerank import CrossEncoderReranker, Reranked
from litm.retrieve._retrievers import search

__all__ = [
    "BM25",
    "CorruptIndexError",
    "CrossEncoderReranker",
    "Dense",
    "Hit",
    "Hybrid",
    "Index",
    "IndexMismatchError",
    "IndexNotFoundError",
    "IndexVersionError",
    "Reranked",
    "RetrievalError",
    "Retriever",
    "UnreadableFileError",
    "build_index",
    "search",
]
