"""Permutation self-consistency: ask with the documents in several orders and keep the majority answer.

A model's answer depends on where the relevant document sits (lost in the middle). Tang et al. (2023, arXiv
2310.07712) shuffle the context over several calls and aggregate the answers, which averages the position bias
out instead of betting on one order. :func:`psc` does that for a question over documents: ``calls`` seeded
orders (the first is the order given), one prompt each from the same :class:`~litm.prompt.PromptBuilder`, the
answers aggregated by normalised majority with ties to the earliest call, the calls concurrent on remote models.
The cost is reported in calls and tokens (:class:`PscAnswer`: every call, the vote, the orders). :func:`ask`
does it for a RAG :class:`~litm.rag.Pipeline` (``litm rag --psc M``). The aggregation is public too: :func:`vote`
over answers you collected yourself. Guide: ``docs/consistency.md``.

Example:
    >>> vote(["The Eiffel Tower", "eiffel tower.", "Louvre"]).votes
    {'eiffel tower': 2, 'louvre': 1}
"""

from litm.consistency._psc import psc
from litm.consistency._rag import ask
from litm.consistency._result import PscAnswer
from litm.consistency._vote import vote

__all__ = ["PscAnswer", "ask", "psc", "vote"]
