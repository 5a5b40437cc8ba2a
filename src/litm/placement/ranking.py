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
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from litm.errors import DuplicateIdError, InvalidScoreError, LitmError
from litm.placement.documents import Doc, to_doc

__all__ = ["Dedup", "Dropped", "RankBy", "Ranked", "Ranking", "content_key", "rank"]

RankBy = Literal["input", "score"]
Dedup = Literal["id", "content"]


@dataclass(frozen=True, slots=True)
class Ranked:
    """A document with its place in the ranking (``rank`` is 1-based) and the caller's object."""

    doc: Doc
    rank: int
    input_index: int
    item: Any


@dataclass(frozen=True, slots=True)
class Dropped:
    """An item removed before placement, and why."""

    doc: Doc
    input_index: int
    reason: str
    item: Any


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


def rank(
    items: list[Any] | tuple[Any, ...],
    *,
    rank_by: RankBy = "input",
    higher_is_better: bool = True,
    dedup: Dedup | None = None,
    top_k: int | None = None,
) -> Ranking:
    """Validate ``items`` and return them ranked, best first.

    Example:
        >>> r = rank([{"text": "a", "score": 0.2}, {"text": "b", "score": 0.9}], rank_by="score")
        >>> [x.doc.text for x in r.ranked]
        ['b', 'a']
    """
    if rank_by not in ("input", "score"):
        raise LitmError(f"rank_by must be 'input' or 'score', got {rank_by!r}")
    if dedup not in (None, "id", "content"):
        raise LitmError(f"dedup must be None, 'id' or 'content', got {dedup!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0):
        raise LitmError(f"top_k must be a non-negative integer, got {top_k!r}")
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        raise LitmError(f"expected a list of documents, got {type(items).__name__}")

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

    ranked = tuple(Ranked(docs[i], r, i, items[i]) for r, i in enumerate(kept, start=1))
    return Ranking(ranked=ranked, dropped=tuple(dropped))


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
