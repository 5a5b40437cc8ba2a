"""The document value litm works on, and coercion from the shapes users already hold.

litm never imports LangChain, LlamaIndex or Haystack: their objects are read by duck typing, so a
user can pass whatever their retriever returned and get their own objects back, reordered.

Example:
    >>> from litm.placement.documents import to_doc
    >>> to_doc({"id": "a", "text": "Paris is in France.", "score": 0.9}).score
    0.9
    >>> to_doc("plain text", index=2).id
    'doc-3'
    >>> to_doc(("a (text, score) pair, as vector stores return", 0.12)).score
    0.12
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from litm.errors import InvalidDocumentError, InvalidScoreError

__all__ = ["Doc", "to_doc", "to_docs"]

# Keys read from a mapping, in order of preference; anything else lands in metadata.
_TEXT_KEYS = ("text", "content", "page_content")
_ID_KEYS = ("id", "doc_id")
_SCORE_KEYS = ("score", "relevance_score")


@dataclass(frozen=True, slots=True)
class Doc:
    """One retrieved document: its text plus what a prompt anchor or a ranking needs.

    ``score`` is ``None`` when the retriever gave none. ``metadata`` holds every other field the
    source object carried, so nothing the user passed is lost. Every field is checked on construction:
    a wrong type raises :class:`~litm.errors.InvalidDocumentError` naming the field (``error.field``),
    and a score that is not a finite number raises :class:`~litm.errors.InvalidScoreError`. A ``Doc`` is
    a value: equal fields compare equal, and it hashes by everything but ``metadata`` (a dict).

    Example:
        >>> Doc(text="Paris is in France.", id=None)
        Traceback (most recent call last):
        ...
        litm.errors.InvalidDocumentError: document: id must be str, got NoneType
    """

    text: str
    id: str
    score: float | None = None
    title: str | None = None
    source: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise InvalidDocumentError(f"document: id must be str, got {type(self.id).__name__}", field="id")
        label = f"document {self.id!r}"
        for name in ("text", "title", "source"):
            value = getattr(self, name)
            if not isinstance(value, str) and (name == "text" or value is not None):
                kind = "str" if name == "text" else "str or None"
                raise InvalidDocumentError(f"{label}: {name} must be {kind}, got {type(value).__name__}", field=name)
        if not isinstance(self.metadata, Mapping):
            raise InvalidDocumentError(
                f"{label}: metadata must be a mapping, got {type(self.metadata).__name__}", field="metadata"
            )
        if self.score is not None:
            object.__setattr__(self, "score", check_score(self.score, label=label))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with the fields that are set."""
        out: dict[str, Any] = {"id": self.id, "text": self.text}
        for key in ("score", "title", "source"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


def check_score(value: object, *, label: str, index: int | None = None) -> float:
    """Return ``value`` as a finite float or raise :class:`InvalidScoreError` naming ``label``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidScoreError(f"{label}: score must be a number, got {type(value).__name__}", index=index)
    score = float(value)
    if not math.isfinite(score):
        raise InvalidScoreError(f"{label}: score is {score!r}; scores must be finite", index=index)
    return score


def _default_id(index: int | None) -> str:
    return f"doc-{(index or 0) + 1}"


def _label(index: int | None) -> str:
    return "document" if index is None else f"item {index}"


def _text(value: object, *, label: str, index: int | None) -> str:
    if not isinstance(value, str):
        raise InvalidDocumentError(f"{label}: text must be str, got {type(value).__name__}", index=index, field="text")
    return value


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _from_mapping(item: Mapping[str, Any], index: int | None) -> Doc:
    label = _label(index)
    text_key = next((k for k in _TEXT_KEYS if k in item), None)
    if text_key is None:
        raise InvalidDocumentError(
            f"{label}: no text field (expected one of {', '.join(_TEXT_KEYS)}); keys are {sorted(item)}",
            index=index,
        )
    text = _text(item[text_key], label=label, index=index)
    meta: dict[str, Any] = dict(item.get("metadata") or item.get("meta") or {})
    id_key = next((k for k in _ID_KEYS if item.get(k) is not None), None)
    doc_id = str(item[id_key]) if id_key else _id_from_meta(meta, index)
    score_key = next((k for k in _SCORE_KEYS if item.get(k) is not None), None)
    score = check_score(item[score_key], label=label, index=index) if score_key else None
    used = {text_key, "metadata", "meta", "title", "source", *(_ID_KEYS), *(_SCORE_KEYS)}
    meta.update({k: v for k, v in item.items() if k not in used})
    return Doc(
        text=text,
        id=doc_id,
        score=score,
        title=_opt_str(item.get("title", meta.get("title"))),
        source=_opt_str(item.get("source", meta.get("source"))),
        metadata=meta,
    )


def _id_from_meta(meta: Mapping[str, Any], index: int | None) -> str:
    for key in ("id", "doc_id", "document_id"):
        if meta.get(key) is not None:
            return str(meta[key])
    return _default_id(index)


def _meta_score(meta: Mapping[str, Any], label: str, index: int | None) -> float | None:
    for key in _SCORE_KEYS:
        if meta.get(key) is not None:
            return check_score(meta[key], label=label, index=index)
    return None


def to_doc(item: object, *, index: int | None = None) -> Doc:
    """Read one item as a :class:`Doc`.

    Accepts a ``Doc``; a ``str``; a mapping with ``text``/``content``/``page_content`` and optional
    ``id``, ``score``, ``title``, ``source``, ``metadata``; a LangChain ``Document``
    (``page_content`` + ``metadata``); a LlamaIndex ``NodeWithScore`` (``node`` + ``score``) or bare
    ``TextNode``; a Haystack ``Document`` (``content``, ``id``, ``score``, ``meta``); or a
    ``(document, score)`` pair of any of those, which is what LangChain's
    ``similarity_search_with_score()`` returns (a two-element list, as JSON writes a pair, is read the
    same way). The pair's score replaces one the document carries. Most
    vector stores return a *distance* there (lower is closer): rank such pairs with
    ``rank_by="score", higher_is_better=False``.

    ``index`` is the item's position in the caller's list, used for default ids (``doc-1``, ``doc-2``,
    ...) and for error messages. Raises :class:`~litm.errors.InvalidDocumentError` for anything else.
    """
    if isinstance(item, (tuple, list)):
        return _from_pair(item, index)
    return _read(item, index)


def _from_pair(pair: tuple[Any, ...] | list[Any], index: int | None) -> Doc:
    label = _label(index)
    if len(pair) != 2 or isinstance(pair[0], (tuple, list)):
        raise InvalidDocumentError(
            f"{label}: a {type(pair).__name__} must be a (document, score) pair, got {len(pair)} element(s)",
            index=index,
        )
    doc = _read(pair[0], index)
    raw = pair[1]
    score = None if raw is None else check_score(raw, label=f"{label} (the pair's score)", index=index)
    return replace(doc, score=score) if score != doc.score else doc


def _read(item: object, index: int | None) -> Doc:
    label = _label(index)
    if item is None:
        raise InvalidDocumentError(f"{label} is None; expected a document", index=index)
    if isinstance(item, Doc):
        return item
    if isinstance(item, str):
        return Doc(text=item, id=_default_id(index))
    if isinstance(item, Mapping):
        return _from_mapping(item, index)
    # LangChain Document: page_content + metadata, optional id (langchain-core >= 0.2.11). Checked first:
    # it is the commonest input, and probing a pydantic model for missing attributes is slow.
    if hasattr(item, "page_content"):
        meta = dict(getattr(item, "metadata", None) or {})
        raw_id = getattr(item, "id", None)
        return Doc(
            text=_text(item.page_content, label=label, index=index),
            id=str(raw_id) if raw_id else _id_from_meta(meta, index),
            score=_meta_score(meta, label, index),
            title=_opt_str(meta.get("title")),
            source=_opt_str(meta.get("source")),
            metadata=meta,
        )
    # LlamaIndex NodeWithScore: the text lives on the wrapped node, the score on the wrapper.
    if hasattr(item, "node") and hasattr(item, "score"):
        raw_score = item.score
        return _from_node(
            item.node, None if raw_score is None else check_score(raw_score, label=label, index=index), index
        )
    # A bare LlamaIndex node (TextNode, Document): what a node parser or a docstore hands out, unscored.
    if hasattr(item, "get_content") and hasattr(item, "node_id"):
        return _from_node(item, None, index)
    # Haystack 2.x Document: content, id, score, meta.
    if hasattr(item, "content") and hasattr(item, "meta"):
        meta = dict(getattr(item, "meta", None) or {})
        raw_id = getattr(item, "id", None)
        raw_score = getattr(item, "score", None)
        return Doc(
            text=_text(item.content, label=label, index=index),
            id=str(raw_id) if raw_id else _id_from_meta(meta, index),
            score=None if raw_score is None else check_score(raw_score, label=label, index=index),
            title=_opt_str(meta.get("title")),
            source=_opt_str(meta.get("source") or meta.get("file_path")),
            metadata=meta,
        )
    raise InvalidDocumentError(
        f"{label}: cannot read a {type(item).__name__} as a document "
        "(expected str, dict, Doc, a (document, score) pair, or a LangChain/LlamaIndex/Haystack document)",
        index=index,
    )


def _from_node(node: Any, score: float | None, index: int | None) -> Doc:
    label = _label(index)
    getter = getattr(node, "get_content", None)
    text = getter() if callable(getter) else getattr(node, "text", None)
    meta = dict(getattr(node, "metadata", None) or {})
    raw_id = getattr(node, "node_id", None) or getattr(node, "id_", None)
    return Doc(
        text=_text(text, label=label, index=index),
        id=str(raw_id) if raw_id else _id_from_meta(meta, index),
        score=score,
        title=_opt_str(meta.get("title")),
        source=_opt_str(meta.get("source") or meta.get("file_name")),
        metadata=meta,
    )


def to_docs(items: object) -> list[Doc]:
    """Read every item of a list (or other iterable, not a string) as a :class:`Doc`."""
    if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
        raise InvalidDocumentError(f"expected a list of documents, got {type(items).__name__}")
    return [to_doc(item, index=i) for i, item in enumerate(items)]
