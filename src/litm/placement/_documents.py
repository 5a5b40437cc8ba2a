"""The document value litm works on, and coercion from the shapes users already hold.

litm never imports LangChain, LlamaIndex or Haystack: their objects are read by duck typing, so a
user can pass whatever their retriever returned and get their own objects back, reordered.

Example:
    >>> from litm.placement._documents import to_doc
    >>> to_doc({"id": "a", "text": "Paris is in France.", "score": 0.9}).score
    0.9
    >>> to_doc("plain text", index=2).id
    'doc-3'
    >>> to_doc(("a (text, score) pair, as vector stores return", 0.12)).score
    0.12
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import cast

from litm.errors import InvalidDocumentError, InvalidScoreError

__all__ = ["Doc", "reader_of", "to_doc", "to_docs"]

#: Reads one item of a known shape as a Doc (the item, its index in the caller's list).
Reader = Callable[[object, int | None], "Doc"]

# Keys read from a mapping, in order of preference; anything else lands in metadata.
_TEXT_KEYS = ("text", "content", "page_content")
_ID_KEYS = ("id", "doc_id")
_SCORE_KEYS = ("score", "relevance_score")
# Keys a mapping's Doc fields are read from (with its text key), so not copied into metadata.
_MAPPING_FIELDS = frozenset(("metadata", "meta", "title", "source", *_ID_KEYS, *_SCORE_KEYS))


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
    metadata: Mapping[str, object] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # The common case, exact built-in types and a finite float or no score, costs five type checks;
        # anything else takes the full check below (which also converts an int score to float).
        score = self.score
        if (
            type(self.text) is str
            and type(self.id) is str
            and (score is None or (type(score) is float and score - score == 0.0))  # False for inf and nan
            and (self.title is None or type(self.title) is str)
            and (self.source is None or type(self.source) is str)
            and type(self.metadata) is dict
        ):
            return
        self._check()

    def _check(self) -> None:
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

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict with the fields that are set."""
        out: dict[str, object] = {"id": self.id, "text": self.text}
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


def _from_mapping(item: object, index: int | None) -> Doc:
    item = cast(Mapping[str, object], item)  # the reader of mappings: only ever called with one
    # Plain loops rather than next(generator): this runs once per item of every dict-based call.
    text_key = None
    for key in _TEXT_KEYS:
        if key in item:
            text_key = key
            break
    if text_key is None:
        raise InvalidDocumentError(
            f"{_label(index)}: no text field (expected one of {', '.join(_TEXT_KEYS)}); keys are {sorted(item)}",
            index=index,
        )
    text = item[text_key]
    if type(text) is not str:
        text = _text(text, label=_label(index), index=index)
    meta = _metadata(item.get("metadata") or item.get("meta"), index)
    doc_id = None
    for key in _ID_KEYS:
        value = item.get(key)
        if value is not None:
            doc_id = value if type(value) is str else str(value)
            break
    score = None
    for key in _SCORE_KEYS:
        value = item.get(key)
        if value is not None:
            score = check_score(value, label=_label(index), index=index)
            break
    for k, v in item.items():
        if k not in _MAPPING_FIELDS and k != text_key:
            meta[k] = v
    return Doc(
        text=text,
        id=doc_id if doc_id is not None else _id_from_meta(meta, index),
        score=score,
        title=_opt_str(item.get("title", meta.get("title"))),
        source=_opt_str(item.get("source", meta.get("source"))),
        metadata=meta,
    )


def _metadata(value: object, index: int | None) -> dict[str, object]:
    """A document's metadata as a new dict (the caller's stays untouched); not a mapping: a typed error."""
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidDocumentError(
            f"{_label(index)}: metadata must be a mapping, got {type(value).__name__}", index=index, field="metadata"
        )
    return {str(k): v for k, v in value.items()}


def _id_from_meta(meta: Mapping[str, object], index: int | None) -> str:
    for key in ("id", "doc_id", "document_id"):
        if meta.get(key) is not None:
            return str(meta[key])
    return _default_id(index)


def _meta_score(meta: Mapping[str, object], label: str, index: int | None) -> float | None:
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
    ``PlacementOptions(rank_by="score", higher_is_better=False)``.

    ``index`` is the item's position in the caller's list, used for default ids (``doc-1``, ``doc-2``,
    ...) and for error messages. Raises :class:`~litm.errors.InvalidDocumentError` for anything else.
    """
    if isinstance(item, (tuple, list)):
        return _from_pair(item, index)
    return _read(item, index)


def _from_pair(pair: tuple[object, ...] | list[object], index: int | None) -> Doc:
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
    # A list of documents is nearly always of one type: after the first item, its reader is looked up by
    # type instead of probed for again. A reader that meets an instance lacking an attribute its type's
    # first instance had (AttributeError) falls back to the full probe, so the result never depends on it.
    kind = type(item)
    if kind is str:
        return Doc(text=item, id=_default_id(index))  # type: ignore[arg-type]
    if kind is dict:
        return _from_mapping(item, index)
    reader = _READERS.get(kind)
    if reader is not None:
        try:
            return reader(item, index)
        except AttributeError:
            pass
    reader = _reader_for(item, index)
    if len(_READERS) < _MAX_READERS:
        _READERS[kind] = reader
    return reader(item, index)


def reader_of(item: object) -> str | None:
    """Which reader :func:`to_doc` uses for ``item``'s type: ``str``, ``doc``, ``mapping``, ``langchain``,
    or None for the others (pairs, LlamaIndex and Haystack objects, and what it cannot read at all).

    >>> reader_of("text"), reader_of({"text": "t"}), reader_of(("text", 0.5))
    ('str', 'mapping', None)
    """
    kind = type(item)
    if kind is str:
        return "str"
    if kind is dict:
        return "mapping"
    if isinstance(item, (tuple, list)) or item is None:
        return None
    reader = _READERS.get(kind)
    if reader is None:
        try:
            reader = _reader_for(item, None)
        except InvalidDocumentError:
            return None
        if len(_READERS) < _MAX_READERS:
            _READERS[kind] = reader
    return _READER_NAMES.get(reader)


def _reader_for(item: object, index: int | None) -> Reader:
    """The reader of ``item``'s shape, or :class:`~litm.errors.InvalidDocumentError` for none."""
    if item is None:
        raise InvalidDocumentError(f"{_label(index)} is None; expected a document", index=index)
    if isinstance(item, Doc):
        return _from_doc
    if isinstance(item, str):
        return _from_str
    if isinstance(item, Mapping):
        return _from_mapping
    # LangChain Document: page_content + metadata, optional id (langchain-core >= 0.2.11). Checked first:
    # it is the commonest input, and probing a pydantic model for missing attributes is slow.
    if hasattr(item, "page_content"):
        return _from_langchain
    # LlamaIndex NodeWithScore: the text lives on the wrapped node, the score on the wrapper.
    if hasattr(item, "node") and hasattr(item, "score"):
        return _from_node_with_score
    # A bare LlamaIndex node (TextNode, Document): what a node parser or a docstore hands out, unscored.
    if hasattr(item, "get_content") and hasattr(item, "node_id"):
        return _from_bare_node
    # Haystack 2.x Document: content, id, score, meta.
    if hasattr(item, "content") and hasattr(item, "meta"):
        return _from_haystack
    raise InvalidDocumentError(
        f"{_label(index)}: cannot read a {type(item).__name__} as a document "
        "(expected str, dict, Doc, a (document, score) pair, or a LangChain/LlamaIndex/Haystack document)",
        index=index,
    )


# Each reader is only called on an item of its shape (see _reader_for), so it reads it as such.


def _from_doc(item: object, index: int | None) -> Doc:
    return cast(Doc, item)


def _from_str(item: object, index: int | None) -> Doc:
    return Doc(text=cast(str, item), id=_default_id(index))


def _attr(item: object, name: str) -> object:
    """``item.name``: an AttributeError (an instance without it) sends :func:`_read` back to the full probe."""
    return getattr(item, name)


def _from_langchain(item: object, index: int | None) -> Doc:
    label = _label(index)
    meta = _metadata(getattr(item, "metadata", None), index)
    raw_id = getattr(item, "id", None)
    return Doc(
        text=_text(_attr(item, "page_content"), label=label, index=index),
        id=str(raw_id) if raw_id else _id_from_meta(meta, index),
        score=_meta_score(meta, label, index),
        title=_opt_str(meta.get("title")),
        source=_opt_str(meta.get("source")),
        metadata=meta,
    )


def _from_node_with_score(item: object, index: int | None) -> Doc:
    raw_score = _attr(item, "score")
    score = None if raw_score is None else check_score(raw_score, label=_label(index), index=index)
    return _from_node(_attr(item, "node"), score, index)


def _from_bare_node(item: object, index: int | None) -> Doc:
    return _from_node(item, None, index)


def _from_haystack(item: object, index: int | None) -> Doc:
    label = _label(index)
    meta = _metadata(getattr(item, "meta", None), index)
    raw_id = getattr(item, "id", None)
    raw_score = getattr(item, "score", None)
    return Doc(
        text=_text(_attr(item, "content"), label=label, index=index),
        id=str(raw_id) if raw_id else _id_from_meta(meta, index),
        score=None if raw_score is None else check_score(raw_score, label=label, index=index),
        title=_opt_str(meta.get("title")),
        source=_opt_str(meta.get("source") or meta.get("file_path")),
        metadata=meta,
    )


#: Readers by the exact type of the items they read; bounded, as a program meets few document types.
_READERS: dict[type, Reader] = {}
_MAX_READERS = 64
_READER_NAMES: dict[Reader, str] = {
    _from_doc: "doc",
    _from_str: "str",
    _from_mapping: "mapping",
    _from_langchain: "langchain",
}


def _from_node(node: object, score: float | None, index: int | None) -> Doc:
    label = _label(index)
    getter = getattr(node, "get_content", None)
    text = getter() if callable(getter) else getattr(node, "text", None)
    meta = _metadata(getattr(node, "metadata", None), index)
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
