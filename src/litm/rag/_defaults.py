"""The defaults of the RAG pipeline, defined once: :class:`~litm.rag.Pipeline`, ``litm rag`` and ``litm demo``
read them from here, so Python and the command line answer the same question the same way.

Example:
    >>> DEFAULT_STRATEGY, DEFAULT_MODEL, DEFAULT_K, DEFAULT_RETRIEVER, DEFAULT_ANSWER_TOKENS
    ('auto', 'local', 10, 'auto', 64)
"""

from __future__ import annotations

from litm.placement._registry import DEFAULT_STRATEGY

__all__ = ["BASE_MODEL_STOP", "DEFAULT_ANSWER_TOKENS", "DEFAULT_K", "DEFAULT_MODEL", "DEFAULT_RETRIEVER",
           "DEFAULT_STRATEGY"]  # fmt: skip

#: The embedded offline model (Gemma 3 270M base, llama.cpp): nothing leaves the machine.
DEFAULT_MODEL = "local"
#: Chunks retrieved per question: the benchmark's k, where the committed position profile was measured.
DEFAULT_K = 10
#: ``hybrid`` on an index with vectors, ``bm25`` on one without (see :mod:`litm.retrieve._retrievers`).
DEFAULT_RETRIEVER = "auto"
#: The answer's token limit, reserved from the input budget so the answer always has room.
DEFAULT_ANSWER_TOKENS = 64
#: Where a base (completion) model stops, besides the prompt's own question label on a new line: without a
#: stop it runs on into invented questions. Its answer is the first non-empty line, the line the benchmark
#: scores (a base model sometimes starts with a newline, so stopping at the first one would lose the answer).
BASE_MODEL_STOP = ("\n\n",)
