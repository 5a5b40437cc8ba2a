"""The :class:`Strategy` base class: how a placement strategy maps ranks to slots, and how it is applied.

A strategy only decides an order (:meth:`Strategy.arrange`) and explains it (:meth:`Strategy.why`);
:meth:`Strategy.place` does the rest for every strategy alike: rank the caller's items, arrange them,
and build the :class:`~litm.placement.plan.PlacementPlan`. Keeping the algorithm on the base class means
a custom strategy gets exactly the ranking, validation and plan rules of the built-in ones.

Example:
    >>> class FirstLast(Strategy):
    ...     name = "first-last"
    ...     def arrange(self, n):
    ...         return [0, *range(2, n), 1] if n > 1 else list(range(n))
    >>> FirstLast()(["a", "b", "c", "d"]).items
    ['a', 'c', 'd', 'b']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from litm.errors import LitmError
from litm.placement.plan import PlacementPlan, SlotInfo
from litm.placement.profile import PositionProfile
from litm.placement.ranking import Dedup, RankBy, rank

__all__ = ["DEFAULT_MIN_DOCS", "Strategy"]

DEFAULT_MIN_DOCS = 4


class Strategy:
    """A placement strategy: decides which rank goes to which slot.

    Subclasses implement :meth:`arrange` (for ``n`` documents, the 0-based rank index placed in each
    slot) and :meth:`why` (a one-line reason for one placement). ``implied_profile`` is the position
    profile the strategy assumes; plans report slot weights from it unless a measured profile is given.
    Calling a strategy object places documents: ``Edges()(docs)`` equals ``place(docs, "edges")``.
    """

    name: ClassVar[str] = ""

    @property
    def implied_profile(self) -> PositionProfile:
        return PositionProfile.pyramid()

    def arrange(self, n: int) -> list[int]:
        raise NotImplementedError

    def why(self, rank: int, slot: int, n: int) -> str:
        return f"rank {rank} -> slot {slot}"

    def __call__(self, items: Sequence[Any], **kwargs: Any) -> PlacementPlan:
        return self.place(items, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def place(
        self,
        items: Sequence[Any],
        *,
        rank_by: RankBy = "input",
        higher_is_better: bool = True,
        dedup: Dedup | None = None,
        top_k: int | None = None,
        min_docs: int = DEFAULT_MIN_DOCS,
        profile: PositionProfile | None = None,
    ) -> PlacementPlan:
        """Rank ``items`` and place them by this strategy (see :func:`litm.placement.place`)."""
        if isinstance(min_docs, bool) or not isinstance(min_docs, int) or min_docs < 0:
            raise LitmError(f"min_docs must be a non-negative integer, got {min_docs!r}")
        ranking = rank(list(items), rank_by=rank_by, higher_is_better=higher_is_better, dedup=dedup, top_k=top_k)
        ranked = ranking.ranked
        n = len(ranked)
        weights = (profile or self.implied_profile).slot_weights(n)

        note: str | None = None
        if n < min_docs:
            # Too few documents for reordering to help: keep the caller's order (input order, not rank).
            note = f"{n} document(s) is below min_docs={min_docs}: input order kept"
            by_input = sorted(ranked, key=lambda r: r.input_index)
            slots = tuple(
                SlotInfo(s + 1, r.rank, r.input_index, r.doc, weights[s], "input order kept (below min_docs)")
                for s, r in enumerate(by_input)
            )
            order = by_input
        else:
            arrangement = self.arrange(n)
            if sorted(arrangement) != list(range(n)):
                raise LitmError(f"strategy {self!r} returned {arrangement!r}, not a permutation of range({n})")
            order = [ranked[i] for i in arrangement]
            slots = tuple(
                SlotInfo(s + 1, r.rank, r.input_index, r.doc, weights[s], self.why(r.rank, s + 1, n))
                for s, r in enumerate(order)
            )
        return PlacementPlan(
            strategy=self.name or type(self).__name__,
            slots=slots,
            items=tuple(r.item for r in order),
            dropped=ranking.dropped,
            note=note,
            profile_name=(profile or self.implied_profile).name,
        )
