"""Properties of the document input parser (:mod:`litm.util._records`) behind ``litm place``, ``prompt`` and ``fit``.

* Any text, and any bytes read from a file, is a list of records or an :class:`~litm.errors.InputFormatError`
  that names the source (and the line, for JSON Lines); never another exception.
* Records written as JSON Lines, or as one JSON array, read back as themselves, with or without a byte-order
  mark, CRLF line ends and blank lines.
* Every record read can be written out again as UTF-8 JSON (what ``litm place`` prints).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litm.errors import InputFormatError
from litm.util._records import decode_text, parse_json, parse_records, read_records

VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              st.text(st.characters(codec="utf-8"), max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=6), inner, max_size=4)),
    max_leaves=10,
)  # fmt: skip
RECORDS = st.lists(VALUES, max_size=6)
ANY_TEXT = st.one_of(
    st.text(st.characters(codec=None), max_size=60),
    st.lists(st.sampled_from(['{"text": "a"}', "[", "]", "\n", "\ud800", '"\\ud800"', "[1, 2]", "{", "NaN", "1e999",
                              "\ufeff", "\r\n", '"\u2028"', "1" * 5000, "[" * 3000]), max_size=8).map("".join),
)  # fmt: skip


def _writable(records: list[Any]) -> None:
    for record in records:
        json.dumps(record, ensure_ascii=False).encode("utf-8")


@settings(max_examples=400)
@given(ANY_TEXT)
def test_any_text_is_records_or_an_input_format_error(text: str) -> None:
    try:
        records = parse_records(text, source="stdin")
    except InputFormatError as exc:
        assert str(exc).startswith("stdin: ") and "\n" not in str(exc), str(exc)
        return
    assert isinstance(records, list)
    _writable(records)


@given(RECORDS, st.booleans(), st.booleans(), st.booleans())
def test_json_lines_read_back_as_themselves(records: list[Any], bom: bool, crlf: bool, blanks: bool) -> None:
    if records and isinstance(records[0], list):
        records = [{"first": records[0]}, *records[1:]]  # a first line that is an array reads as one JSON array
    end = "\r\n" if crlf else "\n"
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    text = ("\ufeff" if bom else "") + (end + end if blanks else end).join(lines) + end
    assert parse_records(text) == records


@given(RECORDS, st.sampled_from([None, 0, 2]))
def test_a_json_array_reads_back_as_its_items(records: list[Any], indent: int | None) -> None:
    assert parse_records(json.dumps(records, ensure_ascii=False, indent=indent)) == records


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[" * 100_000, "the JSON array is not valid JSON: nested too deeply"),
        ('{"a": 1}\n' + "[" * 100_000, "line 2 is not valid JSON: nested too deeply"),
        ('{"score": 1' + "0" * 5000 + "}", "line 1 is not valid JSON: Exceeds the limit"),
        ('{"text": "\\ud800"}', "line 1 holds an unpaired UTF-16 surrogate escape"),
        ('["\\udfff"]', "the JSON array holds an unpaired UTF-16 surrogate escape"),
        ('{"text": "caf\udce9"}', "not UTF-8 text"),
    ],
    ids=["array-too-deep", "line-too-deep", "integer-too-long", "surrogate-escape", "surrogate-in-array",
         "undecodable-bytes"],
)  # fmt: skip
def test_input_that_used_to_escape_as_another_exception(text: str, fragment: str) -> None:
    # RecursionError and ValueError tracebacks before, or a record that crashed `litm place` when printed.
    with pytest.raises(InputFormatError, match=fragment):
        parse_records(text, source="stdin")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RECORDS, st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=3), st.integers(0))
def test_any_file_bytes_are_records_or_an_input_format_error(
    tmp_path: Path, records: list[Any], flips: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8") or b" ")
    for at, value in flips:
        data[at % len(data)] ^= value or 0xFF
    path = tmp_path / "docs.jsonl"
    path.write_bytes(bytes(data[: cut % (len(data) + 1)]))
    try:
        out = read_records(path)
    except InputFormatError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        return
    _writable(out)


@given(st.binary(max_size=40))
def test_bytes_are_utf8_text_or_an_error_naming_the_offset(data: bytes) -> None:
    try:
        text = decode_text(data, source="stdin")
    except InputFormatError as exc:
        assert "at offset" in str(exc)
        return
    assert text.encode("utf-8") == data


@given(VALUES)
def test_parse_json_reads_what_json_writes(value: Any) -> None:
    assert parse_json(json.dumps(value, ensure_ascii=False)) == value
