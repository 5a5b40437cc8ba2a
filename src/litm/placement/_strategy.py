"""The :class:`Strategy` base class: how a placement strategy maps ranks to slots.

A strategy only decides an order (:meth:`Strategy.arrange`) and explains it (:meth:`Strategy.why`);
:func:`~litm.placement.place` does the rest for every strategy alike: rank the caller's items, arrange them,
and build the :class:`~litm.placement.PlacementPlan`. Keeping the algorithm out of the strategies means
a custom strategy gets exactly the ranking, validation and plan rules of the built-in ones.

Example:
    >>> from litm.placement import place
    >>> class FirstLast(Strategy):
    ...     name = "first-last"
    ...     def arrange(self, n):
    ...         return [0, *range(2, n), 1] if n > 1 else list(range(n))
    >>> place(["a", "b", "c", "d"], FirstLast()).items
    ('a', 'c', 'd', 'b')
"""

from __future__ import annotations

from typing import ClassVar

from litm.errors import InvalidStrategyError
from litm.placement._profile import PositionProfile

__all__ = ["DEFAULT_MIN_DOCS", "Strategy"]

DEFAULT_MIN_DOCS = 4
# Orders kept per strategy (by n); a program places lists of few sizes.
_MAX_CACHED_ORDERS = 1024


class Strategy:
    """A placement strategy: decides which rank goes to which slot.

    Subclasses implement :meth:`arrange` (for ``n`` documents, the 0-based rank index placed in each
    slot) and :meth:`why` (a one-line reason for one placement). ``implied_profile`` is the position
    profile the strategy assumes; plans report slot weights from it unless a measured profile is given.
    ``min_docs`` is the strategy's own threshold, used when the caller passes none: below it the rank
    order is kept, since reordering one to three documents does nothing useful.
    ``place(docs, MyStrategy())`` places by one; :func:`~litm.placement.register_strategy` makes it a name.
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

    def plan_note(self) -> str | None:
        """A remark every plan of this strategy carries as its ``note`` (``auto`` states its rule); None: none."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _order_cache(self) -> dict[int, tuple[int, ...]] | None:
        """Where this strategy's validated orders are kept by ``n``, when ``arrange`` depends on ``n`` (and
        the strategy's own settings) alone; None (the default, and for every subclass that does not say
        otherwise) checks what ``arrange`` returns on every call."""
        return None

    def _arranged(self, n: int) -> tuple[int, ...]:
        cache = self._order_cache()
        if cache is not None:
            order = cache.get(n)
            if order is not None:
                return order
        arranged = self.arrange(n)
        # Equal as numbers is not enough: 1.0 == 1, but a float cannot index the ranking.
        if sorted(arranged) != list(range(n)) or not all(type(r) is int for r in arranged):
            raise InvalidStrategyError(f"strategy {self!r} returned {arranged!r}, not a permutation of range({n})")
        order = tuple(arranged)
        if cache is not None and len(cache) < _MAX_CACHED_ORDERS:
            cache[n] = order
        return order
