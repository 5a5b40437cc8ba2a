"""Permutation self-consistency: ask with the documents in several orders and keep the majority answer.

A model's answer depends on where the relevant document sits (lost in the middle). Tang et al. (2023, arXiv
2310.07712) shuffle the context over several calls and aggregate the answers, which averages the position bias
out instead of betting on one order. :func:`psc` does that for a question over documents: ``calls`` seeded
orders (the first is the order given), one prompt each from the same :class:`~litm.prompt.PromptBuilder`, the
answers aggregated by normalised majority with ties to the earliest call, the calls concurrent on remote models.
The cost is reported in calls and tokens (:class:`PscAnswer`). :func:`ask` does it for a RAG
:class:`~litm.rag.Pipeline` (``litm rag --psc M``). The parts are public too: :func:`permutations` (the orders)
and :func:`vote` (the aggregation). Guide: ``docs/consistency.md``.

Example:
    >>> permutations(3, 3, seed=0)
    ((0, 1, 2), (0, 2, 1), (2, 1, 0))
    >>> vote(["The Eiffel Tower", "eiffel tower.", "Louvre"]).votes
    {'eiffel tower': 2, 'louvre': 1}
"""

from litm.consistency._permute import DEFAULT_CALLS, MAX_CALLS, check_calls, permutations
from litm.consistency._psc import DEFAULT_BUILDER, psc
from litm.consistency._rag import ask, uncited
from litm.consistency._result import PscAnswer, PscCall
from litm.consistency._vote import Vote, vote

__all__ = [
    "DEFAULT_BUILDER",
    "DEFAULT_CALLS",
    "MAX_CALLS",
    "PscAnswer",
    "PscCall",
    "Vote",
    "ask",
    "check_calls",
    "permutations",
    "psc",
    "uncited",
    "vote",
]
