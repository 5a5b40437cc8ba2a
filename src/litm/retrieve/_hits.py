"""The values retrieval hands on: a :class:`Chunk` of an indexed text, a scored :class:`Hit`, and the
:class:`Retriever` and :class:`Reranker` protocols every retriever and reranker here implements.

A hit's score comes with its direction (``higher_is_better``), so whatever orders hits later (a fusion, a
reranker, :func:`litm.placement.place` with ``rank_by="score"``) never reads a distance as a similarity.
``hit.doc`` is the chunk as a litm :class:`~litm.placement._documents.Doc`, ready for placement and prompts.

Example:
    >>> chunk = Chunk(id="guide.md#0", key="guide.md", source="guide.md", title="Guide", text="Run pip.",
    ...               start=0, end=8, tokens=5)
    >>> hit = Hit(chunk, score=2.5, higher_is_better=True, rank=1, retriever="bm25")
    >>> hit.doc.id, hit.doc.score, hit.doc.metadata["start"]
    ('guide.md#0', 2.5, 0)
    >>> [d.id for d in docs([hit])]
    ['guide.md#0']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from litm.errors import RetrievalError
from litm.placement._documents import Doc

__all__ = ["Chunk", "Hit", "Reranker", "Retriever", "check_k", "check_query", "docs"]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of an indexed text: ``text`` is ``source_text[start:end]``, for citations that point home.

    ``key`` names the text it came from (a file's relative path, or ``file.jsonl#record-id``); ``source`` is
    what a citation shows; ``tokens`` is the size of :attr:`indexed_text` by the index's tokenizer;
    ``metadata`` carries what the reader knew (a JSON Lines record's fields and line, a PDF page).
    ``prefix`` (usually the title and a blank line) is put before the text when the chunk is indexed and
    embedded, never in the prompt: a chunk from the middle of a file still carries what the file is about.
    """

    id: str
    key: str
    source: str
    title: str | None
    text: str
    start: int
    end: int
    tokens: int
    prefix: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def indexed_text(self) -> str:
        """What BM25 and the embedder read for this chunk: ``prefix + text``."""
        return self.prefix + self.text

    def to_doc(self, score: float | None = None, **extra: Any) -> Doc:
        """This chunk as a :class:`Doc`: id, text, title and source, with offsets and ``extra`` in metadata."""
        meta = {**self.metadata, "key": self.key, "start": self.start, "end": self.end, **extra}
        return Doc(text=self.text, id=self.id, score=score, title=self.title, source=self.source, metadata=meta)

    def to_record(self) -> dict[str, Any]:
        """The JSON object the index stores for this chunk."""
        return {
            "id": self.id,
            "key": self.key,
            "source": self.source,
            "title": self.title,
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "tokens": self.tokens,
            "prefix": self.prefix,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Chunk:
        """Read what :meth:`to_record` wrote; raises ``KeyError`` / ``TypeError`` on a malformed record."""
        values = {name: record[name] for name in ("id", "key", "source", "text", "start", "end", "tokens")}
        for name in ("id", "key", "source", "text"):
            if not isinstance(values[name], str):
                raise TypeError(f"chunk field {name} must be a string")
        for name in ("start", "end", "tokens"):
            if not isinstance(values[name], int) or isinstance(values[name], bool):
                raise TypeError(f"chunk field {name} must be an integer")
        title = record.get("title")
        if title is not None and not isinstance(title, str):
            raise TypeError("chunk field title must be a string or null")
        prefix = record.get("prefix", "")
        if not isinstance(prefix, str):
            raise TypeError("chunk field prefix must be a string")
        meta = record.get("metadata") or {}
        if not isinstance(meta, Mapping):
            raise TypeError("chunk field metadata must be an object")
        return cls(title=title, prefix=prefix, metadata=dict(meta), **values)


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the chunk, its score, which way the score points, its 1-based rank, who found it."""

    chunk: Chunk
    score: float
    higher_is_better: bool
    rank: int
    retriever: str

    @property
    def doc(self) -> Doc:
        """The chunk as a :class:`Doc` carrying this hit's score, rank, retriever and score direction."""
        return self.chunk.to_doc(
            self.score, rank=self.rank, retriever=self.retriever, higher_is_better=self.higher_is_better
        )


def docs(hits: Sequence[Hit]) -> list[Doc]:
    """The hits as :class:`Doc` values, best first (pass ``rank_by="input"`` to placement to keep this order)."""
    return [hit.doc for hit in hits]


def check_k(k: int) -> int:
    """``k`` if it is a positive int, else :class:`~litm.errors.RetrievalError`."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise RetrievalError(f"k must be a positive integer, got {k!r}")
    return k


def check_query(query: str) -> str:
    """``query`` if it is a string with a word in it, else :class:`~litm.errors.RetrievalError`.

    A blank query matches nothing in particular: a dense retriever would still rank every chunk by its
    distance to the embedding of nothing, and return arbitrary hits.

    >>> check_query("  rotate keys ")
    '  rotate keys '
    """
    if not isinstance(query, str):
        raise RetrievalError(f"the query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise RetrievalError(f"the query is empty ({query!r}): nothing to search for")
    return query


@runtime_checkable
class Retriever(Protocol):
    """Finds the chunks that best answer a query: ``search(query, k)`` returns at most ``k`` hits, best first."""

    @property
    def name(self) -> str:
        """A short label for reports and hits (``bm25``, ``dense``, ``hybrid``)."""
        ...

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The best ``k`` hits for ``query`` (fewer when fewer chunks match), ranks 1..n."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Re-scores a retriever's candidates for a query and returns them re-ordered, ranks renumbered."""

    @property
    def name(self) -> str:
        """A short label (``dense-rerank``, ``cross-encoder``)."""
        ...

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """``hits`` re-scored for ``query``, best first."""
        ...
