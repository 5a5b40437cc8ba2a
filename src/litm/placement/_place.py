"""``place()`` and ``rank()``: rank the caller's items and put them where the model looks.

The algorithm is the same for every strategy, built-in or custom: validate and rank the items (one set of
rules for scores, ties and duplicates, :mod:`litm.placement._ranking`), ask the strategy for an order
(:meth:`~litm.placement.Strategy.arrange`), and build the :class:`~litm.placement.PlacementPlan`.

Example:
    >>> place(["d1", "d2", "d3", "d4", "d5", "d6"]).items    # DEFAULT_STRATEGY: auto, no profile: edges
    ('d1', 'd3', 'd5', 'd6', 'd4', 'd2')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from litm.errors import InvalidDocumentError
from litm.placement._bulk import quick_rank
from litm.placement._documents import Doc, to_doc
from litm.placement._options import PlacementOptions, RankByOption
from litm.placement._plan import PlacementPlan, SlotInfo
from litm.placement._ranking import Dropped, Ranked, Ranking, rank_indices, relevances
from litm.placement._strategy import Strategy

__all__ = ["place", "rank"]


def place(
    items: Sequence[object],
    strategy: str | Strategy | None = None,
    *,
    rank_by: RankByOption | None = None,
    placement: PlacementOptions | None = None,
) -> PlacementPlan:
    """Rank ``items`` and place them as ``placement`` says; the input list is never mutated.

    ``items`` may be strings, dicts, :class:`~litm.placement.Doc` values, LangChain / LlamaIndex /
    Haystack documents or ``(document, score)`` pairs; ``plan.items`` hands the same objects back in the
    new order, as a tuple. ``placement`` is a :class:`~litm.placement.PlacementOptions` (default: its
    defaults); ``strategy`` and ``rank_by`` are shorthands that override its field of that name. The default
    strategy is ``auto``: the measured ``profile`` when given, else the profile registered for ``model``,
    else ``edges`` (the plan's ``note`` says which). Below ``min_docs`` documents (default: the strategy's
    own, 4 for the built-ins, none for ``langchain``) the rank order is kept: the given order under
    ``rank_by="input"``, the score order under ``rank_by="score"``; the plan says so. ``profile`` drives the
    ``profile`` strategy and, for any strategy, the slot weights the plan reports.

    Example:
        >>> place(["a", "b", "c", "d", "e"], "edges").items
        ('a', 'c', 'e', 'd', 'b')
        >>> from litm.placement import PositionProfile
        >>> place(["a", "b", "c", "d"], placement=PlacementOptions(profile=PositionProfile.recency())).items
        ('d', 'c', 'b', 'a')
        >>> place([{"text": "a", "score": 0.1}, {"text": "b", "score": 0.9}], rank_by="score").note
        '2 document(s) is below min_docs=4: rank order kept'
    """
    options = PlacementOptions.of(placement, strategy=strategy, rank_by=rank_by)
    return _place(items, options.resolve(), options)


def rank(
    items: Sequence[object], *, rank_by: RankByOption | None = None, placement: PlacementOptions | None = None
) -> Ranking:
    """Validate ``items`` and return them ranked, best first (``placement``'s ranking options; its
    ``strategy``, ``min_docs`` and ``profile`` play no part in a ranking).

    Example:
        >>> r = rank([{"text": "a", "score": 0.2}, {"text": "b", "score": 0.9}], rank_by="score")
        >>> [x.doc.text for x in r.ranked]
        ['b', 'a']
    """
    options = PlacementOptions.of(placement, rank_by=rank_by)
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        raise InvalidDocumentError(f"expected a list of documents, got {type(items).__name__}")
    ranks = rank_indices(
        items, rank_by=options.ranking(items), higher_is_better=options.higher_is_better, dedup=options.dedup,
        top_k=options.top_k,
    )  # fmt: skip
    ranked = tuple(
        Ranked(ranks.docs[i], r, i, items[i], ranks.relevance[r - 1]) for r, i in enumerate(ranks.kept, start=1)
    )
    return Ranking(ranked=ranked, dropped=ranks.dropped)


def _place(items: Sequence[object], strategy: Strategy, options: PlacementOptions) -> PlacementPlan:
    """Rank ``items`` and place them by ``strategy``.

    A clean list of one common document type is ranked without building a ``Doc`` per item
    (:mod:`litm.placement._bulk`), and the plan's explanation is computed when first asked for; the
    order, the plan and the errors are those of the full path.
    """
    min_docs, profile, top_k = options.min_docs, options.profile, options.top_k
    higher_is_better, dedup = options.higher_is_better, options.dedup
    threshold = strategy.min_docs if min_docs is None else min_docs
    if type(items) is not list and (
        isinstance(items, (str, bytes)) or not isinstance(items, Iterable) or isinstance(items, Mapping)
    ):
        raise InvalidDocumentError(f"expected a list of documents, got {type(items).__name__}")
    items = list(items)
    rank_by = options.ranking(items)
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
    order: Sequence[int] = range(n) if below else strategy._arranged(n)
    # Below min_docs no rule of the strategy applied, so its own remark would mislead.
    note = f"{n} document(s) is below min_docs={threshold}: rank order kept" if below else strategy.plan_note()
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
        shape = profile or strategy.implied_profile
        weights = shape.slot_weights(n)
        if below:
            reasons = ["rank order kept (below min_docs)"] * n
        else:
            reasons = [strategy.why(r + 1, s + 1, n) for s, r in enumerate(order)]
        # order[s] is the 0-based rank in slot s; kept[r] that rank's input index.
        slots = tuple(
            SlotInfo(s + 1, r + 1, kept[r], doc_at(kept[r]), weights[s], reasons[s], relevance[r])
            for s, r in enumerate(order)
        )
        return slots, dropped, shape.name

    return PlacementPlan.deferred(strategy.name or type(strategy).__name__, placed, note, explain, options.model)


class _LazyDocs:
    """``Doc`` values of a list, read on first access by index (the bulk checks cleared every item)."""

    def __init__(self, items: Sequence[object]) -> None:
        self.items = items
        self.read: dict[int, Doc] = {}

    def __getitem__(self, i: int) -> Doc:
        doc = self.read.get(i)
        if doc is None:
            doc = self.read[i] = to_doc(self.items[i], index=i)
        return doc
