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
    ('a', 'c', 'd', 'b')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from litm.errors import InvalidDocumentError, InvalidStrategyError
from litm.placement.plan import PlacementPlan, SlotInfo
from litm.placement.profile import PositionProfile
from litm.placement.ranking import Dedup, RankBy, check_count, rank_indices

__all__ = ["DEFAULT_MIN_DOCS", "Strategy"]

DEFAULT_MIN_DOCS = 4


class Strategy:
    """A placement strategy: decides which rank goes to which slot.

    Subclasses implement :meth:`arrange` (for ``n`` documents, the 0-based rank index placed in each
    slot) and :meth:`why` (a one-line reason for one placement). ``implied_profile`` is the position
    profile the strategy assumes; plans report slot weights from it unless a measured profile is given.
    ``min_docs`` is the strategy's own threshold, used when the caller passes none: below it the rank
    order is kept, since reordering one to three documents does nothing useful.
    Calling a strategy object places documents: ``Edges()(docs)`` equals ``place(docs, "edges")``.
    """

    name: ClassVar[str] = ""
    min_docs: ClassVar[int] = DEFAULT_MIN_DOCS

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
        min_docs: int | None = None,
        profile: PositionProfile | None = None,
    ) -> PlacementPlan:
        """Rank ``items`` and place them by this strategy (see :func:`litm.placement.place`)."""
        threshold = self.min_docs if min_docs is None else check_count("min_docs", min_docs)
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable) or isinstance(items, Mapping):
            raise InvalidDocumentError(f"expected a list of documents, got {type(items).__name__}")
        items = list(items)
        ranks = rank_indices(items, rank_by=rank_by, higher_is_better=higher_is_better, dedup=dedup, top_k=top_k)
        kept, docs, relevance = ranks.kept, ranks.docs, ranks.relevance
        n = len(kept)
        weights = (profile or self.implied_profile).slot_weights(n)

        note: str | None = None
        if n < threshold:
            # Too few documents for reordering to help: keep the rank order (the retriever's, or the scores').
            note = f"{n} document(s) is below min_docs={threshold}: rank order kept"
            order = list(range(n))
            reasons = ["rank order kept (below min_docs)"] * n
        else:
            order = self.arrange(n)
            # Equal as numbers is not enough: 1.0 == 1, but a float cannot index the ranking.
            if sorted(order) != list(range(n)) or not all(type(r) is int for r in order):
                raise InvalidStrategyError(f"strategy {self!r} returned {order!r}, not a permutation of range({n})")
            reasons = [self.why(r + 1, s + 1, n) for s, r in enumerate(order)]
        # order[s] is the 0-based rank in slot s; kept[r] that rank's input index.
        slots = tuple(
            SlotInfo(s + 1, r + 1, kept[r], docs[kept[r]], weights[s], reasons[s], relevance[r])
            for s, r in enumerate(order)
        )
        return PlacementPlan(
            strategy=self.name or type(self).__name__,
            slots=slots,
            items=tuple(items[kept[r]] for r in order),
            dropped=ranks.dropped,
            note=note,
            profile_name=(profile or self.implied_profile).name,
        )
