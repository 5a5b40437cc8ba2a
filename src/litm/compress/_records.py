"""Compress question records (what ``litm compress`` reads): one question and its documents per record.

A record is a JSON object ``{"question": str, "documents": [...]}`` (``docs`` is accepted too); each document
is anything :func:`~litm.placement._documents.to_doc` reads (a string, or an object with ``text`` /
``content`` / ``page_content`` and optional ``id``, ``title``, ``source``, ``score``). A record that breaks
this is a :class:`~litm.errors.CompressionError` naming its number, before any scoring is done.

Example:
    >>> rows = [{"question": "When did it open?", "documents": ["It opened in 1889. It is tall."]}]
    >>> [out.to_dict()["docs"][0]["text"] for out in compress_records(rows, tokenizer=len, target=30,
    ...                                                                scorer="retriever")]
    ['It opened in 1889.']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from litm.compress._compress import CompressOptions, compress
from litm.compress._result import Compressed
from litm.compress._scorers import Scorer, get_scorer
from litm.errors import CompressionError, LitmError
from litm.models import Model

__all__ = ["compress_records"]


def _parts(record: object, number: int) -> tuple[str, list[object]]:
    if not isinstance(record, Mapping):
        raise CompressionError(f"record {number}: a record is an object with question and documents")
    question = record.get("question")
    documents = record.get("documents", record.get("docs"))
    if not isinstance(question, str):
        raise CompressionError(f"record {number}: 'question' must be a string")
    if not isinstance(documents, list):
        raise CompressionError(f"record {number}: 'documents' must be a list")
    return question, documents


def compress_records(
    records: Iterable[object],
    *,
    tokenizer: object,
    target: int | None = None,
    ratio: float | None = None,
    scorer: str | Scorer = "embed",
    model: str | Model | None = None,
    options: CompressOptions | None = None,
) -> Iterator[Compressed]:
    """:func:`~litm.compress.compress` each record in turn, with the same goal, scorer and options.

    The scorer is built once for all records, so the embedder or scoring model loads once. An error in a
    record names it (``record N: ...``) and keeps its type.
    """
    the_scorer = get_scorer(scorer, model=model)
    for number, record in enumerate(records, start=1):
        question, documents = _parts(record, number)
        try:
            yield compress(
                documents, question, tokenizer=tokenizer, target=target, ratio=ratio, scorer=the_scorer,
                options=options,
            )  # fmt: skip
        except LitmError as exc:
            try:
                named = type(exc)(f"record {number}: {exc}")
            except TypeError:  # an error class with required fields: keep the message, say which record
                named = CompressionError(f"record {number}: {exc}")
            raise named from None
