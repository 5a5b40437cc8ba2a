"""Properties of the benchmark data file parser (:mod:`litm.bench._datafile`), for any JSON and any bytes.

* Any JSON value is a valid record or a :class:`~litm.errors.DataFileError` that names the line and a field.
* Any file content (bytes, truncated or flipped lines included) reads as records or is that error.
* A valid record written back with ``record_dict`` parses to the same record (its retriever order is kept).
* A required field removed, or given a value of another JSON type, is an error naming that field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litm.bench._datafile import DataRecord, parse_record, read_records, record_dict
from litm.errors import DataFileError

TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=20).filter(lambda s: s.strip())
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10),
                    st.just(10**400), st.just("\ud800"))  # fmt: skip
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                    max_leaves=12)  # fmt: skip
FINITE = st.floats(allow_nan=False, allow_infinity=False)
FILE_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """A valid record: at least one gold document, unique document ids, optional scores or ranks."""
    n = draw(st.integers(min_value=1, max_value=6))
    golds = draw(st.lists(st.booleans(), min_size=n, max_size=n).filter(any))
    order = draw(st.sampled_from(["file", "score", "rank"]))
    ranks = draw(st.permutations(range(1, n + 1)))
    docs: list[dict[str, Any]] = []
    for i in range(n):
        doc: dict[str, Any] = {"id": f"d{i}", "text": draw(TEXT), "gold": golds[i]}
        if draw(st.booleans()):
            doc["title"] = draw(st.text(max_size=10))
        if order == "score":
            doc["score"] = draw(st.one_of(st.integers(-(10**6), 10**6), FINITE))
        if order == "rank":
            doc["rank"] = ranks[i]
        docs.append(doc)
    record: dict[str, Any] = {"question": draw(TEXT), "answers": draw(st.lists(TEXT, min_size=1, max_size=3)),
                              "documents": docs}  # fmt: skip
    if draw(st.booleans()):
        record["id"] = draw(st.one_of(TEXT, st.integers()))
    if draw(st.booleans()):
        record["type"] = draw(st.text(max_size=10))
    return record


def _check_error(exc: DataFileError, line: int) -> None:
    assert exc.line == line and exc.field and "\n" not in str(exc), str(exc)


@settings(max_examples=300)
@given(JSON)
def test_any_json_value_is_a_record_or_a_data_file_error(value: Any) -> None:
    try:
        record = parse_record(value, line=3)
    except DataFileError as exc:
        _check_error(exc, 3)
        return
    assert isinstance(record, DataRecord) and any(d.gold for d in record.documents)
    for text in (record.question, *record.answers, *(d.text for d in record.documents)):
        text.encode("utf-8")  # nothing that cannot be written out


@given(records())
def test_a_valid_record_round_trips_through_record_dict(raw: dict[str, Any]) -> None:
    record = parse_record(raw, line=1)
    again = parse_record(json.loads(json.dumps(record_dict(record))), line=1)
    assert again.order == "rank" and [d.rank for d in again.documents] == list(range(1, len(raw["documents"]) + 1))
    assert (again.qid, again.question, again.answers, again.kind) == (record.qid, record.question, record.answers,
                                                                      record.kind)  # fmt: skip
    assert [(d.id, d.title, d.text, d.gold, d.score) for d in again.documents] == [
        (d.id, d.title, d.text, d.gold, d.score) for d in record.documents
    ]


@given(records(), st.sampled_from(["question", "answers", "documents"]), st.one_of(st.just("drop"), SCALARS))
def test_a_required_field_missing_or_mistyped_names_the_field(raw: dict[str, Any], field: str, value: Any) -> None:
    if value == "drop":
        del raw[field]
    elif field == "question" and isinstance(value, str) and value.strip() and value != "\ud800":
        return  # still a valid question
    else:
        raw[field] = value
    with pytest.raises(DataFileError) as err:
        parse_record(raw, line=5)
    _check_error(err.value, 5)
    assert err.value.field.startswith(field), err.value.field


@given(records(), st.integers(min_value=0, max_value=5), st.sampled_from(["text", "gold", "score", "rank", "id"]),
       SCALARS)  # fmt: skip
def test_a_bad_document_field_names_the_document(raw: dict[str, Any], i: int, field: str, value: Any) -> None:
    docs = raw["documents"]
    i %= len(docs)
    docs[i][field] = value
    try:
        parse_record(raw, line=2)
    except DataFileError as exc:
        _check_error(exc, 2)
        assert exc.field.startswith(("documents", "id")), exc.field


@FILE_SETTINGS
@given(
    st.lists(records(), min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), max_size=3),
    st.integers(min_value=0),
)
def test_any_file_content_reads_as_records_or_a_data_file_error(
    tmp_path: Path, recs: list[dict[str, Any]], flips: list[tuple[int, int]], cut: int
) -> None:
    for n, rec in enumerate(recs):
        rec["id"] = f"q{n}"
    data = bytearray("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs).encode("utf-8"))
    for at, value in flips:
        data[at % len(data)] ^= value or 0xFF
    path = tmp_path / "data.jsonl"
    path.write_bytes(bytes(data[: cut % (len(data) + 1)]))
    try:
        out = read_records(path)
    except DataFileError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    assert out and all(isinstance(r, DataRecord) for r in out)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b"[" * 100_000, "nested too deeply"),
        (b'{"question": "q", "answers": [1' + b"0" * 5000 + b"]}", "Exceeds the limit"),
        (b'{"question": "\\ud800", "answers": ["a"], "documents": [{"text": "t", "gold": true}]}',
         "question: holds an unpaired surrogate"),
        (b'{"question": "q", "answers": ["a"], "documents": [{"text": "t", "gold": true, "score": 1' + b"0" * 400
         + b"}]}", "score: expected a finite number"),
        (b'{"question": "q", "answers": ["a"], "documents": [{"text": "t", "gold": true, "id": "\\udfff"}]}',
         "documents[0].id: holds an unpaired surrogate"),
    ],
    ids=["nested-too-deep", "integer-too-long", "surrogate-question", "score-past-float", "surrogate-doc-id"],
)  # fmt: skip
def test_lines_that_used_to_raise_untyped_errors(tmp_path: Path, line: bytes, fragment: str) -> None:
    # Before: RecursionError, ValueError and OverflowError tracebacks, or a surrogate that crashed the first write.
    path = tmp_path / "data.jsonl"
    path.write_bytes(line + b"\n")
    with pytest.raises(DataFileError, match=r"data\.jsonl:1: .*" + fragment.replace("[", r"\[").replace("]", r"\]")):
        read_records(path)
