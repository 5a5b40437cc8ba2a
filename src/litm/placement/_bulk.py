"""Ranking a clean list without a :class:`~litm.placement.Doc` per item: placement's fast path.

``place()`` needs, to order a list, each item's score (for ``rank_by="score"``) and the assurance that
reading the items would raise nothing: ids unique, texts strings, scores finite numbers, and so on. For a
list of one common type (strings, ``Doc`` values, dicts, LangChain documents, and ``(document, score)``
tuples of one of those with a float score, as vector stores return them) those checks run here as a
few whole-list passes of C-level builtins (``map`` with ``attrgetter``, ``set(map(type, ...))``) instead
of building and validating one object per item. Anything these checks cannot clear (a mixed list, a
duplicate id, an integer score, a ``None`` where a dict was expected, ``dedup="content"``) returns
``None`` and the caller takes the full path of :mod:`litm.placement._ranking`, which raises the errors it
always raised; so both paths give the same order, the same plan and the same errors.

Example:
    >>> quick_rank(["a", "b", "c"], rank_by="input", higher_is_better=True, dedup=None, top_k=2)
    QuickRank(kept=[0, 1], scores=None, beyond=[2])
    >>> quick_rank([("a", 0.2), ("b", 0.9)], rank_by="score", higher_is_better=True, dedup=None, top_k=None)
    QuickRank(kept=[1, 0], scores=[0.2, 0.9], beyond=[])
    >>> quick_rank(["a", ("b", 0.5)], rank_by="input", higher_is_better=True, dedup=None, top_k=None) is None
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter, methodcaller
from typing import Any, cast

from litm.placement._documents import Doc, reader_of

__all__ = ["QuickRank", "quick_rank"]

_NONE = type(None)
_ID_KEYS = frozenset(("id", "doc_id", "document_id"))
_SCORE_KEYS = frozenset(("score", "relevance_score"))
_META_KEYS = frozenset(("metadata", "meta"))
_DICT_ID_KEYS = frozenset(("doc_id", "document_id"))
_page_content = attrgetter("page_content")
_metadata = attrgetter("metadata")
_id = attrgetter("id")
_score = attrgetter("score")
_get_text = methodcaller("get", "text")
_get_id = methodcaller("get", "id")
_get_score = methodcaller("get", "score")
_get_metadata = methodcaller("get", "metadata")
_get_meta = methodcaller("get", "meta")
_first = itemgetter(0)
_second = itemgetter(1)


class _Unclean:
    """What a check returns when it cannot clear the list (the full path decides)."""


_UNCLEAN = _Unclean()
#: The scores by input index (``None`` entries for unscored items), or ``None`` when no item has a score.
Scores = list[float | None] | None
Checked = Scores | _Unclean


@dataclass(frozen=True)
class QuickRank:
    """Input indices of the ranked items (best first), their scores by input index, and those beyond top_k."""

    kept: list[int]
    scores: Scores
    beyond: list[int]


def _unique(ids: list[Any], n: int) -> bool:
    return set(map(type, ids)) == {str} and len(set(ids)) == n


def _finite_floats(scores: list[Any]) -> bool:
    return set(map(type, scores)) == {float} and all(map(math.isfinite, scores))


def _strings(items: Sequence[Any], n: int) -> Checked:
    return None  # default ids doc-1, doc-2, ... are unique; no scores


def _docs(items: Sequence[Any], n: int) -> Checked:
    # A Doc validated its fields when it was made, and it is frozen.
    if len(set(map(_id, items))) != n:
        return _UNCLEAN
    scores: list[float | None] = list(map(_score, items))
    return None if scores.count(None) == n else scores


def _mapping_scores(maps: Sequence[Any], n: int) -> Checked:
    if all(map(_SCORE_KEYS.isdisjoint, maps)):
        return None
    scores = list(map(_get_score, maps))
    return scores if _finite_floats(scores) else _UNCLEAN


def _langchain(items: Sequence[Any], n: int) -> Checked:
    try:
        texts, ids, metas = list(map(_page_content, items)), list(map(_id, items)), list(map(_metadata, items))
    except AttributeError:  # an older langchain-core without Document.id: the full path reads it
        return _UNCLEAN
    if set(map(type, texts)) != {str} or set(map(type, metas)) != {dict}:
        return _UNCLEAN
    if ids.count(None) == n:
        if not all(map(_ID_KEYS.isdisjoint, metas)):
            return _UNCLEAN  # ids from the metadata: the full path reads and checks them
    elif not (_unique(ids, n) and "" not in ids):
        return _UNCLEAN
    return _mapping_scores(metas, n)


def _dicts(items: Sequence[Any], n: int) -> Checked:
    if set(map(type, map(_get_text, items))) != {str}:
        return _UNCLEAN  # no "text" key (the full path reads content / page_content), or not a string
    if not all(map(_META_KEYS.isdisjoint, items)):
        nested = {*map(type, map(_get_metadata, items)), *map(type, map(_get_meta, items))}
        if not nested <= {dict, _NONE}:
            return _UNCLEAN
    ids = list(map(_get_id, items))
    if ids.count(None) == n:
        if not (all(map(_DICT_ID_KEYS.isdisjoint, items)) and all(map(_META_KEYS.isdisjoint, items))):
            return _UNCLEAN  # an id may come from doc_id or the metadata
    elif not _unique(ids, n):
        return _UNCLEAN
    return _mapping_scores(items, n)


_CHECKS: dict[str, Callable[[Sequence[Any], int], Checked]] = {
    "str": _strings,
    "doc": _docs,
    "mapping": _dicts,
    "langchain": _langchain,
}


def _checked(items: Sequence[Any], kinds: set[type], n: int) -> Checked:
    kind = reader_of(items[0])
    check = _CHECKS.get(kind) if kind is not None and (kind != "mapping" or dict in kinds) else None
    if check is None or (kind == "doc" and Doc not in kinds):
        return _UNCLEAN
    return check(items, n)


def _pairs(items: Sequence[Any], n: int) -> Checked:
    # (document, score) pairs, as vector stores return them: the documents are checked like a plain list,
    # and the pair's score replaces the document's own, so only a float in every pair clears the list.
    if set(map(len, items)) != {2}:
        return _UNCLEAN
    docs, scores = list(map(_first, items)), list(map(_second, items))
    doc_kinds = set(map(type, docs))
    # A nested pair has no reader of its own, so _checked refuses it with the rest.
    if len(doc_kinds) > 1 or not _finite_floats(scores) or isinstance(_checked(docs, doc_kinds, n), _Unclean):
        return _UNCLEAN
    return scores


def quick_rank(
    items: Sequence[Any], *, rank_by: str, higher_is_better: bool, dedup: str | None, top_k: int | None
) -> QuickRank | None:
    """The ranking of ``items`` when the bulk checks clear them, else None (see the module docstring)."""
    if dedup not in (None, "id") or rank_by not in ("input", "score"):
        return None
    if top_k is not None and (type(top_k) is not int or top_k < 0):
        return None
    n = len(items)
    kinds = set(map(type, items))
    if len(kinds) > 1:
        return None
    scores: Scores = None
    if n:
        checked = _pairs(items, n) if kinds == {tuple} else _checked(items, kinds, n)
        if isinstance(checked, _Unclean):
            return None
        scores = checked
    if rank_by == "score":
        if scores is None or None in scores:
            return None  # the full path names the first item without a score
        given = cast(list[float], scores)  # no None in it: checked just above
        kept = sorted(range(n), key=given.__getitem__, reverse=higher_is_better)  # stable: ties keep input order
    else:
        kept = list(range(n))
    if top_k is not None and n > top_k:
        return QuickRank(kept[:top_k], scores, kept[top_k:])
    return QuickRank(kept, scores, [])
