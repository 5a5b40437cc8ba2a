"""Dense retrieval: the query's MiniLM embedding against the index's chunk vectors, by cosine similarity.

Example:
    >>> from litm.retrieve._index import Index
    >>> import tempfile
    >>> index = Index.create(tempfile.mkdtemp() + "/i")
    >>> _ = index.add_texts(["The Eiffel Tower stands in Paris.", "Photosynthesis happens in leaves."])
    >>> Dense(index).search("Which city has the Eiffel Tower?", k=1)[0].doc.text
    'The Eiffel Tower stands in Paris.'
"""

from __future__ import annotations

from litm.retrieve._embedder import Embedder
from litm.retrieve._hits import Hit, check_k, check_query
from litm.retrieve._index import Index
from litm.retrieve._vectors import VectorSearch, vector_search

__all__ = ["Dense"]


class Dense:
    """Cosine similarity of unit vectors (higher is better). ``backend``: ``numpy`` (exact, default) or ``faiss``.

    ``embedder`` defaults to the index's own model; another one must carry the name the index recorded.
    """

    name = "dense"

    def __init__(self, index: Index, *, backend: str = "numpy", embedder: Embedder | None = None) -> None:
        self.index = index
        self.backend = backend
        self._embedder = embedder
        self._search: VectorSearch | None = None
        self._generation = -1
        vector_search(index.vectors[:0], backend)  # fail now on a bad backend or an index without vectors

    @property
    def embedder(self) -> Embedder:
        """The query embedder (the index's model unless one was given)."""
        return self._embedder if self._embedder is not None else self.index.embedder

    def prepare(self) -> VectorSearch:
        """Load the vectors and the search structure now (otherwise on the first search, and after changes)."""
        if self._search is None or self._generation != self.index.generation:
            self._search, self._generation = vector_search(self.index.vectors, self.backend), self.index.generation
        return self._search

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` chunks whose vectors are closest to the query's."""
        check_k(k)
        check_query(query)
        vectors = self.prepare()
        if not len(self.index):
            return []
        scores, rows = vectors.search(self.embedder.embed([query])[0], k)
        chunks = self.index.chunks
        return [
            Hit(chunks[int(r)], float(s), True, rank, self.name)
            for rank, (s, r) in enumerate(zip(scores, rows, strict=True), start=1)
        ]
