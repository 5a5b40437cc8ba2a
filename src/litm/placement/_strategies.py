"""The built-in placement strategies: each maps ranks (best first) to slots.

========== ====================================================== ==========================
name       order for ranks 1..6 (7)                               idea
========== ====================================================== ==========================
none       1 2 3 4 5 6 (7)                                        trust rank order
reverse    6 5 4 3 2 1 (7 ... 1)                                  best last, next to question
edges      1 3 5 6 4 2 (1 3 5 7 6 4 2)                            best first, 2nd best last
pyramid    2 4 6 5 3 1 (2 4 6 7 5 3 1)                            best last, 2nd best first
langchain  2 4 6 5 3 1 (1 3 5 7 6 4 2)                            LongContextReorder parity
profile    from a measured :class:`~litm.placement.PositionProfile`  best rank -> best slot
random     a seeded shuffle                                       control for benchmarks
========== ====================================================== ==========================

Example:
    >>> Edges().arrange(6), Pyramid().arrange(6)
    ([0, 2, 4, 5, 3, 1], [1, 3, 5, 4, 2, 0])
"""

from __future__ import annotations

import random as _random

from litm.errors import InvalidOptionTypeError
from litm.placement._profile import PositionProfile
from litm.placement._strategy import Strategy

__all__ = ["Edges", "LangChainOrder", "ProfileOrder", "Pyramid", "RandomOrder", "RankOrder", "Reverse"]

# Validated orders of the built-ins, by class and n: their arrange() depends on n alone. A subclass (which
# may override arrange) is not in here, so its orders are checked on every call.
_ORDERS: dict[type, dict[int, tuple[int, ...]]] = {}


class _FixedOrder(Strategy):
    """A built-in whose order depends on ``n`` alone, so it is computed and checked once per ``n``."""

    def _order_cache(self) -> dict[int, tuple[int, ...]] | None:
        kind = type(self)
        return _ORDERS.setdefault(kind, {}) if kind in _FIXED else None


class RankOrder(_FixedOrder):
    """Rank order, best first (``none``): what the retriever returned."""

    name = "none"

    @property
    def implied_profile(self) -> PositionProfile:
        return PositionProfile.primacy()

    def arrange(self, n: int) -> list[int]:
        return list(range(n))

    def why(self, rank: int, slot: int, n: int) -> str:
        return "kept in rank order"


class Reverse(_FixedOrder):
    """Reverse rank order, best last (``reverse``), right before the question."""

    name = "reverse"

    @property
    def implied_profile(self) -> PositionProfile:
        return PositionProfile.recency()

    def arrange(self, n: int) -> list[int]:
        return list(range(n - 1, -1, -1))

    def why(self, rank: int, slot: int, n: int) -> str:
        return "best last, next to the question" if rank == 1 else "reverse rank order"


class Edges(_FixedOrder):
    """Odd-even edge order: rank 1 first, rank 2 last, the weakest in the middle, for every ``n``."""

    name = "edges"

    @property
    def implied_profile(self) -> PositionProfile:
        return PositionProfile.edges()

    def arrange(self, n: int) -> list[int]:
        return list(range(0, n, 2)) + list(range(n - 1 - (n % 2 == 1), 0, -2))

    def why(self, rank: int, slot: int, n: int) -> str:
        if rank == 1:
            return "best document first"
        if rank == 2:
            return "second-best last"
        if rank == n:
            return "weakest, in the middle"
        return "odd rank, filled from the start" if rank % 2 else "even rank, filled from the end"


class Pyramid(_FixedOrder):
    """Bi-directional inverted pyramid: rank 1 last (next to the question), rank 2 first."""

    name = "pyramid"

    def arrange(self, n: int) -> list[int]:
        return Edges().arrange(n)[::-1]

    def why(self, rank: int, slot: int, n: int) -> str:
        if rank == 1:
            return "best document last, next to the question"
        if rank == 2:
            return "second-best first"
        if rank == n:
            return "weakest, in the middle"
        return "odd rank, filled from the end inward" if rank % 2 else "even rank, filled from the start inward"


class LangChainOrder(_FixedOrder):
    """Exactly LangChain's ``LongContextReorder``: pyramid for even ``n``, edges for odd, for every ``n``.

    Kept for users migrating, who need identical prompts; note its rank 1 flips ends with parity. It has
    no ``min_docs`` threshold (``LongContextReorder`` has none, so 2 and 3 documents are reordered too),
    unless the caller passes one. LlamaIndex's ``LongContextReorder`` gives the same order when it is fed
    the same ranking: ``rank_by="score"`` with distinct scores (it sorts by score itself; litm breaks
    ties by input order and refuses a missing score, where LlamaIndex counts it as 0).
    """

    name = "langchain"
    min_docs = 0

    def arrange(self, n: int) -> list[int]:
        return Pyramid().arrange(n) if n % 2 == 0 else Edges().arrange(n)

    def why(self, rank: int, slot: int, n: int) -> str:
        side = "pyramid" if n % 2 == 0 else "edges"
        return f"LongContextReorder order (n={n} is {'even' if n % 2 == 0 else 'odd'}: same as {side})"


class ProfileOrder(Strategy):
    """Best rank to the highest-weight slot of a position profile, the next rank to the next slot.

    For any value that falls with rank this maximises ``sum(weight x value)`` (rearrangement
    inequality). Equal weights go to the slot nearer the question unless the profile's ``tie_break``
    says ``"start"``.
    """

    name = "profile"

    def __init__(self, profile: PositionProfile | None = None) -> None:
        if profile is not None and not isinstance(profile, PositionProfile):
            raise InvalidOptionTypeError(f"profile must be a PositionProfile, got {type(profile).__name__}")
        self.profile = profile if profile is not None else PositionProfile.pyramid()

    @property
    def implied_profile(self) -> PositionProfile:
        return self.profile

    def arrange(self, n: int) -> list[int]:
        order = [0] * n
        for r, slot in enumerate(self.profile.slot_preference(n)):
            order[slot] = r
        return order

    def _order_cache(self) -> dict[int, tuple[int, ...]] | None:
        # Kept on the profile (a frozen value), so a profile reused across calls orders each n once.
        return self.profile.cache("profile-order") if type(self) is ProfileOrder else None

    def why(self, rank: int, slot: int, n: int) -> str:
        label = self.profile.name or "measured"
        return f"{_ordinal(rank)}-highest weight slot in the {label} profile"

    def __repr__(self) -> str:
        return f"ProfileOrder(profile={self.profile.name or 'custom'!r})"


class RandomOrder(Strategy):
    """A seeded shuffle: the control a benchmark compares placements against."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    @property
    def implied_profile(self) -> PositionProfile:
        return PositionProfile.from_weights([1.0], name="uniform")

    def arrange(self, n: int) -> list[int]:
        order = list(range(n))
        _random.Random(self.seed).shuffle(order)
        return order

    def _order_cache(self) -> dict[int, tuple[int, ...]] | None:
        if type(self) is not RandomOrder or type(self.seed) is not int:
            return None
        return _RANDOM.setdefault(self.seed, {}) if len(_RANDOM) < 256 or self.seed in _RANDOM else None

    def why(self, rank: int, slot: int, n: int) -> str:
        return f"random shuffle (seed {self.seed})"

    def __repr__(self) -> str:
        return f"RandomOrder(seed={self.seed})"


_FIXED = frozenset((RankOrder, Reverse, Edges, Pyramid, LangChainOrder))
_RANDOM: dict[int, dict[int, tuple[int, ...]]] = {}


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


