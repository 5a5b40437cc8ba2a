"""Nearest-neighbour search over an index's unit vectors: exact numpy by default, FAISS when installed.

Both backends score by inner product, which for the index's L2-normalised vectors is cosine similarity,
so a higher score is always better (no distance ever reaches a hit). Both are exact: FAISS's flat index
exists here for speed on large indexes (its BLAS kernels and threads), not to trade accuracy.

Example:
    >>> import numpy as np
    >>> m = np.eye(3, dtype=np.float32)
    >>> scores, rows = vector_search(m, "numpy").search(np.array([0.1, 0.9, 0.0], np.float32), 2)
    >>> rows.tolist(), [round(float(s), 2) for s in scores]
    ([1, 0], [0.9, 0.1])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from litm.errors import RetrievalError
from litm.retrieve._deps import FAISS_INSTALL, LazyModule, require

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy", "vector search")

__all__ = ["BACKENDS", "ExactVectors", "FaissVectors", "VectorSearch", "top_k", "vector_search"]

BACKENDS = ("numpy", "faiss")


class VectorSearch(Protocol):
    """The ``k`` rows most similar to a query vector: ``(scores, rows)``, best first."""

    def search(self, query: NDArray[np.float32], k: int) -> tuple[NDArray[np.float32], NDArray[np.int64]]: ...


def top_k(scores: NDArray[np.float32], k: int) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """The ``k`` highest of ``scores`` and their positions, best first; ties go to the lower position.

    >>> import numpy as np
    >>> top_k(np.array([0.5, 0.9, 0.5, 0.1], np.float32), 3)[1].tolist()
    [1, 0, 2]
    """
    n = int(scores.shape[0])
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, np.float32), np.zeros(0, np.int64)
    # argpartition finds the top k in O(n); a tie at the cut could drop a lower position, so take the cut's
    # whole tie group before the exact, position-stable sort.
    if k < n:
        part = np.argpartition(-scores, k - 1)[:k]
        cut = scores[part].min()
        part = np.flatnonzero(scores >= cut)
    else:
        part = np.arange(n)
    order = np.lexsort((part, -scores[part]))[:k]
    rows = part[order].astype(np.int64)
    return scores[rows].astype(np.float32), rows


class ExactVectors:
    """Brute-force inner product with numpy: exact, no extra dependency, fast to about a million chunks."""

    def __init__(self, matrix: NDArray[np.float32]) -> None:
        self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)

    def search(self, query: NDArray[np.float32], k: int) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        return top_k(self._matrix @ query.astype(np.float32), k)


class FaissVectors:
    """FAISS's exact inner-product index (``IndexFlatIP``); needs ``faiss-cpu`` (the ``faiss`` extra)."""

    def __init__(self, matrix: NDArray[np.float32]) -> None:
        faiss = require("faiss", "the FAISS vector backend", FAISS_INSTALL)
        data = np.ascontiguousarray(matrix, dtype=np.float32)
        self._index = faiss.IndexFlatIP(int(data.shape[1]))
        self._index.add(data)
        self._n = int(data.shape[0])

    def search(self, query: NDArray[np.float32], k: int) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        k = min(k, self._n)
        if k <= 0:
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        scores, rows = self._index.search(np.ascontiguousarray(query[None, :], dtype=np.float32), k)
        keep = rows[0] >= 0  # FAISS pads with -1 when it has fewer than k rows
        return scores[0][keep].astype(np.float32), rows[0][keep].astype(np.int64)


def vector_search(matrix: NDArray[np.float32], backend: str = "numpy") -> VectorSearch:
    """A search structure over ``matrix`` (rows are unit vectors) for ``backend`` (``numpy`` or ``faiss``)."""
    if backend == "numpy":
        return ExactVectors(matrix)
    if backend == "faiss":
        return FaissVectors(matrix)
    raise RetrievalError(f"unknown vector backend {backend!r}; choose from {', '.join(BACKENDS)}")
