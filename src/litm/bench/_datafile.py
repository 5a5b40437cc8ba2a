"""Your own benchmark data: one question per JSON Lines record, checked field by field.

``litm bench --data FILE.jsonl`` runs the benchmark on these records (``docs/bench-data.md`` is the full
reference). A record::

    {"id": "q17", "question": "Who founded the company that makes the Model 3?",
     "answers": ["Martin Eberhard", "Marc Tarpenning"], "type": "bridge",
     "documents": [
       {"id": "d1", "title": "Tesla Model 3", "text": "The Model 3 is made by Tesla, Inc. ...", "gold": true},
       {"id": "d2", "title": "Tesla, Inc.", "text": "Tesla was founded in 2003 by Martin Eberhard ...",
        "gold": true, "score": 11.2, "rank": 2},
       {"title": "Ford Model T", "text": "The Model T is an automobile ...", "score": 3.1}]}

* ``question`` (non-empty string) and ``answers`` (non-empty list of non-empty strings: every accepted form).
* ``documents``: objects with ``text`` (non-empty string) and optionally ``id`` (string or integer, unique in
  the record), ``title`` (string), ``gold`` (true for a document the answer needs; any number of them, at
  least one), ``score`` (a finite number, higher is better) and ``rank`` (the retriever's rank, 1 = best).
  A run at ``k`` documents uses every gold and the ``k - golds`` best-ranked others; a record with fewer than
  ``k`` documents, or with ``k`` golds or more, is left out of that run and counted as left out.
* Optional: ``id`` (unique in the file; default: the line number), ``type`` (a question type for breakdowns)
  and ``metadata`` (anything, kept out of the prompts), at the record and the document level.

The retriever order used by the placement strategies is ``rank`` when every document has one, else ``score``
(descending, ties in file order) when every document has one, else the file order; ``litm bench --retriever``
re-ranks the documents with a real retriever instead (:mod:`litm.bench._retrieval`). A mistake is a
:class:`~litm.errors.DataFileError` naming the file, the line and the field; nothing is silently dropped.

Example:
    >>> record = {"question": "Capital of France?", "answers": ["Paris"],
    ...           "documents": [{"text": "Paris is the capital of France.", "gold": True}, {"text": "Lyon."}]}
    >>> r = parse_record(record, line=1)
    >>> r.qid, [d.gold for d in r.documents], r.order
    ('1', [True, False], 'file')
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from litm.bench._data import Passage, QAItem
from litm.errors import DataFileError

__all__ = ["DataDoc", "DataRecord", "parse_record", "read_records", "record_dict", "to_items"]

_RECORD_KEYS = frozenset({"id", "question", "answers", "documents", "type", "metadata"})
_DOC_KEYS = frozenset({"id", "title", "text", "gold", "score", "rank", "metadata"})


@dataclass(frozen=True)
class DataDoc:
    """One validated document of a record."""

    id: str
    title: str
    text: str
    gold: bool
    score: float | None = None
    rank: int | None = None


@dataclass(frozen=True)
class DataRecord:
    """One validated record: documents in the retriever's order (``order`` says where that order came from)."""

    qid: str
    question: str
    answers: tuple[str, ...]
    documents: tuple[DataDoc, ...]
    kind: str = ""
    order: str = "file"  # "rank", "score", "file", or a retriever's name

    @property
    def golds(self) -> list[DataDoc]:
        return [d for d in self.documents if d.gold]


class _Where:
    """Builds errors that name the file, the line and the field."""

    def __init__(self, path: str, line: int) -> None:
        self.path = path
        self.line = line

    def error(self, field: str, message: str) -> DataFileError:
        place = f"{self.path}:{self.line}" if self.path else f"line {self.line}"
        return DataFileError(f"{place}: {field}: {message}", path=self.path, line=self.line, field=field)


def _text(where: _Where, field: str, value: object, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise where.error(field, f"expected a non-empty string, got {_show(value)}")
    _unicode(where, field, value)
    return value


def _unicode(where: _Where, field: str, value: str) -> None:
    # A "\ud800" escape is valid JSON but half a UTF-16 pair: no prompt, file or terminal can hold it.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise where.error(field, f"holds an unpaired surrogate ({value[exc.start]!a}): not text") from None


def _id(where: _Where, field: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
        raise where.error(field, f"expected a string or an integer, got {_show(value)}")
    if isinstance(value, str):
        _unicode(where, field, value)
    return str(value)


def _finite(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer past the largest float: a score no float comparison can order
        return False


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _unknown(where: _Where, field: str, keys: Iterable[str], allowed: frozenset[str]) -> None:
    extra = sorted(set(keys) - allowed)
    if extra:
        what = "document" if field else "record"
        # A key that is empty or holds spaces, colons or control characters is quoted, so the message still reads.
        name = extra[0] if re.fullmatch(r"[\w.-]+", extra[0]) else repr(extra[0])
        raise where.error(f"{field}{name}", f"unknown field; a {what} has {', '.join(sorted(allowed))}")


def _doc(where: _Where, i: int, raw: object, qid: str) -> DataDoc:
    field = f"documents[{i}]"
    if not isinstance(raw, Mapping):
        raise where.error(field, f"expected an object with 'text', got {_show(raw)}")
    _unknown(where, f"{field}.", raw, _DOC_KEYS)
    doc_id = _id(where, f"{field}.id", raw.get("id", f"{qid}-{i + 1}"))
    gold = raw.get("gold", False)
    if not isinstance(gold, bool):
        raise where.error(f"{field}.gold", f"expected true or false, got {_show(gold)}")
    score = raw.get("score")
    if score is not None and not _finite(score):
        raise where.error(f"{field}.score", f"expected a finite number, got {_show(score)}")
    rank = raw.get("rank")
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 1):
        raise where.error(f"{field}.rank", f"expected an integer >= 1, got {_show(rank)}")
    return DataDoc(
        doc_id,
        _text(where, f"{field}.title", raw.get("title"), required=False),
        _text(where, f"{field}.text", raw.get("text")),
        gold,
        None if score is None else float(score),
        rank,
    )


def _order(where: _Where, docs: list[DataDoc]) -> tuple[list[DataDoc], str]:
    """The documents in retriever order, and which field gave it."""
    ranks = [d.rank for d in docs]
    if any(r is not None for r in ranks):
        if any(r is None for r in ranks):
            missing = next(i for i, r in enumerate(ranks) if r is None)
            raise where.error(f"documents[{missing}].rank", "missing: give a rank to every document or to none")
        if len(set(ranks)) != len(ranks):
            raise where.error("documents.rank", f"ranks repeat: {ranks}")
        return sorted(docs, key=lambda d: d.rank or 0), "rank"
    scores = [d.score for d in docs]
    if all(s is not None for s in scores):
        return sorted(docs, key=lambda d: -(d.score or 0.0)), "score"
    return docs, "file"


def parse_record(raw: object, *, line: int, path: str = "") -> DataRecord:
    """Validate one record (a parsed JSON object); raises :class:`~litm.errors.DataFileError`."""
    where = _Where(path, line)
    if not isinstance(raw, Mapping):
        raise where.error("record", f"expected a JSON object, got {_show(raw)}")
    if "answer" in raw and "answers" not in raw:
        raise where.error("answer", 'use "answers": a list of every accepted answer')
    _unknown(where, "", raw, _RECORD_KEYS)
    qid = _id(where, "id", raw.get("id", line))
    question = _text(where, "question", raw.get("question"))
    answers = raw.get("answers")
    if not isinstance(answers, list) or not answers:
        raise where.error("answers", f"expected a non-empty list of strings, got {_show(answers)}")
    for i, a in enumerate(answers):
        _text(where, f"answers[{i}]", a)
    docs_raw = raw.get("documents")
    if not isinstance(docs_raw, list) or not docs_raw:
        raise where.error("documents", f"expected a non-empty list of documents, got {_show(docs_raw)}")
    docs = [_doc(where, i, d, qid) for i, d in enumerate(docs_raw)]
    seen: set[str] = set()
    for i, d in enumerate(docs):
        if d.id in seen:
            raise where.error(f"documents[{i}].id", f"repeats {d.id!r}")
        seen.add(d.id)
    if not any(d.gold for d in docs):
        raise where.error("documents", 'no gold document: mark the ones the answer needs with "gold": true')
    ordered, order = _order(where, docs)
    kind = _text(where, "type", raw.get("type"), required=False)
    return DataRecord(qid, question, tuple(str(a) for a in answers), tuple(ordered), kind, order)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with path.open(encoding="utf-8") as fh:
            yield from enumerate(fh, start=1)
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such data file", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataFileError(f"{path}: cannot read: {exc}", path=str(path)) from None


def read_records(path: str | Path) -> list[DataRecord]:
    """Every record of a JSON Lines data file, validated (blank lines are skipped; ids must be unique)."""
    p = Path(path)
    out: list[DataRecord] = []
    ids: dict[str, int] = {}
    for n, text in _lines(p):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataFileError(f"{p}:{n}: not valid JSON ({exc.msg})", path=str(p), line=n) from None
        except RecursionError:
            raise DataFileError(f"{p}:{n}: not valid JSON (nested too deeply)", path=str(p), line=n) from None
        except ValueError as exc:  # an integer longer than sys.get_int_max_str_digits()
            raise DataFileError(f"{p}:{n}: not valid JSON ({exc})", path=str(p), line=n) from None
        record = parse_record(raw, line=n, path=str(p))
        if record.qid in ids:
            raise _Where(str(p), n).error("id", f"repeats the id of line {ids[record.qid]} ({record.qid!r})")
        ids[record.qid] = n
        out.append(record)
    if not out:
        raise DataFileError(f"{p}: no records", path=str(p))
    return out


def to_items(records: Sequence[DataRecord], k: int) -> tuple[list[QAItem], list[str]]:
    """Benchmark items of ``k`` documents: every gold plus the best-ranked distractors; and the ids left out.

    A record is left out (not cut) when it has fewer than ``k`` documents or at least ``k`` golds.
    """
    items: list[QAItem] = []
    skipped: list[str] = []
    for r in records:
        golds = r.golds
        if len(r.documents) < k or len(golds) >= k:
            skipped.append(r.qid)
            continue
        best = [d for d in r.documents if not d.gold][: k - len(golds)]
        keep = {id(d) for d in golds} | {id(d) for d in best}
        kept = [d for d in r.documents if id(d) in keep]
        ranks = tuple(i for i, d in enumerate(kept, start=1) if d.gold)
        passages = [Passage(d.id, d.title, d.text) for d in kept]
        gold_p = [p for p, d in zip(passages, kept, strict=True) if d.gold]
        others = [p for p, d in zip(passages, kept, strict=True) if not d.gold]
        scores = tuple(d.score for d in kept if not d.gold and d.score is not None)
        items.append(
            QAItem(
                qid=r.qid, question=r.question, answers=r.answers, gold=gold_p[0], distractors=tuple(others),
                distractor_scores=scores if len(scores) == len(others) else (), more_golds=tuple(gold_p[1:]),
                gold_ranks=ranks, kind=r.kind,
            )
        )  # fmt: skip
    return items, skipped


def record_dict(record: DataRecord) -> dict[str, object]:
    """A record back in the file format (documents in retriever order, with their ranks)."""
    docs = [
        {"id": d.id, "title": d.title, "text": d.text, "gold": d.gold, "rank": i}
        | ({"score": d.score} if d.score is not None else {})
        for i, d in enumerate(record.documents, start=1)
    ]
    out: dict[str, object] = {"id": record.qid, "question": record.question, "answers": list(record.answers)}
    return out | ({"type": record.kind} if record.kind else {}) | {"documents": docs}
