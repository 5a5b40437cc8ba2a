"""``place()``: rank the caller's items and put them where the model looks.

Example:
    >>> place(["d1", "d2", "d3", "d4", "d5", "d6"]).items    # DEFAULT_STRATEGY: auto, no profile: edges
    ('d1', 'd3', 'd5', 'd6', 'd4', 'd2')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from litm.placement._plan import PlacementPlan
from litm.placement._profile import PositionProfile
from litm.placement._ranking import Dedup, RankBy
from litm.placement._registry import DEFAULT_STRATEGY, get_strategy
from litm.placement._strategy import Strategy

__all__ = ["place"]


def place(
    items: Sequence[Any],
    strategy: str | Strategy = DEFAULT_STRATEGY,
    *,
    rank_by: RankBy = "input",
    higher_is_better: bool = True,
    dedup: Dedup | None = None,
    top_k: int | None = None,
    min_docs: int | None = None,
    profile: PositionProfile | None = None,
    model: str | None = None,
) -> PlacementPlan:
    """Rank ``items`` and place them by ``strategy``; the input list is never mutated.

    ``items`` may be strings, dicts, :class:`~litm.placement._documents.Doc` values, LangChain / LlamaIndex /
    Haystack documents or ``(document, score)`` pairs; ``plan.items`` hands the same objects back in the
    new order, as a tuple. The default strategy is :data:`~litm.placement.DEFAULT_STRATEGY` (``auto``: the
    measured ``profile`` when given, else the profile registered for ``model``, a model spec, else ``edges``;
    the plan's ``note`` says which).
    Below ``min_docs`` documents (default: the strategy's own, 4 for the built-ins, none for
    ``langchain``) the rank order is kept: the given order under ``rank_by="input"``, the score order
    under ``rank_by="score"``; the plan says so. ``profile`` drives the ``profile`` strategy and, for any
    strategy, the slot weights the plan reports.

    Example:
        >>> place(["a", "b", "c", "d", "e"], "edges").items
        ('a', 'c', 'e', 'd', 'b')
        >>> place(["a", "b", "c", "d"], profile=PositionProfile.recency()).items   # auto, measured: best last
        ('d', 'c', 'b', 'a')
        >>> place([{"text": "a", "score": 0.1}, {"text": "b", "score": 0.9}], rank_by="score").note
        '2 document(s) is below min_docs=4: rank order kept'
    """
    return get_strategy(strategy, profile=profile, model=model).place(
        items,
        rank_by=rank_by,
        higher_is_better=higher_is_better,
        dedup=dedup,
        top_k=top_k,
        min_docs=min_docs,
        profile=profile,
    )
