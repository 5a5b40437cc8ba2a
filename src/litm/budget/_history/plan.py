"""The budget plan: how much of the recent history to keep verbatim.

A compacted history is ``head + summary + units[cut:] (+ instruction)`` (units:
:mod:`litm.budget._history.units`). The plan picks the earliest of the allowed ``cuts`` that still fits
next to a summary of ``summary_tokens``; the last allowed cut is the unit where the latest turn starts
(that turn is always kept: a compaction that drops the question is no compaction). Requests are counted whole, tools and
system included, and compared by their bound (:func:`~litm.budget._margin.upper_of`). The search is binary
over the unit boundaries, so planning a long agent history costs about ``log2(units)`` counts.

Example:
    >>> from litm.models.tokenizers import TokenCount
    >>> sizes = [50, 40, 30, 20, 10]  # tokens of the request that keeps units[cut:], for cut = 0..4
    >>> plan_cut([1, 2, 3, 4], lambda cut: TokenCount(sizes[cut], True), budget=45, summary_tokens=10)
    2
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from litm.budget._margin import margin_of, upper_of
from litm.models.tokenizers import TokenCount

__all__ = ["plan_cut"]


def plan_cut(cuts: Sequence[int], measure: Callable[[int], TokenCount], budget: int, summary_tokens: int) -> int:
    """The earliest of ``cuts`` (ascending) whose request, with room for the summary, fits ``budget``.

    ``measure(cut)`` counts the request that keeps ``units[cut:]`` next to a placeholder summary. When not
    even the last cut leaves room for a summary of ``summary_tokens``, the plan keeps only the latest turn
    and the summary has to shrink (or go).
    """

    def fits(cut: int) -> bool:
        counted = measure(cut)
        return upper_of(counted) + math.ceil(summary_tokens * (1.0 + margin_of(counted))) <= budget

    if len(cuts) == 1 or not fits(cuts[-1]):
        return cuts[-1]
    lo, hi = -1, len(cuts) - 1  # invariant: cuts[hi] fits; cuts[lo] does not (lo = -1: not tried)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(cuts[mid]):
            hi = mid
        else:
            lo = mid
    return cuts[hi]
