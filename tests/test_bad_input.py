"""The bad-input table: each case gives its documented result or typed error, in Python and in the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest

import litm


def run_cli(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "litm", "place", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def jsonl(items: list[Any]) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


# (name, items, kwargs, expected error type or None, message fragment)
ERROR_CASES: list[tuple[str, list[Any], dict[str, Any], type[Exception], str]] = [
    ("none-in-list", ["a", None, "c"], {}, litm.InvalidDocumentError, "item 1 is None"),
    (
        "nan-score",
        [{"text": "a", "score": 1.0}, {"text": "b", "score": math.nan}],
        {},
        litm.InvalidScoreError,
        "item 1: score is nan",
    ),
    ("inf-score", [{"text": "a", "score": math.inf}], {}, litm.InvalidScoreError, "item 0: score is inf"),
    (
        "mixed-scores",
        [{"text": "a", "score": 1.0}, {"text": "b"}],
        {"rank_by": "score"},
        litm.InvalidScoreError,
        "item 1 ('doc-2') has no score",
    ),
    ("no-scores", [{"text": "a"}, {"text": "b"}], {"rank_by": "score"}, litm.InvalidScoreError, "no item has a score"),
    (
        "duplicate-ids",
        [{"id": "x", "text": "a"}, {"id": "x", "text": "b"}],
        {},
        litm.DuplicateIdError,
        "items 0 and 1 share the id 'x'",
    ),
    (
        "non-string-text",
        [{"text": "a"}, {"text": 42}],
        {},
        litm.InvalidDocumentError,
        "item 1: text must be str, got int",
    ),
    ("missing-text", [{"title": "no body"}], {}, litm.InvalidDocumentError, "item 0: no text field"),
    ("bool-score", [{"text": "a", "score": True}], {}, litm.InvalidScoreError, "score must be a number"),
    ("string-score", [{"text": "a", "score": "0.5"}], {}, litm.InvalidScoreError, "score must be a number, got str"),
]

CLI_FLAGS = {"rank_by": "--rank-by"}


@pytest.mark.parametrize(("name", "items", "kwargs", "error", "fragment"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_python_error(
    name: str, items: list[Any], kwargs: dict[str, Any], error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        litm.place(items, "edges", **kwargs)
    assert issubclass(error, litm.LitmError)


@pytest.mark.parametrize(("name", "items", "kwargs", "error", "fragment"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_cli_error(name: str, items: list[Any], kwargs: dict[str, Any], error: type[Exception], fragment: str) -> None:
    # JSON has no NaN/Infinity literal, but Python's json writes (and reads) them, so litm must still refuse them.
    args = [x for k, v in kwargs.items() for x in (CLI_FLAGS[k], v)]
    proc = run_cli(args, jsonl(items))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], proc.stderr


def test_empty_list() -> None:
    plan = litm.place([], "pyramid")
    assert plan.items == [] and len(plan) == 0
    proc = run_cli([], "")
    assert proc.returncode == 0 and proc.stdout == ""


def test_one_doc() -> None:
    plan = litm.place(["only"], "pyramid")
    assert plan.items == ["only"] and plan.note and "min_docs" in plan.note
    proc = run_cli(["--explain"], jsonl(["only"]))
    assert proc.returncode == 0 and proc.stdout == '"only"\n'
    assert "below min_docs=4" in proc.stderr


def test_duplicate_ids_with_dedup_keep_best_ranked_copy() -> None:
    items = [
        {"id": "x", "text": "a", "score": 0.2},
        {"id": "y", "text": "b", "score": 0.1},
        {"id": "x", "text": "c", "score": 0.9},
    ]
    plan = litm.place(items, "none", rank_by="score", dedup="id", min_docs=0)
    assert [d["text"] for d in plan.items] == ["c", "b"]
    assert [(d.doc.text, d.input_index) for d in plan.dropped] == [("a", 0)]
    assert "duplicate id of item 2" in plan.dropped[0].reason


def test_dedup_content_is_normalised() -> None:
    items = ["Paris  is in France.", "paris is in\nFRANCE.", "Berlin"]
    plan = litm.place(items, "none", dedup="content", min_docs=0)
    assert plan.items == ["Paris  is in France.", "Berlin"]


def test_top_k_reports_what_it_cut() -> None:
    items = [{"text": t, "score": s} for t, s in [("a", 0.1), ("b", 0.9), ("c", 0.5), ("d", 0.7), ("e", 0.3)]]
    plan = litm.place(items, "none", rank_by="score", top_k=3, min_docs=0)
    assert [d["text"] for d in plan.items] == ["b", "d", "c"]
    assert [d.doc.text for d in plan.dropped] == ["e", "a"]
    proc = run_cli(
        ["--rank-by", "score", "--top-k", "3", "--strategy", "none", "--min-docs", "0", "--explain"], jsonl(items)
    )
    assert [json.loads(x)["text"] for x in proc.stdout.splitlines()] == ["b", "d", "c"]
    assert "below top_k=3" in proc.stderr


def test_distances_lower_is_better_and_ties_keep_input_order() -> None:
    items = [{"id": i, "text": i, "score": s} for i, s in [("a", 0.3), ("b", 0.1), ("c", 0.3), ("d", 0.0)]]
    plan = litm.place(items, "none", rank_by="score", higher_is_better=False, min_docs=0)
    assert [d["id"] for d in plan.items] == ["d", "b", "a", "c"]
    proc = run_cli(["--rank-by", "score", "--lower-is-better", "--strategy", "none"], jsonl(items))
    assert [json.loads(x)["id"] for x in proc.stdout.splitlines()] == ["d", "b", "a", "c"]


def test_ten_thousand_docs() -> None:
    items = [{"id": f"d{i}", "text": f"text {i}", "score": (i * 7919) % 10007 / 10007} for i in range(10_000)]
    plan = litm.place(items, "pyramid", rank_by="score")
    assert len(plan.items) == 10_000
    assert plan.slots[-1].rank == 1 and plan.slots[0].rank == 2
    proc = run_cli(["--rank-by", "score", "--strategy", "pyramid"], jsonl(items))
    assert proc.returncode == 0
    out = [json.loads(x) for x in proc.stdout.splitlines()]
    assert out == plan.items


def test_cli_json_array_input_and_malformed_input() -> None:
    proc = run_cli(["--strategy", "edges", "--min-docs", "0"], json.dumps(["a", "b", "c"]))
    assert proc.stdout.splitlines() == ['"a"', '"c"', '"b"']
    bad = run_cli([], '{"text": "a"}\n{not json}\n')
    assert bad.returncode == 2 and "line 2 is not valid JSON" in bad.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "litm", "place", "/nonexistent/docs.jsonl"], capture_output=True, text=True, timeout=60
    )
    assert missing.returncode == 2 and "file not found" in missing.stderr


def test_cli_bad_option_values_exit_2() -> None:
    assert run_cli(["--strategy", "bogus"], "").returncode == 2
    assert run_cli(["--top-k", "-1"], "").returncode == 2
    assert run_cli(["--dedup", "title"], "").returncode == 2


def test_jsonl_with_raw_line_separator_characters() -> None:
    # U+2028 and U+0085 are legal raw inside JSON strings; only "\n" ends a JSON Lines record.
    text = '{"id": "a", "text": "one\u2028two\u0085three"}\r\n{"id": "b", "text": "x"}\n'
    proc = run_cli(["--strategy", "none"], text)
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x)["text"] for x in proc.stdout.split("\n") if x] == ["one\u2028two\u0085three", "x"]
