"""Rank benchmark documents with litm's own retrievers (BM25, dense MiniLM, hybrid) instead of a fixed order.

Two uses: mining NQ distractors from the pool of other questions' passages (``litm bench --retriever
dense``), and ordering the documents of a data file or a multi-hop set by how a real retriever would rank
them for the question, which is the order placement strategies start from. The documents go into one
on-disk :class:`~litm.retrieve.Index` per corpus under the litm cache directory; documents already there are
never embedded again, so a second run (or a resumed one) pays only for the queries.

Example:
    >>> search = searcher("bm25", [("a", "Paris", "Paris is the capital of France."),
    ...                            ("b", "Cats", "Cats sleep all day.")], "/tmp/litm-doc-index")  # doctest: +SKIP
    >>> [key for key, _ in search("capital of France", 2)]                                      # doctest: +SKIP
    ['a']
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

from litm.errors import InvalidOptionError
from litm.models._embedded import cache_dir
from litm.retrieve import Index
from litm.retrieve._retrievers import RETRIEVERS as _SEARCH_RETRIEVERS
from litm.retrieve._retrievers import make_retriever

__all__ = ["RETRIEVERS", "Searcher", "index_folder", "searcher"]

#: The retrievers a benchmark can rank with: litm.retrieve's, less "auto" (a benchmark names what it ran).
RETRIEVERS: tuple[str, ...] = tuple(name for name in _SEARCH_RETRIEVERS if name != "auto")

#: ``search(query, n) -> [(document key, score), ...]``, best first, one entry per document.
Searcher = Callable[[str, int], list[tuple[str, float]]]


def index_folder(corpus: str, retriever: str) -> Path:
    """Where the index of a named corpus lives (vectors only when the retriever needs them).

    >>> index_folder("hotpotqa", "bm25").name
    'hotpotqa-lexical'
    """
    return cache_dir() / "bench-index" / (corpus if retriever != "bm25" else f"{corpus}-lexical")


def searcher(retriever: str, documents: Sequence[tuple[str, str, str]], folder: str | Path) -> Searcher:
    """A search function over ``documents`` (``(key, title, text)``), indexed (incrementally) in ``folder``."""
    if retriever not in RETRIEVERS:
        raise InvalidOptionError(f"unknown retriever {retriever!r}; choose from {', '.join(RETRIEVERS)}")
    index = Index.create(folder, dense=retriever != "bm25", exist_ok=True)
    # Keyed by content, so one passage shared by several questions (or datasets) is indexed once.
    keyed = {_key(title, text): (title, text) for _, title, text in documents}
    present = set(index.keys)
    missing = [{"id": k, "title": t, "text": x} for k, (t, x) in keyed.items() if k not in present]
    if missing:
        index.add_texts(missing)
    by_content = {key: _key(title, text) for key, title, text in documents}
    owners: dict[str, list[str]] = {}
    for key, content in by_content.items():
        owners.setdefault(content, []).append(key)
    search = make_retriever(index, retriever)

    def run(query: str, n: int) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        seen: set[str] = set()
        for hit in search.search(query, max(1, min(len(index.chunks), n * 4 + 8))):
            content = hit.chunk.key
            if content in seen or content not in owners:
                continue
            seen.add(content)  # a long document's later chunks do not rank it again
            out += [(key, hit.score) for key in owners[content]]
            if len(out) >= n:
                break
        return out[:n]

    return run


def _key(title: str, text: str) -> str:
    return "t" + hashlib.sha256(f"{title}\n{text}".encode()).hexdigest()[:24]
