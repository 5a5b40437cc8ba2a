"""The bad-input table: each case gives its documented result or typed error, in Python and in the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest

import litm
from litm.errors import InvalidOptionError, InvalidOptionTypeError, InvalidStrategyError
from litm.placement import Doc, PlacementOptions
from litm.placement._registry import unregister_strategy
from litm.placement._strategies import Edges


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
    ("list-pair-bad-score", [["a", 0.2], ["b", "0.5"]], {}, litm.InvalidScoreError,
     "item 1 (the pair's score): score must be a number, got str"),
    ("list-pair-too-long", [["a", 0.5, 1], ["b", 0.1]], {}, litm.InvalidDocumentError,
     "item 0: a list must be a (document, score) pair, got 3"),
    ("list-text", ["a", {"text": ["b"]}], {}, litm.InvalidDocumentError, "item 1: text must be str, got list"),
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


# Bad option values: (name, kwargs, error, message fragment, CLI args or None, CLI message fragment)
OPTION_CASES: list[tuple[str, dict[str, Any], type[Exception], str, list[str] | None, str]] = [
    ("rank-by", {"rank_by": "best"}, InvalidOptionError, "rank_by must be 'auto', 'input' or 'score', got 'best'",
     ["--rank-by", "best"], "Invalid value for '--rank-by'"),
    ("dedup", {"dedup": "title"}, InvalidOptionError, "dedup must be None, 'id' or 'content'",
     ["--dedup", "title"], "Invalid value for '--dedup'"),
    ("top-k-negative", {"top_k": -1}, InvalidOptionError, "top_k must be a non-negative integer, got -1",
     ["--top-k", "-1"], "Invalid value for '--top-k'"),
    ("top-k-type", {"top_k": "3"}, InvalidOptionTypeError, "top_k must be a non-negative integer, got '3'",
     ["--top-k", "three"], "Invalid value for '--top-k'"),
    ("top-k-bool", {"top_k": True}, InvalidOptionTypeError, "top_k must be a non-negative integer, got True", None, ""),
    ("min-docs-negative", {"min_docs": -2}, InvalidOptionError, "min_docs must be a non-negative integer, got -2",
     ["--min-docs", "-2"], "Invalid value for '--min-docs'"),
    ("min-docs-float", {"min_docs": 2.5}, InvalidOptionTypeError, "min_docs must be a non-negative integer", None, ""),
    ("strategy", {"strategy": "bogus"}, litm.UnknownStrategyError, "unknown placement strategy 'bogus'",
     ["--strategy", "bogus"], "'bogus' is not a placement strategy"),
    ("profile-type", {"strategy": "profile", "profile": [0.9, 0.5]}, InvalidOptionTypeError,
     "profile must be a PositionProfile, got list", None, ""),
]


@pytest.mark.parametrize(
    ("name", "kwargs", "error", "fragment", "cli", "cli_fragment"), OPTION_CASES, ids=[c[0] for c in OPTION_CASES]
)
def test_bad_option_values(
    name: str, kwargs: dict[str, Any], error: type[Exception], fragment: str, cli: list[str] | None, cli_fragment: str
) -> None:
    docs = ["a", "b", "c", "d", "e"]
    # A bad value fails where the options are made, before any document is read.
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")) as err:
        litm.place(docs, placement=litm.PlacementOptions(**kwargs))
    # Each is a LitmError and the built-in a standard-library caller expects.
    assert isinstance(err.value, litm.LitmError) and isinstance(err.value, ValueError)
    if error is InvalidOptionTypeError:
        assert isinstance(err.value, TypeError)
    if cli is not None:
        proc = run_cli(cli, jsonl(docs))
        assert proc.returncode == 2 and proc.stdout == ""
        assert cli_fragment in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("items", "kind"), [("a string", "str"), (None, "NoneType"), ({"text": "a"}, "dict"), (5, "int")]
)
def test_not_a_list_of_documents(items: Any, kind: str) -> None:
    # A bare string used to be placed character by character; None ended in a raw TypeError.
    with pytest.raises(litm.InvalidDocumentError, match=f"expected a list of documents, got {kind}"):
        litm.place(items)


def test_a_record_with_a_null_id_gets_a_default_id() -> None:
    assert litm.place([{"id": None, "text": "a"}], "none").docs[0].id == "doc-1"


def test_doc_with_a_null_id_is_a_typed_error_naming_the_field() -> None:
    # Used to end deep in the prompt code as a raw regex TypeError.
    with pytest.raises(litm.InvalidDocumentError, match="document: id must be str, got NoneType") as err:
        Doc(text="a", id=None)  # type: ignore[arg-type]
    assert err.value.field == "id"


def test_broken_strategies_are_typed_errors() -> None:
    class NotAPermutation(litm.Strategy):
        name = "not-a-permutation"

        def arrange(self, n: int) -> list[int]:
            return [0] * n

    with pytest.raises(InvalidStrategyError, match=r"not a permutation of range\(5\)"):
        litm.place(["a", "b", "c", "d", "e"], NotAPermutation())
    with pytest.raises(InvalidStrategyError, match="the factory must be callable"):
        litm.register_strategy("broken-factory", 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="a strategy name must be a non-empty string"):
        litm.register_strategy("", Edges)
    litm.register_strategy("builds-a-string", lambda: "edges")  # type: ignore[arg-type,return-value]
    try:
        with pytest.raises(InvalidStrategyError, match="the factory built a str, not a Strategy"):
            litm.place(["a"], "builds-a-string")
    finally:
        unregister_strategy("builds-a-string")


def test_cli_pairs_as_json_lists() -> None:
    # JSON has no tuple: a (document, score) pair from a vector store arrives as a two-element list.
    pairs = [[{"id": "far", "text": "x"}, 0.9], [{"id": "near", "text": "y"}, 0.1], ["plain z", 0.4]]
    proc = run_cli(["--rank-by", "score", "--lower-is-better", "--strategy", "none"], jsonl(pairs))
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(x) for x in proc.stdout.splitlines()] == [pairs[1], pairs[2], pairs[0]]


def test_empty_list() -> None:
    plan = litm.place([], "pyramid")
    assert plan.items == () and len(plan) == 0
    proc = run_cli([], "")
    assert proc.returncode == 0 and proc.stdout == ""


def test_one_doc() -> None:
    plan = litm.place(["only"], "pyramid")
    assert plan.items == ("only",) and plan.note and "min_docs" in plan.note
    proc = run_cli(["--explain"], jsonl(["only"]))
    assert proc.returncode == 0 and proc.stdout == '"only"\n'
    assert "below min_docs=4" in proc.stderr


def test_duplicate_ids_with_dedup_keep_best_ranked_copy() -> None:
    items = [
        {"id": "x", "text": "a", "score": 0.2},
        {"id": "y", "text": "b", "score": 0.1},
        {"id": "x", "text": "c", "score": 0.9},
    ]
    plan = litm.place(items, "none", rank_by="score", placement=PlacementOptions(dedup="id", min_docs=0))
    assert [d["text"] for d in plan.items] == ["c", "b"]
    assert [(d.doc.text, d.input_index) for d in plan.dropped] == [("a", 0)]
    assert "duplicate id of item 2" in plan.dropped[0].reason


def test_dedup_content_is_normalised() -> None:
    items = ["Paris  is in France.", "paris is in\nFRANCE.", "Berlin"]
    plan = litm.place(items, "none", placement=PlacementOptions(dedup="content", min_docs=0))
    assert plan.items == ("Paris  is in France.", "Berlin")


def test_top_k_reports_what_it_cut() -> None:
    items = [{"text": t, "score": s} for t, s in [("a", 0.1), ("b", 0.9), ("c", 0.5), ("d", 0.7), ("e", 0.3)]]
    plan = litm.place(items, "none", rank_by="score", placement=PlacementOptions(top_k=3, min_docs=0))
    assert [d["text"] for d in plan.items] == ["b", "d", "c"]
    assert [d.doc.text for d in plan.dropped] == ["e", "a"]
    proc = run_cli(
        ["--rank-by", "score", "--top-k", "3", "--strategy", "none", "--min-docs", "0", "--explain"], jsonl(items)
    )
    assert [json.loads(x)["text"] for x in proc.stdout.splitlines()] == ["b", "d", "c"]
    assert "below top_k=3" in proc.stderr


def test_distances_lower_is_better_and_ties_keep_input_order() -> None:
    items = [{"id": i, "text": i, "score": s} for i, s in [("a", 0.3), ("b", 0.1), ("c", 0.3), ("d", 0.0)]]
    plan = litm.place(items, "none", rank_by="score", placement=PlacementOptions(higher_is_better=False, min_docs=0))
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
    assert out == list(plan.items)


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


def test_cli_default_strategy_and_min_docs_follow_the_library() -> None:
    # No --strategy: auto (no profile: edges), like place(); no --min-docs: the strategy's own threshold
    # (none for langchain).
    names = [f"r{i}" for i in range(1, 7)]
    proc = run_cli([], jsonl(names))
    assert [json.loads(x) for x in proc.stdout.splitlines()] == list(litm.place(names).items)
    assert [json.loads(x) for x in proc.stdout.splitlines()] == ["r1", "r3", "r5", "r6", "r4", "r2"]
    two = run_cli(["--strategy", "langchain"], jsonl(["d1", "d2"]))
    assert two.stdout.splitlines() == ['"d2"', '"d1"']
    scored = run_cli(["--rank-by", "score", "--explain"], jsonl([{"id": "a", "text": "a", "score": 0.1},
                                                                 {"id": "b", "text": "b", "score": 0.9}]))
    assert [json.loads(x)["id"] for x in scored.stdout.splitlines()] == ["b", "a"]  # rank order below min_docs
    assert "below min_docs=4: rank order kept" in scored.stderr
