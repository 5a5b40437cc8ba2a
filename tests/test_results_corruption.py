"""The probe and bench result logs (JSON Lines, :mod:`litm.eval._results`) and a run's ``run.json``, damaged at
generated offsets.

A log truncated anywhere opens as the rows whose lines are complete (a torn last line is cut: the
documented recovery of a run killed mid-write), and a resumed run appends after them. A log with bytes
flipped or inserted anywhere either still reads as rows or is an :class:`~litm.errors.EvalError` naming the
file and the line, which leaves the file as it was; never a traceback, never a row silently skipped.
A damaged ``run.json`` reads as a dict or is an ``EvalError``; a resume treats it as recording no settings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litm.errors import EvalError
from litm.eval._results import ResultsLog, changed_settings, read_rows, read_settings

ROWS = [
    {"key": f"trial|needle|512|{d}|{t}|plain", "task": "needle", "kind": "trial", "depth": d, "length": 512,
     "layout": "plain", "hit": (t + int(d * 4)) % 3 != 0, "output": f" answer {t} \u00e9\u4e2d", "seed": t}
    for d in (0.0, 0.5, 1.0) for t in range(3)
]  # fmt: skip
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _log(folder: Path) -> tuple[Path, bytes]:
    path = folder / "results.jsonl"
    path.unlink(missing_ok=True)
    log = ResultsLog(path)
    for row in ROWS:
        log.append(row)
    return path, path.read_bytes()


def _complete_rows(data: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines() if line.strip()]


@SETTINGS
@given(cut=st.integers(min_value=0, max_value=10_000))
def test_a_truncated_log_opens_as_its_complete_rows_and_resumes(tmp_path: Path, cut: int) -> None:
    path, data = _log(tmp_path)
    cut = cut % (len(data) + 1)
    path.write_bytes(data[:cut])
    kept = _complete_rows(data[:cut])
    assert read_rows(path) == kept
    log = ResultsLog(path)
    assert log.rows == kept and path.read_bytes() == data[: data[:cut].rfind(b"\n") + 1]
    # The resumed run writes the missing rows after the kept ones, on lines of their own.
    for row in ROWS:
        log.append(row)
    assert read_rows(path) == ROWS


def _damaged(data: bytes, edits: list[tuple[int, int]], insert: bool) -> bytes:
    out = bytearray(data)
    for at, value in edits:
        at %= len(out) + (1 if insert else 0)
        if insert:
            out[at:at] = bytes([value])
        else:
            out[at] ^= value or 0xFF
    return bytes(out)


@SETTINGS
@given(
    edits=st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), min_size=1,
                   max_size=4),
    insert=st.booleans(),
)  # fmt: skip
def test_flipped_or_inserted_bytes_are_a_typed_error_or_still_rows(
    tmp_path: Path, edits: list[tuple[int, int]], insert: bool
) -> None:
    path, data = _log(tmp_path)
    damaged = _damaged(data, edits, insert)
    path.write_bytes(damaged)
    try:
        rows = read_rows(path)
    except EvalError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        with pytest.raises(EvalError):
            ResultsLog(path)
        assert path.read_bytes() == damaged, "a log that fails to open is left as it was"
        return
    # Still readable: every line that survived is a JSON object, and nothing was skipped.
    lines = [x for x in damaged[: damaged.rfind(b"\n") + 1].split(b"\n") if x.strip()]
    assert len(rows) == len(lines) and all(isinstance(r, dict) for r in rows)


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b'{"key": "a", "text": "caf\xe9"}', "not UTF-8 text"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"key": 1' + b"0" * 5000 + b"}", "Exceeds the limit"),
        (b"17", "a JSON int, not an object"),
        (b'"a row"', "a JSON str, not an object"),
        (b'{"key": "a", "hit": tru', "Expecting value"),
    ],
)
def test_each_kind_of_damaged_line_names_the_file_and_the_line(tmp_path: Path, line: bytes, why: str) -> None:
    path, data = _log(tmp_path)
    lines = data.split(b"\n")
    lines[4] = line
    path.write_bytes(b"\n".join(lines))
    for read in (read_rows, ResultsLog):
        with pytest.raises(EvalError, match=f"results.jsonl:5: corrupt results row .*{why}"):
            read(path)


def test_a_row_without_a_key_cannot_be_resumed(tmp_path: Path) -> None:
    # Every appended row has a key; without one a resume would skip or repeat trials by a key of "None".
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "a"}\n{"task": "needle"}\n', encoding="utf-8")
    with pytest.raises(EvalError, match="row 2 has no 'key'"):
        ResultsLog(path)


RUN = {"identity": {"seed": 0, "k": 3, "layouts": ["plain"], "template": None}, "config": {"lengths": [512, 1024]},
       "model": "m", "litm": "0.2"}  # fmt: skip


@SETTINGS
@given(
    edits=st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), max_size=3),
    cut=st.integers(min_value=0),
)
def test_a_damaged_run_json_is_settings_or_a_typed_error(
    tmp_path: Path, edits: list[tuple[int, int]], cut: int
) -> None:
    path = tmp_path / "run.json"
    data = _damaged(json.dumps(RUN, indent=2).encode(), edits, insert=False)
    path.write_bytes(data[: cut % (len(data) + 1)] if cut % 3 == 0 else data)
    try:
        settings = read_settings(path)
    except EvalError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
        recorded_none = [k for k, v in sorted(RUN["identity"].items()) if v is not None]
        assert changed_settings(path, RUN["identity"]) == recorded_none, "nothing recorded: every set key changed"
        return
    assert isinstance(settings, dict)
    assert isinstance(changed_settings(path, RUN["identity"]), list)


@pytest.mark.parametrize(
    ("data", "why"),
    [(b"[1, 2]", "a JSON list, not an object"), (b'"run"', "a JSON string, not an object"),
     (b'{"identity": "caf\xe9"}', "can't decode byte 0xe9"), (b"[" * 100_000, "nested too deeply"), (b"", "Expecting")],
    ids=["list", "string", "not-utf8", "too-deep", "empty"],
)  # fmt: skip
def test_each_kind_of_damaged_run_json_is_named(tmp_path: Path, data: bytes, why: str) -> None:
    # A list or string used to end in AttributeError ('.get'), undecodable bytes in UnicodeDecodeError.
    path = tmp_path / "run.json"
    path.write_bytes(data)
    with pytest.raises(EvalError, match=f"cannot read .*run.json: .*{why}"):
        read_settings(path)
    assert changed_settings(path, {"seed": 0}) == ["seed"]
