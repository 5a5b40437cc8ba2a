"""The :class:`Strategy` base class: how a placement strategy maps ranks to slots, and how it is applied.

A strategy only decides an order (:meth:`Strategy.arrange`) and explains it (:meth:`Strategy.why`);
:meth:`Strategy.place` does the rest for every strategy alike: rank the caller's items, arrange them,
and build the :class:`~litm.placement._plan.PlacementPlan`. Keeping the algorithm on the base class means
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

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from litm.errors import InvalidDocumentError, InvalidStrategyError
from litm.placement._bulk import quick_rank
from litm.placement._documents import Doc, to_doc
from litm.placement._plan import PlacementPlan, SlotInfo
from litm.placement._profile import PositionProfile
from litm.placement._ranking import Dedup, Dropped, RankBy, check_count, rank_indices, relevances

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

    def plan_note(self) -> str | None:
        """A remark every plan of this strategy carries as its ``note`` (``auto`` states its rule); None: none."""
        return None

    def __call__(self, items: Sequence[Any], **kwargs: Any) -> PlacementPlan:
        return self.place(items, **kwargs)

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
        """Rank ``items`` and place them by this strategy (see :func:`litm.placement.place`).

        A clean list of one common document type is ranked without building a ``Doc`` per item
        (:mod:`litm.placement._bulk`), and the plan's explanation is computed when first asked for; the
        order, the plan and the errors are those of the full path.
        """
        threshold = self.min_docs if min_docs is None else check_count("min_docs", min_docs)
        if type(items) is not list and (
            isinstance(items, (str, bytes)) or not isinstance(items, Iterable) or isinstance(items, Mapping)
        ):
            raise InvalidDocumentError(f"expected a list of documents, got {type(items).__name__}")
        items = list(items)
        quick = quick_rank(items, rank_by=rank_by, higher_is_better=higher_is_better, dedup=dedup, top_k=top_k)
        full = None
        if quick is None:
            full = rank_indices(items, rank_by=rank_by, higher_is_better=higher_is_better, dedup=dedup, top_k=top_k)
            kept = full.kept
        else:
            kept = quick.kept
        n = len(kept)
        below = n < threshold
        # Too few documents for reordering to help: keep the rank order (the retriever's, or the scores').
        order: Sequence[int] = range(n) if below else self._arranged(n)
        # Below min_docs no rule of the strategy applied, so its own remark would mislead.
        note = f"{n} document(s) is below min_docs={threshold}: rank order kept" if below else self.plan_note()
        identity = (quick is not None and rank_by == "input") or kept == list(range(n))
        placed = tuple(map(items.__getitem__, order if identity else [kept[r] for r in order]))

        def explain() -> tuple[tuple[SlotInfo, ...], tuple[Dropped, ...], str | None]:
            doc_at: Callable[[int], Doc]
            if full is not None:
                doc_at, relevance, dropped = full.docs.__getitem__, full.relevance, full.dropped
            else:
                assert quick is not None
                doc_at = _LazyDocs(items).__getitem__
                scores = quick.scores
                relevance = relevances(
                    [None if scores is None else scores[i] for i in kept], higher_is_better=higher_is_better
                )
                dropped = tuple(
                    Dropped(doc_at(i), i, f"rank {pos} is below top_k={top_k}", items[i])
                    for pos, i in enumerate(quick.beyond, start=len(kept) + 1)
                )
            shape = profile or self.implied_profile
            weights = shape.slot_weights(n)
            if below:
                reasons = ["rank order kept (below min_docs)"] * n
            else:
                reasons = [self.why(r + 1, s + 1, n) for s, r in enumerate(order)]
            # order[s] is the 0-based rank in slot s; kept[r] that rank's input index.
            slots = tuple(
                SlotInfo(s + 1, r + 1, kept[r], doc_at(kept[r]), weights[s], reasons[s], relevance[r])
                for s, r in enumerate(order)
            )
            return slots, dropped, shape.name

        return PlacementPlan.deferred(self.name or type(self).__name__, placed, note, explain)


class _LazyDocs:
    """``Doc`` values of a list, read on first access by index (the bulk checks cleared every item)."""

    def __init__(self, items: list[Any]) -> None:
        self.items = items
        self.read: dict[int, Doc] = {}

    def __getitem__(self, i: int) -> Doc:
        doc = self.read.get(i)
        if doc is None:
            doc = self.read[i] = to_doc(self.items[i], index=i)
        return doc
