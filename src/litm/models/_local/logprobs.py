"""Teacher-forced log-probabilities on a loaded llama.cpp model: one batch over the continuation tokens.

The context must already hold the prompt's KV cache for positions ``[0, P)``. Position ``P - 1`` is dropped
and evaluated again together with all but the last continuation token, asking llama.cpp for the logits of
every token of that batch (``logits_all`` only for this batch: keeping a whole context's logits would cost
``n_ctx x n_vocab`` floats, 2 GB for Gemma's 262k vocabulary). Row ``i`` of those logits predicts
continuation token ``i``.

>>> log_softmax_at([[0.0, 0.0]], [1])
[-0.6931471805599453]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and llama-cpp-python come with the optional ``local`` extra
    import numpy as np
    from llama_cpp import Llama
    from numpy.typing import ArrayLike, NDArray

__all__ = ["log_softmax_at", "next_token_top", "teacher_forced"]


def log_softmax_at(rows: ArrayLike, targets: Sequence[int]) -> list[float]:
    """``log softmax(rows[i])[targets[i]]`` for each row, computed in float64 (stable: max subtracted)."""
    import numpy as np

    if not len(targets):
        return []
    logprobs = _log_softmax(rows)
    return [float(v) for v in logprobs[np.arange(len(targets)), np.asarray(targets, dtype=np.int64)]]


def _log_softmax(rows: ArrayLike) -> NDArray[np.float64]:
    """Row-wise ``log softmax`` in float64, the maximum subtracted first for stability."""
    import numpy as np

    logits = np.asarray(rows, dtype=np.float64)
    top = logits.max(axis=1, keepdims=True)
    out: NDArray[np.float64] = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    return out


def _logit_rows(llm: Llama, chunk: Sequence[int], n_past: int) -> NDArray[np.float32]:
    """Evaluate ``chunk`` at positions ``n_past...`` and return its logits, one row per token."""
    import numpy as np

    n_vocab = int(llm.n_vocab())
    llm._batch.set_batch(batch=chunk, n_past=n_past, logits_all=True)
    llm._ctx.decode(llm._batch)
    logits = llm._ctx.get_logits()  # type: ignore[no-untyped-call]  # llama-cpp-python leaves it unannotated
    flat = np.ctypeslib.as_array(logits, shape=(len(chunk) * n_vocab,))
    rows: NDArray[np.float32] = flat.reshape(len(chunk), n_vocab)
    return rows


def _rewind_last(llm: Llama, prompt: Sequence[int]) -> int:
    start = len(prompt) - 1
    llm._ctx.kv_cache_seq_rm(-1, start, -1)
    llm.n_tokens = start
    return start


def teacher_forced(llm: Llama, prompt: Sequence[int], continuation: Sequence[int]) -> list[float]:
    """Log-probabilities of ``continuation`` after ``prompt``, whose KV cache ``llm`` holds (caller has the lock).

    Leaves ``llm.n_tokens`` at ``len(prompt) - 1``: the cache beyond that point holds this evaluation.
    """
    start = _rewind_last(llm, prompt)
    feed = [prompt[-1], *continuation[:-1]]
    step = int(llm.n_batch)
    out: list[float] = []
    for i in range(0, len(feed), step):
        chunk = feed[i : i + step]
        out += log_softmax_at(_logit_rows(llm, chunk, start + i), continuation[i : i + len(chunk)])
    if not all(math.isfinite(v) for v in out):
        raise ValueError("llama.cpp returned non-finite logits")
    return out


def next_token_top(llm: Llama, prompt: Sequence[int], n: int) -> list[tuple[int, float]]:
    """The ``n`` likeliest next tokens after ``prompt`` (whose KV cache ``llm`` holds) and their log-probabilities,
    likeliest first. Leaves ``llm.n_tokens`` at ``len(prompt) - 1``, as :func:`teacher_forced` does."""
    import numpy as np

    start = _rewind_last(llm, prompt)
    logprobs = _log_softmax(_logit_rows(llm, [prompt[-1]], start))[0]
    if not np.isfinite(logprobs).all():
        raise ValueError("llama.cpp returned non-finite logits")
    best = np.argsort(-logprobs, kind="stable")[:n]
    return [(int(i), float(logprobs[i])) for i in best]
