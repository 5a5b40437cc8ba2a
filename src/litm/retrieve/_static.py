"""A static sentence embedder: all-MiniLM-L6-v2 reduced to one vector per WordPiece token, no transformer pass.

A text's vector is the sum of its tokens' rows of a bundled table (``data/minilm-static.npz``, built by
``scripts/build_static_minilm.py`` from the pinned ONNX model: each token's output vector, projected on 256
principal components and weighted by smooth inverse frequency), L2-normalised. It reads token identity, not
context, so it ranks worse than :class:`~litm.retrieve._embedder.MiniLM` (on NQ-Open k = 20, the answer stays in
94 of 100 prompts compressed to 1/4, against 100 of 100); it compresses about 35 times faster, and needs only
numpy and the tokenizer (no onnxruntime). The table's SHA-256 is pinned: a changed file is a
:class:`~litm.errors.ModelIntegrityError`.

Example:
    >>> enc = StaticMiniLM()
    >>> vecs = enc.embed(["The cat sat on the mat.", "A cat is sitting on a rug.", "Stock prices fell.", ""])
    >>> vecs.shape
    (4, 256)
    >>> bool(vecs[0] @ vecs[1] > vecs[0] @ vecs[2]), float(vecs[3] @ vecs[3])
    (True, 0.0)
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from litm.errors import ModelNotFoundError
from litm.retrieve._deps import LazyModule
from litm.retrieve._model_files import check_sha256, load_tokenizer

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy", "the static embedder")

__all__ = ["STATIC_SHA256", "StaticMiniLM"]

STATIC_FILE = Path(__file__).resolve().parent / "data" / "minilm-static.npz"
STATIC_SHA256 = "5a62a9679c91ed8747dfca2aa2396bb7c5108303597f8d575594e5431e9dca45"


class StaticMiniLM:
    """all-MiniLM-L6-v2 as a table of 30,522 token vectors (256 dimensions); see the module docstring.

    ``path`` replaces the bundled table; either way its SHA-256 must match the pinned one.
    """

    name = "all-MiniLM-L6-v2-static256-int8"
    dim = 256

    def __init__(self, path: str | Path | None = None) -> None:
        file = Path(path) if path is not None else STATIC_FILE
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise ModelNotFoundError(f"static embedding table {file}: cannot read it ({exc.strerror})") from None
        check_sha256(data, STATIC_SHA256, label=f"static embedding table {file}",
                     hint="rebuild it with scripts/build_static_minilm.py or reinstall litm")  # fmt: skip
        with np.load(io.BytesIO(data)) as arrays:
            self._table: NDArray[np.float32] = arrays["vectors"].astype(np.float32) * arrays["scales"][:, None]
        self._tok = load_tokenizer()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors of ``texts``, one row each, in input order (an ``(n, 256)`` float32 array); a text with
        no token gets the zero vector."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        filled = np.flatnonzero(lengths)
        if filled.size == 0:
            return out
        ids = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int64, count=int(lengths.sum()))
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
        sums = np.add.reduceat(self._table[ids], starts, axis=0)
        norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        out[filled] = sums / norms
        return out

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """The unit vector of one text."""
        row: NDArray[np.float32] = self.embed([text])[0]
        return row
