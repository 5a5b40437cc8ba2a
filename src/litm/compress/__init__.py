"""Compress the context for the question: keep the sentences that answer it, within a token budget.

Moving documents only addresses the dead zone; the distractors around the answer cost as much (see the
README's results). :func:`compress` scores documents and sentences against the question (MiniLM similarity,
a small local LM's question-conditioned log-probabilities, or the retriever's own score), drops what cannot
matter, keeps each document's best sentences in reading order under a per-document share of the budget that
follows its rank, and counts everything with the target model's tokenizer. Every kept span maps back to
its original character offsets, so citations still point into the source (:func:`original_offset` maps an
offset in a compressed text back).

The less common settings travel as one validated :class:`CompressOptions`; :class:`Compressor` is the same call
as a reusable component. A :class:`Scorer` is the protocol to score with your own model (the built-in ones are
named: ``"embed"``, ``"lm"``, ``"retriever"``); a :class:`ScoreCache` with a path keeps the scores across runs.
:class:`Compressed` is what comes back: each document's kept spans (``docs``, ``kept``, ``kept_docs``), the
budget and the token counts before and after.

Example:
    >>> from litm.compress import compress
    >>> docs = ["Ada Lovelace wrote the first program. She was born in 1815. Her father was Byron.",
    ...         "Charles Babbage designed the Analytical Engine. He was born in London."]
    >>> out = compress(docs, "When was Ada Lovelace born?", tokenizer="openai:gpt-4o", ratio=2, scorer="embed")
    >>> "1815" in " ".join(d.text for d in out.kept_docs), out.tokens <= out.budget
    (True, True)
"""

from litm.compress._compress import CompressOptions, Compressor, compress
from litm.compress._result import Compressed, original_offset
from litm.compress._scorers import ScoreCache, Scorer
from litm.errors import CompressionError

__all__ = [
    "CompressOptions",
    "Compressed",
    "CompressionError",
    "Compressor",
    "ScoreCache",
    "Scorer",
    "compress",
    "original_offset",
]
