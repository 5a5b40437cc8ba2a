"""Turn the caller's list into a relevance ranking: validate, order, deduplicate, cut to ``top_k``.

Ranking is separate from placement: placement only ever sees a clean, ranked list, so every
strategy shares one set of rules for scores, ties and duplicates.

Rules:
- ``rank_by="input"`` trusts the given order (what LangChain and Haystack do).
- ``rank_by="score"`` sorts by score, highest first unless ``higher_is_better=False`` (distances);
  ties keep input order; every item must then carry a score.
- Duplicates (same id, or with ``dedup="content"`` the same normalised text) keep the best-ranked copy.
  Without ``dedup``, a repeated id is an error, because prompts and citations address documents by id.
- Nothing is dropped silently: every removed item is listed in :attr:`Ranking.dropped` with a reason.
- Each ranked document gets a ``relevance`` in [0, 1] from its score, with the direction applied, so
  that nothing downstream (a prompt anchor, a model) reads a raw distance as "higher is better"::

      s   = score if higher_is_better else -score
      rel = (s - min(s)) / (max(s) - min(s))        over the ranked (kept) documents that have a score

  1.0 is the best kept document and 0.0 the worst; all-equal scores give 1.0 to each; an unscored
  document gets ``None``. Only the kept documents count: a duplicate or an item beyond ``top_k`` never
  reaches the prompt, so it does not stretch the scale.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from litm.errors import (
    DuplicateIdError,
    InvalidDocumentError,
    InvalidOptionError,
    InvalidOptionTypeError,
    InvalidScoreError,
)
from litm.placement._documents import Doc, to_doc

__all__ = [
    "Dedup",
    "Dropped",
    "RankBy",
    "RankIndices",
    "Ranked",
    "Ranking",
    "check_count",
    "content_key",
    "rank_indices",
    "relevances",
]

RankBy = Literal["input", "score"]
Dedup = Literal["id", "content"]


@dataclass(frozen=True, slots=True)
class Ranked:
    """A document with its place in the ranking (``rank`` is 1-based) and the caller's object.

    ``relevance`` is the score rescaled to [0, 1] with the direction applied (1.0 = the best ranked
    document; see the module rules), ``None`` when the document has no score; ``doc.score`` keeps the raw
    value. The caller's ``item`` takes no part in hashing (it may be a dict).
    """

    doc: Doc
    rank: int
    input_index: int
    item: object = field(hash=False)
    relevance: float | None = None


@dataclass(frozen=True, slots=True)
class Dropped:
    """An item removed before placement, and why."""

    doc: Doc
    input_index: int
    reason: str
    item: object = field(hash=False)


@dataclass(frozen=True, slots=True)
class Ranking:
    """The ranked documents (best first) and the items that were removed."""

    ranked: tuple[Ranked, ...]
    dropped: tuple[Dropped, ...]


_WS = re.compile(r"\s+")


def content_key(text: str) -> str:
    """A hash of ``text`` that ignores case, Unicode compatibility forms and whitespace runs."""
    norm = _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class RankIndices:
    """What ``rank`` computes, as indices: placement reads these without building a ``Ranked`` per item.

    ``docs`` holds every input item as a :class:`Doc` (by input index), ``kept`` the input indices of the
    ranked documents, best first, and ``relevance`` the relevance of each kept document, in rank order.
    """

    docs: list[Doc]
    kept: list[int]
    relevance: list[float | None]
    dropped: tuple[Dropped, ...]


def rank_indices(
    items: Sequence[object],
    *,
    rank_by: RankBy = "input",
    higher_is_better: bool = True,
    dedup: Dedup | None = None,
    top_k: int | None = None,
) -> RankIndices:
    """The ranking of ``items`` (the module's rules and errors), as indices (see :class:`RankIndices`)."""
    if rank_by not in ("input", "score"):
        raise InvalidOptionError(f"rank_by must be 'input' or 'score', got {rank_by!r}")
    if dedup not in (None, "id", "content"):
        raise InvalidOptionError(f"dedup must be None, 'id' or 'content', got {dedup!r}")
    if top_k is not None:
        check_count("top_k", top_k)
    if not isinstance(items, (list, tuple)):
        raise InvalidDocumentError(f"expected a list of documents, got {type(items).__name__}")

    docs = [to_doc(item, index=i) for i, item in enumerate(items)]
    order = list(range(len(docs)))
    if rank_by == "score":
        _require_scores(docs)
        sign = -1.0 if higher_is_better else 1.0
        # sorted() is stable, so equal scores keep input order.
        order.sort(key=lambda i: sign * (docs[i].score or 0.0))

    kept: list[int] = []
    dropped: list[Dropped] = []
    seen: dict[str, int] = {}
    for i in order:
        doc = docs[i]
        key = content_key(doc.text) if dedup == "content" else doc.id
        if key in seen:
            first = seen[key]
            if dedup is None:
                raise DuplicateIdError(
                    f"items {first} and {i} share the id {doc.id!r}; ids must be unique "
                    "(pass dedup='id' to keep the best-ranked copy)",
                    doc_id=doc.id,
                    indices=(first, i),
                )
            what = "id" if dedup == "id" else "content"
            dropped.append(Dropped(doc, i, f"duplicate {what} of item {first}", items[i]))
            continue
        seen[key] = i
        kept.append(i)

    if top_k is not None and len(kept) > top_k:
        for pos, i in enumerate(kept[top_k:], start=top_k + 1):
            dropped.append(Dropped(docs[i], i, f"rank {pos} is below top_k={top_k}", items[i]))
        kept = kept[:top_k]

    rel = relevances([docs[i].score for i in kept], higher_is_better=higher_is_better)
    return RankIndices(docs, kept, rel, tuple(dropped))


def relevances(scores: Sequence[float | None], *, higher_is_better: bool = True) -> list[float | None]:
    """Scores rescaled to [0, 1], the best 1.0 and the worst 0.0 (see the module rules); ``None`` stays.

    Example:
        >>> relevances([0.12, 0.40, None, 0.25], higher_is_better=False)  # distances: 0.12 is the closest
        [1.0, 0.0, None, 0.5357142857142857]
        >>> relevances([3.0, 3.0])
        [1.0, 1.0]
    """
    present = [s for s in scores if s is not None]
    if not present:
        return [None] * len(scores)
    lo, hi = min(present), max(present)
    span = hi - lo
    if span == 0:
        return [None if s is None else 1.0 for s in scores]
    # Halve everything when the span overflows (scores near +-1.8e308): the ratios are the same.
    half = not math.isfinite(span)
    if half:
        lo, hi, span = lo / 2, hi / 2, hi / 2 - lo / 2
    out: list[float | None] = []
    for s in scores:
        if s is None:
            out.append(None)
            continue
        x = s / 2 if half else s
        out.append((x - lo) / span if higher_is_better else (hi - x) / span)
    return out


def check_count(name: str, value: object) -> int:
    """``value`` as a non-negative ``int`` option, or a typed error naming ``name``.

    Example:
        >>> check_count("top_k", -1)
        Traceback (most recent call last):
        ...
        litm.errors.InvalidOptionError: top_k must be a non-negative integer, got -1
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOptionTypeError(f"{name} must be a non-negative integer, got {value!r}")
    if value < 0:
        raise InvalidOptionError(f"{name} must be a non-negative integer, got {value!r}")
    return value


def _require_scores(docs: list[Doc]) -> None:
    scored = [i for i, d in enumerate(docs) if d.score is not None]
    if len(scored) == len(docs):
        return
    missing = next(i for i, d in enumerate(docs) if d.score is None)
    if scored:
        raise InvalidScoreError(
            f"item {missing} ({docs[missing].id!r}) has no score while item {scored[0]} has one; "
            "rank_by='score' needs a score on every item",
            index=missing,
        )
    raise InvalidScoreError(
        f"rank_by='score' but no item has a score (item {missing}, {docs[missing].id!r}, is the first); "
        "use rank_by='input' to trust the given order",
        index=missing,
    )
