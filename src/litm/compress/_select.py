"""Which sentences survive: the coarse document cut, rank-following budgets, and the fine sentence pick.

Pure arithmetic over counts and scores (no model, no tokenizer), so the rules can be tested exhaustively:

1. **Coarse** (optional): documents in score order are kept while their full texts add up to at most
   ``coarse_factor`` times the budget (the best one always); the rest are dropped whole. The fine stage then
   has a few candidates per kept token, not twenty.
2. **Budgets that follow rank**: each kept document gets a share of the budget proportional to its length
   times a weight that falls linearly with its score rank, from ``1 + rank_weight`` for the best to
   ``1 - rank_weight`` for the worst (LongLLMLingua's "dynamic compression ratio"); a share above the
   document's own length is handed on to the others.
3. **Fine**: within each document, best rank first, sentences are taken by score while they fit its share
   plus what the documents before it left unused; protected sentences (see :mod:`litm.compress._terms`)
   go first. Then whatever budget is left is filled with the best remaining sentences of the kept
   documents, by score.

Example:
    >>> plan = select(
    ...     sentence_tokens=[[5, 5], [5, 5]], sentence_scores=[[0.9, 0.1], [0.2, 0.8]],
    ...     doc_scores=[1.0, 0.5], budget=10, coarse=False,
    ... )
    >>> plan.kept
    [[0], [1]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from litm.errors import InvalidOptionError

__all__ = ["Selection", "rank_budgets", "select"]


@dataclass(frozen=True)
class Selection:
    """Kept sentence indices per document (ascending), each document's score rank and why it was cut."""

    kept: list[list[int]]
    ranks: list[int]
    reasons: list[str]
    shares: list[float]


def rank_budgets(lengths: Sequence[int], budget: float, rank_weight: float) -> list[float]:
    """Split ``budget`` over documents given in rank order: share ~ length x a weight falling with rank.

    No share exceeds its document's length; what would is handed to the others in the same proportions.

    >>> [round(x, 1) for x in rank_budgets([10, 10, 10], 15, 0.5)]
    [7.5, 5.0, 2.5]
    >>> rank_budgets([2, 100], 50, 0.5)
    [2.0, 48.0]
    """
    if not 0 <= rank_weight < 1:
        raise InvalidOptionError(f"rank_weight must be in [0, 1), got {rank_weight!r}")
    m = len(lengths)
    if m == 0:
        return []
    weights = [1.0 + rank_weight * (1 - 2 * j / (m - 1)) if m > 1 else 1.0 for j in range(m)]
    shares = [0.0] * m
    open_ = [j for j in range(m) if lengths[j] > 0]
    left = float(budget)
    # Water-filling: give every open document its proportional share; cap those that overflow and repeat.
    while open_ and left > 1e-9:
        total = sum(weights[j] * lengths[j] for j in open_)
        capped = [j for j in open_ if shares[j] + left * weights[j] * lengths[j] / total >= lengths[j]]
        if not capped:
            for j in open_:
                shares[j] += left * weights[j] * lengths[j] / total
            left = 0.0
            break
        for j in capped:
            left -= lengths[j] - shares[j]
            shares[j] = float(lengths[j])
        open_ = [j for j in open_ if j not in capped]
    return shares


def select(
    *,
    sentence_tokens: Sequence[Sequence[int]],
    sentence_scores: Sequence[Sequence[float]],
    doc_scores: Sequence[float],
    budget: int,
    protected: Sequence[Sequence[bool]] | None = None,
    coarse: bool = True,
    coarse_factor: float = 1.5,
    rank_weight: float = 0.9,
    unit: str = "sentence",
) -> Selection:
    """Choose sentences under ``budget`` tokens (see the module docstring); ``unit="document"`` keeps whole
    documents only, best score first, while they fit (dropping, not shortening)."""
    n = len(sentence_tokens)
    if not (len(sentence_scores) == len(doc_scores) == n) or (protected is not None and len(protected) != n):
        raise InvalidOptionError("select: one entry per document is needed in every argument")
    for toks, scores in zip(sentence_tokens, sentence_scores, strict=True):
        if len(toks) != len(scores):
            raise InvalidOptionError("select: one score per sentence is needed")
    if coarse_factor < 1:
        raise InvalidOptionError(f"coarse_factor must be >= 1, got {coarse_factor!r}")
    guard = protected or [[False] * len(t) for t in sentence_tokens]
    order = sorted(range(n), key=lambda i: (-doc_scores[i], i))
    ranks = [0] * n
    for r, i in enumerate(order, start=1):
        ranks[i] = r
    lengths = [sum(t) for t in sentence_tokens]
    kept: list[list[int]] = [[] for _ in range(n)]
    reasons = [""] * n
    shares = [0.0] * n
    if unit == "document":
        used = 0
        for i in order:
            if used + lengths[i] <= budget:
                kept[i] = list(range(len(sentence_tokens[i])))
                used += lengths[i]
                reasons[i] = "kept whole"
            else:
                reasons[i] = f"dropped: score rank {ranks[i]} of {n}, the whole document does not fit"
        return Selection(kept, ranks, reasons, [float(lengths[i]) if kept[i] else 0.0 for i in range(n)])
    if unit != "sentence":
        raise InvalidOptionError(f"unit must be 'sentence' or 'document', got {unit!r}")

    candidates = list(order)
    if coarse:
        cap = coarse_factor * budget
        acc, cut = 0, len(order)
        for pos, i in enumerate(order):
            if pos > 0 and acc + lengths[i] > cap:
                cut = pos
                break
            acc += lengths[i]
        candidates = order[:cut]
        for i in order[cut:]:
            reasons[i] = f"dropped (coarse): score rank {ranks[i]} of {n}, below the {coarse_factor:g}x budget cut"

    for j, share in zip(candidates, rank_budgets([lengths[i] for i in candidates], budget, rank_weight), strict=True):
        shares[j] = share
    used_total = 0
    carry = 0.0
    for i in candidates:
        allowance = shares[i] + carry
        used = 0
        for s in _pick_order(sentence_scores[i], guard[i]):
            t = sentence_tokens[i][s]
            # The best document always gets its best sentence that fits at all, even past its share: a share
            # is a fraction of tokens, and rounding must never be why the most relevant document is lost.
            first = i == candidates[0] and not kept[i]
            if (used + t <= allowance or first) and used_total + t <= budget:
                kept[i].append(s)
                used += t
                used_total += t
        carry = allowance - used
    # Fill what is left with the best remaining sentences of the candidates, whatever their document.
    rest = [(i, s) for i in candidates for s in range(len(sentence_tokens[i])) if s not in kept[i]]
    rest.sort(key=lambda p: (not guard[p[0]][p[1]], -sentence_scores[p[0]][p[1]], ranks[p[0]], p[1]))
    for i, s in rest:
        t = sentence_tokens[i][s]
        if used_total + t <= budget:
            kept[i].append(s)
            used_total += t
    for i in candidates:
        kept[i].sort()
        total = len(sentence_tokens[i])
        if not kept[i]:
            reasons[i] = f"dropped (fine): score rank {ranks[i]} of {n}, no sentence fit its share"
        elif len(kept[i]) == total:
            reasons[i] = "kept whole"
        else:
            reasons[i] = f"shortened: {len(kept[i])} of {total} sentences, score rank {ranks[i]} of {n}"
    return Selection(kept, ranks, reasons, shares)


def _pick_order(scores: Sequence[float], guard: Sequence[bool]) -> list[int]:
    """Sentence indices, protected first, then by score (ties: earlier first)."""
    return sorted(range(len(scores)), key=lambda s: (not guard[s], -scores[s], s))
