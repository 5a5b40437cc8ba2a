"""Placement: put ranked documents where the model looks.

Each strategy maps a ranking (best first) to an order of slots; :func:`place` applies one to the
caller's own objects and returns a :class:`~litm.plan.PlacementPlan` that says what went where and why.

Strategies (by name, or as objects):

========== ====================================================== ==========================
name       order for ranks 1..6 (7)                               idea
========== ====================================================== ==========================
none       1 2 3 4 5 6 (7)                                        trust rank order
reverse    6 5 4 3 2 1 (7 ... 1)                                  best last, next to question
edges      1 3 5 6 4 2 (1 3 5 7 6 4 2)                            best first, 2nd best last
pyramid    2 4 6 5 3 1 (2 4 6 7 5 3 1)                            best last, 2nd best first
langchain  2 4 6 5 3 1 (1 3 5 7 6 4 2)                            LongContextReorder parity
profile    from a measured :class:`~litm.profile.PositionProfile`  best rank -> best slot
random     a seeded shuffle                                       control for benchmarks
========== ====================================================== ==========================

Example:
    >>> plan = place(["d1", "d2", "d3", "d4", "d5", "d6"], strategy="pyramid")
    >>> plan.items
    ['d2', 'd4', 'd6', 'd5', 'd3', 'd1']
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from litm.errors import LitmError, UnknownStrategyError
from litm.plan import PlacementPlan, SlotInfo
from litm.profile import PositionProfile
from litm.ranking import Dedup, RankBy, rank

__all__ = [
    "STRATEGIES",
    "Edges",
    "LangChainOrder",
    "ProfileOrder",
    "Pyramid",
    "RandomOrder",
    "RankOrder",
    "Reverse",
    "Strategy",
    "get_strategy",
    "place",
    "register_strategy",
]

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
        return place(items, strategy=self, **kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RankOrder(Strategy):
    """Rank order, best first (``none``): what the retriever returned."""

    name = "none"

    @property
    def implied_profile(self) -> PositionProfile:
        return PositionProfile.primacy()

    def arrange(self, n: int) -> list[int]:
        return list(range(n))

    def why(self, rank: int, slot: int, n: int) -> str:
        return "kept in rank order"


class Reverse(Strategy):
    """Reverse rank order, best last (``reverse``), right before the question."""

    name = "reverse"

    @property
    def implied_profile(self) -> PositionProfile:
        return PositionProfile.recency()

    def arrange(self, n: int) -> list[int]:
        return list(range(n - 1, -1, -1))

    def why(self, rank: int, slot: int, n: int) -> str:
        return "best last, next to the question" if rank == 1 else "reverse rank order"


class Edges(Strategy):
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


class Pyramid(Strategy):
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


class LangChainOrder(Strategy):
    """Exactly ``LongContextReorder`` (LangChain / LlamaIndex): pyramid for even ``n``, edges for odd.

    Kept for users migrating, who need identical prompts; note its rank 1 flips ends with parity.
    """

    name = "langchain"

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
            raise LitmError(f"profile must be a PositionProfile, got {type(profile).__name__}")
        self.profile = profile if profile is not None else PositionProfile.pyramid()

    @property
    def implied_profile(self) -> PositionProfile:
        return self.profile

    def arrange(self, n: int) -> list[int]:
        order = [0] * n
        for r, slot in enumerate(self.profile.slot_preference(n)):
            order[slot] = r
        return order

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

    def why(self, rank: int, slot: int, n: int) -> str:
        return f"random shuffle (seed {self.seed})"

    def __repr__(self) -> str:
        return f"RandomOrder(seed={self.seed})"


def _ordinal(k: int) -> str:
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


STRATEGIES: dict[str, Callable[..., Strategy]] = {
    "none": RankOrder,
    "reverse": Reverse,
    "edges": Edges,
    "pyramid": Pyramid,
    "langchain": LangChainOrder,
    "profile": ProfileOrder,
    "random": RandomOrder,
}


def register_strategy(name: str, factory: Callable[..., Strategy]) -> None:
    """Make a custom strategy selectable by name (in Python and on the command line)."""
    if not name or not isinstance(name, str):
        raise LitmError("a strategy name must be a non-empty string")
    STRATEGIES[name] = factory


def get_strategy(strategy: str | Strategy, *, profile: PositionProfile | None = None) -> Strategy:
    """Resolve a strategy name (or pass a :class:`Strategy` through). ``profile`` feeds ``profile``."""
    if isinstance(strategy, Strategy):
        return strategy
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise UnknownStrategyError(
            f"unknown placement strategy {strategy!r}; choose from {', '.join(sorted(STRATEGIES))}"
        )
    if strategy == "profile":
        return ProfileOrder(profile)
    return STRATEGIES[strategy]()


def place(
    items: Sequence[Any],
    strategy: str | Strategy = "edges",
    *,
    rank_by: RankBy = "input",
    higher_is_better: bool = True,
    dedup: Dedup | None = None,
    top_k: int | None = None,
    min_docs: int = DEFAULT_MIN_DOCS,
    profile: PositionProfile | None = None,
) -> PlacementPlan:
    """Rank ``items`` and place them by ``strategy``; the input list is never mutated.

    ``items`` may be strings, dicts, :class:`~litm.documents.Doc` values or LangChain / LlamaIndex /
    Haystack documents; ``plan.items`` hands the same objects back in the new order. Below
    ``min_docs`` documents the input order is kept (the plan says so). ``profile`` drives the
    ``profile`` strategy and, for any strategy, the slot weights the plan reports.

    Example:
        >>> place(["a", "b", "c", "d", "e"], "edges").items
        ['a', 'c', 'e', 'd', 'b']
    """
    if isinstance(min_docs, bool) or not isinstance(min_docs, int) or min_docs < 0:
        raise LitmError(f"min_docs must be a non-negative integer, got {min_docs!r}")
    strat = get_strategy(strategy, profile=profile)
    ranking = rank(list(items), rank_by=rank_by, higher_is_better=higher_is_better, dedup=dedup, top_k=top_k)
    ranked = ranking.ranked
    n = len(ranked)
    weights = (profile or strat.implied_profile).slot_weights(n)

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
        arrangement = strat.arrange(n)
        if sorted(arrangement) != list(range(n)):
            raise LitmError(f"strategy {strat!r} returned {arrangement!r}, not a permutation of range({n})")
        order = [ranked[i] for i in arrangement]
        slots = tuple(
            SlotInfo(s + 1, r.rank, r.input_index, r.doc, weights[s], strat.why(r.rank, s + 1, n))
            for s, r in enumerate(order)
        )
    return PlacementPlan(
        strategy=strat.name or type(strat).__name__,
        slots=slots,
        items=tuple(r.item for r in order),
        dropped=ranking.dropped,
        note=note,
        profile_name=(profile or strat.implied_profile).name,
    )
