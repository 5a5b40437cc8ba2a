"""Compress the context for the question: keep the sentences that answer it, within a token budget.

Moving documents only addresses the dead zone; the distractors around the answer cost as much (see the
README's results). :func:`compress` scores documents and sentences against the question (MiniLM similarity,
a small local LM's question-conditioned log-probabilities, or the retriever's own score), drops what cannot
matter, keeps each document's best sentences in reading order under a per-document share of the budget that
follows its rank, and counts everything with the target model's tokenizer. Every kept span maps back to
its original character offsets, so citations still point into the source.

Example:
    >>> from litm.compress import compress
    >>> docs = ["Ada Lovelace wrote the first program. She was born in 1815. Her father was Byron.",
    ...         "Charles Babbage designed the Analytical Engine. He was born in London."]
    >>> out = compress(docs, "When was Ada Lovelace born?", tokenizer="openai:gpt-4o", ratio=2, scorer="embed")
    >>> "1815" in " ".join(d.text for d in out.kept_docs), out.tokens <= out.budget
    (True, True)
"""

from litm.compress._compress import UNITS, Compressor, TargetCounter, compress, parse_target
from litm.compress._records import compress_records
from litm.compress._result import Compressed, CompressedDoc, original_offset
from litm.compress._scorers import SCORERS, EmbedScorer, LMScorer, RetrieverScorer, ScoreCache, Scorer, get_scorer
from litm.compress._select import rank_budgets, select
from litm.compress._terms import rare_terms
from litm.errors import CompressionError

__all__ = [
    "SCORERS",
    "UNITS",
    "Compressed",
    "CompressedDoc",
    "CompressionError",
    "Compressor",
    "EmbedScorer",
    "LMScorer",
    "RetrieverScorer",
    "ScoreCache",
    "Scorer",
    "TargetCounter",
    "compress",
    "compress_records",
    "get_scorer",
    "original_offset",
    "parse_target",
    "rank_budgets",
    "rare_terms",
    "select",
]
